"""Lengths that come from loops and become known at binding (issue 11, class 4).

Two idioms, reproduced with small synthetic models and compared with
onnxruntime at two bindings (the symbolic program and the specialized,
emitted and read-back one), with the official reference model running the
emitted ``.tosa``:

* tf2onnx's bidirectional LSTM: a Loop whose trip count comes from the input's
  shape and whose condition is computed in the body stacks the forward steps;
  the backward direction is a ReverseSequence over the stacked steps, with
  lengths that Expand the loop's own iteration count (``while_loop.iterations``
  here). That count is a symbol of the LOOP op; it now has an Index value (the
  scan output's length), and it folds when the loop unrolls after binding.
* TTS attention: a Range whose limit is a counter carried through the Loop body
  (a tensor, not a shape), and a Range after the loop up to its final value.
  The limit is read with EXTRACT_DIM, which decays when the unrolled loop's
  counter folds to a constant.

What stays data-dependent is refused at specialization with the op and the
reason: a Range whose limit is a model input's data, and a Loop whose
condition reads tensor data while it stacks scan outputs.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tosaconv import api
from tosaconv.diagnostics import ShapeError

from .harness import (F32, I64, check_reference_model, check_with_onnxruntime, compare_both_paths, const,
                      convert, info, make_model, rand, run_graph, run_onnxruntime, specialize_and_emit)

BOOL = TensorProto.BOOL


def _forward_body(stop_on_data: bool):
    """One step: y_t = 2 * x[i]; continue while i + 1 < T (from the shape), or while x[i, 0, 0] < 1.5."""
    keep = [helper.make_node("Add", ["i", "one"], ["i1"]), helper.make_node("Less", ["i1", "T"], ["cond_out"])]
    if stop_on_data:
        keep = [helper.make_node("Slice", ["row", "z2", "o2", "a2"], ["first"]),
                helper.make_node("Squeeze", ["first"], ["first_s"]),
                helper.make_node("Less", ["first_s", "limit"], ["cond_out"])]
    nodes = [helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
             helper.make_node("Mul", ["row", "two"], ["y_t"])] + keep
    inits = [const("two", np.array(2, np.float32)), const("one", np.array(1, np.int64)),
             const("z1", np.array([0], np.int64)), const("o1", np.array([1], np.int64)),
             const("limit", np.array(1.5, np.float32)), const("z2", np.array([0, 0], np.int64)),
             const("o2", np.array([1, 1], np.int64)), const("a2", np.array([0, 1], np.int64))]
    return helper.make_graph(nodes, "body", [info("i", I64, []), info("cond_in", BOOL, [])],
                             [info("cond_out", BOOL, []), info("y_t", F32, None)], inits)


def bidirectional_model(stop_on_data: bool = False, lens_from_input: bool = False):
    """x [T, 2, 3] -> Loop 'while_loop' stacking 2 * x[t] -> ReverseSequence over time (batch axis 1)."""
    lens = ["lens"] if lens_from_input else ["it64"]
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["T"], axis=0),
             helper.make_node("Loop", ["T", "true"], ["ys"], body=_forward_body(stop_on_data), name="while_loop"),
             helper.make_node("Shape", ["ys"], ["ys_shape"]),
             helper.make_node("Slice", ["ys_shape", "z1", "o1"], ["iterations"]),       # while_loop.iterations
             helper.make_node("Slice", ["s", "o1", "two1"], ["batch"]),
             helper.make_node("Expand", ["iterations", "batch"], ["it64"]),
             helper.make_node("ReverseSequence", ["ys"] + lens, ["rev"], batch_axis=1, time_axis=0, name="bw")]
    inits = [const("zero", np.array(0, np.int64)), const("true", np.array(True)),
             const("z1", np.array([0], np.int64)), const("o1", np.array([1], np.int64)),
             const("two1", np.array([2], np.int64))]
    inputs = [info("x", F32, ["T", 2, 3])] + ([info("lens", I64, [2])] if lens_from_input else [])
    return make_model(nodes, inputs, [info("rev", F32, None)], inits, 17)


def _attention_body():
    """c1 = c + 1; pos = Range(0, c1); y_t = x[i] * sum(pos) (a counter-sized window inside the loop)."""
    nodes = [helper.make_node("Add", ["c", "one"], ["c1"]),
             helper.make_node("Range", ["zero", "c1", "one"], ["pos"], name="attn_range"),
             helper.make_node("Cast", ["pos"], ["posf"], to=TensorProto.FLOAT),
             helper.make_node("ReduceSum", ["posf"], ["acc"], keepdims=1),
             helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
             helper.make_node("Mul", ["row", "acc"], ["y_t"]),
             helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    return helper.make_graph(nodes, "body", [info("i", I64, []), info("cond_in", BOOL, []), info("c", I64, [])],
                             [info("cond_out", BOOL, []), info("c1", I64, []), info("y_t", F32, None)],
                             [const("one", np.array(1, np.int64)), const("zero", np.array(0, np.int64))])


def attention_model():
    """x [T, 3]: a decoder Loop over T with the counter c (from 2), then Range(0, c_end, 2) after it."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["T"], axis=0),
             helper.make_node("Loop", ["T", "", "c0"], ["c_end", "ys"], body=_attention_body(), name="decoder"),
             helper.make_node("Range", ["zero", "c_end", "two"], ["steps"], name="after_range"),
             helper.make_node("Cast", ["steps"], ["steps_f"], to=TensorProto.FLOAT)]
    inits = [const("zero", np.array(0, np.int64)), const("c0", np.array(2, np.int64)),
             const("two", np.array(2, np.int64))]
    return make_model(nodes, [info("x", F32, ["T", 3])], [info("ys", F32, None), info("steps_f", F32, None)],
                      inits, 17)


def _check_reference(graph, model, feeds: dict, workdir):
    static, tosa = specialize_and_emit(graph, {k: np.shape(v) for k, v in feeds.items()})
    got = run_graph(static, feeds)
    for g, w in zip(got, run_onnxruntime(model, feeds)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    check_reference_model(tosa, static, feeds, got, workdir)
    return static


@pytest.mark.parametrize("lens_from_input", [False, True])
def test_reverse_sequence_over_a_loops_steps_matches_onnxruntime(lens_from_input, tmp_path):
    model = bidirectional_model(lens_from_input=lens_from_input)
    feeds = [{"x": rand(t, 2, 3, seed=t)} for t in (3, 5)]
    if lens_from_input:
        feeds = [dict(f, lens=np.array([len(f["x"]), len(f["x"]) - 1], np.int64)) for f in feeds]
    graph = check_with_onnxruntime(model, feeds)
    loop = next(op for op in graph.ops if op.op.name == "LOOP")
    assert "while_loop.iterations" in str(loop.attrs.iterations[0])     # the count is the loop's own symbol
    for f in feeds:
        static = _check_reference(graph, model, f, tmp_path / str(len(f["x"])))
        assert "LOOP" not in static.histogram()


def test_range_limits_from_a_loop_counter_match_onnxruntime(tmp_path):
    model = attention_model()
    feeds = [{"x": rand(t, 3, seed=t)} for t in (3, 6)]
    graph = check_with_onnxruntime(model, feeds)
    assert "EXTRACT_DIM" in graph.histogram()                  # the limit after the loop is read from data
    for f in feeds:
        static = _check_reference(graph, model, f, tmp_path / str(len(f["x"])))
        assert not {"EXTRACT_DIM", "IOTA", "LOOP"} & set(static.histogram())


def test_range_limit_from_input_data_is_refused_at_specialization():
    nodes = [helper.make_node("Range", ["zero", "n", "one"], ["r"], name="data_range")]
    model = make_model(nodes, [info("x", F32, ["T"]), info("n", I64, [])], [info("r", I64, None)],
                       [const("zero", np.array(0, np.int64)), const("one", np.array(1, np.int64))], 17)
    graph = convert(model)
    feeds = {"x": rand(4), "n": np.array(5, np.int64)}
    compare_both_paths(graph, feeds, run_onnxruntime(model, feeds), 0, 0, specialized=False)
    with pytest.raises(ShapeError, match="Range 'data_range'.*reads a size from tensor data \\('n'\\)"):
        api.specialize(graph, {"T": 4})


def test_loop_stopped_by_data_with_stacked_steps_is_refused_at_specialization():
    model = bidirectional_model(stop_on_data=True)
    graph = convert(model)                  # converts: the count has a value (the stacked steps' length)
    x = rand(4, 2, 3, seed=3)
    x[2, 0, 0] = 1.9                        # the loop stops after step 2
    compare_both_paths(graph, {"x": x}, run_onnxruntime(model, {"x": x}), 1e-6, 1e-6, specialized=False)
    with pytest.raises(ShapeError, match="Loop 'while_loop' continues while a condition computed from tensor "
                                         "data holds.*scan outputs would have a length known only when it runs"):
        api.specialize(graph, {"T": 4})
