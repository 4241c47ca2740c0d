"""Slice with steps other than 1 (2, 3, -1, -2) over symbolic axes, compared with onnxruntime.

The output extent ``ceil((end - start) / step)`` after ONNX's wrapping and clamping is a dim
expression; each case converts once and is run at two bindings, both as the symbolic program and as
the specialized, emitted ``.tosa`` (``check_with_onnxruntime``), which must hold no helper op. The
reflect-padding idiom of STFT front-ends (``x[..., 1:n+1][::-1]`` and ``x[..., -2::-1]``, written as
Slice with step -1 and an end of -INT64_MAX) is among the cases. The same cases on static dims (one
lowering serves both) and the official reference model on a few emitted programs are checked too.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tosaconv import api
from tosaconv.diagnostics import EXIT_SHAPE, ShapeError

from .harness import (F32, check_reference_model, check_with_onnxruntime, const, convert, info, make_model, rand,
                      run_graph, specialize_and_emit)

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


def slice_model(starts, ends, axes, steps, dims=("batch", 3, "t")):
    nodes = [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"], name="slice0")]
    inits = [const(n, np.array(v, np.int64)) for n, v in
             (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps))]
    return make_model(nodes, [info("x", F32, list(dims))], [info("y", F32, None)], inits)


CASES = [  # (starts, ends, axes, steps): slices of the symbolic axis 2 (t) unless the axes say otherwise
    ([0], [INT64_MAX], [2], [2]),
    ([1], [INT64_MAX], [2], [3]),
    ([1], [-1], [2], [2]),
    ([-5], [1000], [2], [3]),           # negative start, end clamped to t
    ([-1000], [-2], [2], [2]),          # start clamped to 0
    ([-1], [INT64_MIN], [2], [-1]),     # full reversal
    ([-2], [-INT64_MAX], [2], [-1]),    # reflect-pad tail: x[..., -2::-1]
    ([4], [0], [2], [-1]),              # reflect-pad head: x[..., 4:0:-1] (pad 4)
    ([INT64_MAX], [INT64_MIN], [2], [-2]),
    ([-3], [1], [-1], [-2]),
    ([1, -1], [INT64_MAX, INT64_MIN], [0, 2], [1, -3]),   # a symbolic batch axis sliced with step 1 too
    ([0, 2], [INT64_MAX, 0], [1, 2], [2, -1]),            # a static axis with step 2 beside a symbolic one
]


@pytest.mark.parametrize("starts, ends, axes, steps", CASES, ids=[str(c) for c in range(len(CASES))])
def test_strided_slice_on_symbolic_axis(starts, ends, axes, steps):
    model = slice_model(starts, ends, axes, steps)
    graph = check_with_onnxruntime(model, [{"x": rand(2, 3, 11)}, {"x": rand(3, 3, 24, seed=1)}])
    static, _ = specialize_and_emit(graph, {"x": (2, 3, 11)})
    assert not [op.op.name for op in static.ops if op.op.tosa is None], "helper ops left after binding"


@pytest.mark.parametrize("starts, ends, axes, steps", CASES, ids=[str(c) for c in range(len(CASES))])
def test_strided_slice_on_static_dims(starts, ends, axes, steps):
    check_with_onnxruntime(slice_model(starts, ends, axes, steps, dims=(2, 3, 11)), [{"x": rand(2, 3, 11)}])


@pytest.mark.parametrize("case", [1, 6, 8])
def test_the_reference_model_agrees(case, tmp_path):
    graph = convert(slice_model(*CASES[case]))
    feeds = {"x": rand(2, 3, 13)}
    static, tosa = specialize_and_emit(graph, {"x": (2, 3, 13)})
    check_reference_model(tosa, static, feeds, run_graph(static, feeds), tmp_path)


def test_extent_is_a_symbolic_expression():
    graph = check_with_onnxruntime(slice_model([1], [INT64_MAX], [2], [3]), [{"x": rand(1, 3, 7)}])
    assert str(graph.outputs[0].type.shape[2]) == "floordiv(t + 1, 3)"   # ceil((t - 1) / 3)


def test_reflect_pad_idiom_on_a_symbolic_time_axis():
    """torch.stft(center=True, pad_mode='reflect') as exported: Concat(x[4:0:-1], x, x[-2:-6:-1])."""
    nodes = [helper.make_node("Slice", ["x", "s0", "e0", "ax", "neg"], ["head"], name="head"),
             helper.make_node("Slice", ["x", "s1", "e1", "ax", "neg"], ["tail"], name="tail"),
             helper.make_node("Concat", ["head", "x", "tail"], ["y"], name="cat", axis=1)]
    inits = [const(n, np.array([v], np.int64)) for n, v in
             (("s0", 4), ("e0", 0), ("s1", -2), ("e1", -6), ("ax", 1), ("neg", -1))]
    model = make_model(nodes, [info("x", F32, ["batch", "time"])], [info("y", F32, None)], inits)
    check_with_onnxruntime(model, [{"x": rand(1, 100)}, {"x": rand(2, 37, seed=2)}])


def test_a_strided_slice_that_binds_empty_is_a_shape_error():
    """x[..., 1::3] is empty when t = 1 (onnxruntime returns a 0-length axis; TOSA dims are >= 1)."""
    graph = convert(slice_model([1], [INT64_MAX], [2], [3]))
    with pytest.raises(ShapeError, match=r"constraint floordiv\(t \+ 1, 3\) >= 1 does not hold") as e:
        api.specialize(graph, {"batch": 1, "t": 1})
    diag = e.value.diagnostics[-1]
    assert e.value.exit_code == EXIT_SHAPE and "slice0" in str(diag.location)
    assert any("must not be empty" in n for n in diag.notes)
