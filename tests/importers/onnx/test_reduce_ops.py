"""ONNX reductions against onnxruntime: ReduceSum, ReduceMean, ReduceMax,
ReduceMin and ReduceProd at opsets 11 to 21 (axes as an attribute and as an
input), with and without keepdims, empty axes with and without
noop_with_empty_axes, on symbolic input dims run at several shapes (one of
them binding a dim to 1). Also the IR shape of a mean over a dynamic axis
(it divides by the bound size, not a constant) and the error for axes that
are only known at run time.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.diagnostics import ConversionError
from tosaconv.symbolic.expr import same, sym

from .harness import BOOL, F32, I32, I64, check_with_onnxruntime, const, convert, info, one_node, rand

REDUCES = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"]
AXES_INPUT_SINCE = {"ReduceSum": 13}      # the others take axes as an input from opset 18
SHAPES = [(2, 3, 4), (1, 5, 4), (3, 1, 4)]


def _axes_input(op: str, opset: int) -> bool:
    return opset >= AXES_INPUT_SINCE.get(op, 18)


def _reduce_model(op, opset, axes, elem=F32, dims=("b", "s", 4), **attrs):
    """A one-node reduction; axes go where this opset wants them (None = not given)."""
    x, y = info("x", elem, list(dims)), info("y", elem, None)
    inits = []
    if axes is not None and _axes_input(op, opset):
        inits = [const("axes", np.array(axes, np.int64))]
    elif axes is not None:
        attrs["axes"] = list(axes)
    return one_node(op, [x], [y], inits, opset=opset, **attrs)


def _feeds(low=-2.0, high=2.0, dtype=np.float32):
    return [{"x": rand(*s, low=low, high=high, seed=i).astype(dtype)} for i, s in enumerate(SHAPES)]


@pytest.mark.parametrize("op", REDUCES)
@pytest.mark.parametrize("opset", [11, 13, 17, 18, 21])
@pytest.mark.parametrize("axes", [(1,), (0, 2), (-1,), (2, -3), None], ids=str)
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_matches_onnxruntime(op, opset, axes, keepdims):
    model = _reduce_model(op, opset, axes, keepdims=keepdims)
    check_with_onnxruntime(model, _feeds(0.5, 1.5) if op == "ReduceProd" else _feeds())


@pytest.mark.parametrize("op,opset", [("ReduceSum", 13), ("ReduceMean", 18), ("ReduceMax", 18),
                                      ("ReduceMin", 21), ("ReduceProd", 18)])
@pytest.mark.parametrize("noop", [0, 1])
def test_empty_axes_follow_noop_with_empty_axes(op, opset, noop):
    x, y = info("x", F32, ["b", "s", 4]), info("y", F32, None)
    with_empty = one_node(op, [x], [y], [const("axes", np.zeros((0,), np.int64))], opset=opset,
                          noop_with_empty_axes=noop, keepdims=0)
    without = one_node(op, [x], [y], opset=opset, noop_with_empty_axes=noop)
    feeds = _feeds(0.5, 1.5)
    check_with_onnxruntime(with_empty, feeds)
    check_with_onnxruntime(without, feeds)


@pytest.mark.parametrize("op,opset", [("ReduceSum", 11), ("ReduceSum", 13), ("ReduceMax", 18),
                                      ("ReduceMin", 13), ("ReduceMean", 18), ("ReduceProd", 13)])
def test_int32_reductions(op, opset):
    model = _reduce_model(op, opset, (1,), elem=I32, keepdims=0)
    feeds = [{"x": np.random.default_rng(i).integers(-9, 9, s).astype(np.int32)} for i, s in enumerate(SHAPES)]
    check_with_onnxruntime(model, feeds)


@pytest.mark.parametrize("op,tosa", [("ReduceMax", "REDUCE_ANY"), ("ReduceMin", "REDUCE_ALL")])
def test_bool_max_min_are_logical_reductions(op, tosa):
    model = _reduce_model(op, 20, (1,), elem=BOOL, dims=("b", 3), keepdims=1)
    assert tosa in convert(model).histogram()
    feeds = [{"x": np.random.default_rng(i).integers(0, 2, (n, 3)).astype(bool)} for i, n in enumerate((4, 1))]
    check_with_onnxruntime(model, feeds)


def test_mean_over_a_dynamic_axis_divides_by_the_bound_size():
    graph = convert(_reduce_model("ReduceMean", 18, (0, 1), keepdims=0))
    counts = [op for op in graph.ops if op.op.name == "DIMS_TO_TENSOR"]
    assert len(counts) == 1
    assert same(counts[0].operands[0].type.value, sym("b") * sym("s"))
    assert "RECIPROCAL" in graph.histogram()
    assert graph.outputs[0].type.shape == (4,)


def test_mean_over_static_axes_uses_a_constant():
    graph = convert(_reduce_model("ReduceMean", 18, (2,), keepdims=1))
    hist = graph.histogram()
    assert "DIMS_TO_TENSOR" not in hist and "RECIPROCAL" not in hist
    consts = [op.attrs.values for op in graph.ops if op.op.name == "CONST"]
    assert any(np.allclose(c, 0.25) for c in consts)


def test_multi_axis_reduce_is_a_chain_and_keepdims_0_collapses():
    graph = convert(_reduce_model("ReduceSum", 13, (0, 2), keepdims=0))
    assert [op.op.name for op in graph.ops] == ["REDUCE_SUM", "REDUCE_SUM", "COLLAPSE_DIMS"]
    assert [op.attrs.axis for op in graph.ops[:2]] == [0, 2]
    assert graph.outputs[0].type.shape == (sym("s"),)


def test_runtime_axes_are_rejected_with_a_location():
    x, axes, y = info("x", F32, ["b", 4]), info("axes", I64, [1]), info("y", F32, None)
    model = one_node("ReduceSum", [x, axes], [y], opset=13)
    with pytest.raises(ConversionError) as err:
        convert(model)
    d = err.value.diagnostics[0]
    assert d.code == "E-CONVERT"
    assert "axes input 'axes': input axes computed from tensor data at run time is not supported" in d.message
    assert d.notes == ("published limit: axes-from-data (see `tosaconv ops`)",)   # the limit ReduceSum publishes
    assert d.location.name == "reducesum_node"


def test_scalar_input_is_returned_unchanged():
    model = one_node("ReduceSum", [info("x", F32, [])], [info("y", F32, None)], opset=13, keepdims=0)
    check_with_onnxruntime(model, [{"x": np.array(3.5, np.float32)}])



@pytest.mark.parametrize("keepdims", [0, 1])
def test_reducing_a_literal_1_axis_emits_no_reduction(keepdims):
    model = _reduce_model("ReduceMax", 18, (1,), dims=("b", 1, 4), keepdims=keepdims)
    graph = check_with_onnxruntime(model, [{"x": rand(n, 1, 4, seed=n)} for n in (2, 1)])
    assert not any(op.op.name.startswith("REDUCE") for op in graph.ops)
