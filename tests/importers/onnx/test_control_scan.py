"""ONNX Scan against onnxruntime: a cumulative sum over a symbolic length, and
every combination of scan_input_axes / scan_input_directions /
scan_output_axes / scan_output_directions, both over a static axis (unrolled
at import) and a symbolic one (a LOOP op, unrolled after binding). Two scan
inputs on different axes, and a body capturing an outer initializer and an
outer input, are covered too; so is the error for a body whose scan output
changes shape with the iteration.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from tosaconv.diagnostics import ConversionError

from .control_models import check_everywhere, node, op_names, subgraph
from .harness import F32, const, convert, info, make_model, rand


def _cumsum_body(extra=(), scan_out="sum_out"):
    nodes = [node("Add", ["sum_in", "next"], ["sum_out"])] + list(extra)
    return subgraph("body", nodes, [info("sum_in", F32, None), info("next", F32, None)],
                    [info("sum_out", F32, None), info(scan_out, F32, None)])


def _scan_model(dims, body, state_dims, **attrs):
    nodes = [node("Scan", ["init", "x"], ["final", "stack"], body=body, num_scan_inputs=1, **attrs)]
    inputs = [info("init", F32, list(state_dims)), info("x", F32, list(dims))]
    return make_model(nodes, inputs, [info("final", F32, None), info("stack", F32, None)])


def _feeds(init_shape, *shapes):
    return [{"init": rand(*init_shape(s), seed=10 + i), "x": rand(*s, seed=i)} for i, s in enumerate(shapes)]


def test_cumulative_sum_over_a_symbolic_length():
    body = _cumsum_body([node("Identity", ["sum_out"], ["scan"])], scan_out="scan")
    model = _scan_model(["L", "C"], body, ["C"])
    assert "LOOP" in op_names(convert(model))
    statics = check_everywhere(model, _feeds(lambda s: s[1:], (4, 3), (2, 5), (1, 2)))
    assert all("LOOP" not in op_names(s) for s in statics)


def test_cumulative_sum_over_a_static_length_unrolls_at_import():
    body = _cumsum_body([node("Identity", ["sum_out"], ["scan"])], scan_out="scan")
    model = _scan_model([4, "C"], body, ["C"])
    assert "LOOP" not in op_names(convert(model))
    check_everywhere(model, _feeds(lambda s: s[1:], (4, 3), (4, 1)))


DIRECTIONS = list(itertools.product([0, 1], [0, 1], [0, 1, -1], [0, 1, -2]))


@pytest.mark.parametrize("length", ["L", 3], ids=["symbolic", "static"])
@pytest.mark.parametrize("in_dir,out_dir,in_axis,out_axis", DIRECTIONS, ids=str)
def test_axes_and_directions_match_onnxruntime(length, in_dir, out_dir, in_axis, out_axis):
    # x is [L, 2] (axis 0) or [2, L] (axis 1 / -1); each slice [2] is accumulated; scan output is sum*2.
    dims = [length, 2] if in_axis == 0 else [2, length]
    body = _cumsum_body([node("Add", ["sum_out", "sum_out"], ["twice"])], scan_out="twice")
    model = _scan_model(dims, body, [2], scan_input_axes=[in_axis], scan_input_directions=[in_dir],
                        scan_output_axes=[out_axis], scan_output_directions=[out_dir])
    shapes = [(3, 2), (3, 2)] if in_axis == 0 else [(2, 3), (2, 3)]
    if length == "L":
        shapes[1] = (5, 2) if in_axis == 0 else (2, 5)
    check_everywhere(model, _feeds(lambda s: (2,), *shapes))


@pytest.mark.parametrize("length", ["L", 4], ids=["symbolic", "static"])
def test_two_scan_inputs_on_different_axes_and_captured_values(length):
    # out_t = state + a[t, :] * b[:, t] + w  (w an outer initializer, z an outer input)
    nodes = [node("Mul", ["a_t", "b_t"], ["p"]), node("Add", ["s_in", "p"], ["q"]), node("Add", ["q", "w"], ["s_out"]),
             node("Mul", ["s_out", "z"], ["o"])]
    body = subgraph("body", nodes, [info("s_in", F32, None), info("a_t", F32, None), info("b_t", F32, None)],
                    [info("s_out", F32, None), info("o", F32, None)])
    scan = node("Scan", ["s0", "a", "b"], ["s", "os"], body=body, num_scan_inputs=2, scan_input_axes=[0, 1],
                scan_input_directions=[0, 1], scan_output_axes=[1])
    inputs = [info("s0", F32, [3]), info("a", F32, [length, 3]), info("b", F32, [3, length]), info("z", F32, [3])]
    model = make_model([scan], inputs, [info("s", F32, None), info("os", F32, None)],
                       [const("w", np.array([1.0, -1.0, 0.5], np.float32))])
    sizes = [4, 4] if length == 4 else [4, 2]
    feeds = [{"s0": rand(3, seed=1), "a": rand(n, 3, seed=2), "b": rand(3, n, seed=3), "z": rand(3, seed=4)}
             for n in sizes]
    check_everywhere(model, feeds)


def test_growing_state_is_refused_with_a_symbolic_length():
    # The carried value grows by one slice per iteration (onnxruntime refuses that too).
    nodes = [node("Concat", ["sum_in", "next"], ["sum_out"], axis=0), node("Identity", ["next"], ["o"])]
    body = subgraph("body", nodes, [info("sum_in", F32, None), info("next", F32, None)],
                    [info("sum_out", F32, None), info("o", F32, None)])
    with pytest.raises(ConversionError, match="changes from tensor<2xf32> to tensor<4xf32> between iterations"):
        convert(_scan_model(["L", 2], body, [2]))


def _scan8_model(batch, seq_lens: bool = False):
    body = _cumsum_body([node("Identity", ["sum_out"], ["scan"])], scan_out="scan")
    scan = node("Scan", ["lens" if seq_lens else "", "init", "x"], ["final", "stack"], body=body,
                num_scan_inputs=1, directions=[1])
    inputs = [info("init", F32, [batch, 3]), info("x", F32, [batch, 4, 3])]
    inits = [const("lens", np.full((batch,), 4, np.int32))] if seq_lens else []
    return make_model([scan], inputs, [info("final", F32, None), info("stack", F32, None)], inits, opset=8)


def test_scan_version_8_keeps_its_batch_axis():
    # onnx.version_converter alone would drop the batch axis; tosaconv upgrades Scan 8 itself.
    feeds = [{"init": rand(2, 3, seed=1), "x": rand(2, 4, 3, seed=2)}]
    check_everywhere(_scan8_model(2), feeds)


def test_scan_version_8_with_sequence_lengths_is_refused():
    with pytest.raises(ConversionError, match="sequence_lens"):
        convert(_scan8_model(2, seq_lens=True))
