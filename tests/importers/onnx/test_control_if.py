"""ONNX If against onnxruntime, on symbolic inputs fed at two or more shapes.

A constant condition, and one the scope proves from shapes, is decided at
import (only the taken branch remains). ``Shape(x)[1] > 4`` on a symbolic dim
becomes an IF helper that decays when the graph is specialized; branches of
different shapes merge into an exact type, and shape tensors returned by the
branches stay Index values. A condition computed from tensor data becomes
TOSA COND_IF, which the official reference model runs; branches of different
shapes on such a condition are refused with the reason.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.diagnostics import ConversionError
from .control_models import check_everywhere, node, op_names, subgraph
from .harness import F32, I64, const, convert, info, make_model, rand

ADD_THEN = subgraph("then", [node("Add", ["x", "x"], ["t_out"])], [], [info("t_out", F32, None)])
SUB_ELSE = subgraph("else", [node("Sub", ["x", "one_f"], ["e_out"])], [], [info("e_out", F32, None)])
CONCAT_ELSE = subgraph("else", [node("Concat", ["x", "x"], ["e_out"], axis=1)], [], [info("e_out", F32, None)])
INITS = [const("one_f", np.array(1.0, np.float32)), const("one", np.array(1, np.int64)),
         const("zero", np.array(0, np.int64)), const("four", np.array(4, np.int64))]


def _if_model(cond_nodes, then_g=ADD_THEN, else_g=SUB_ELSE, dims=("N", "W"), extra=()):
    nodes = list(cond_nodes) + [node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)] + list(extra)
    out = "z" if extra else "y"
    return make_model(nodes, [info("x", F32, list(dims))], [info(out, F32, None)], INITS)


def _dim_compare(axis: str, op: str, bound: str):
    """Nodes computing ``c = Shape(x)[axis] <op> bound``."""
    return [node("Shape", ["x"], ["s"]), node("Gather", ["s", axis], ["d"], axis=0), node(op, ["d", bound], ["c"])]


def _feeds(*shapes):
    return [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)]


@pytest.mark.parametrize("value", [True, False])
def test_constant_condition_keeps_only_the_taken_branch(value):
    model = _if_model([node("Constant", [], ["c"], value=const("v", np.array(value)))])
    statics = check_everywhere(model, _feeds((2, 3), (4, 5)))
    ops = op_names(convert(model))
    assert not ops & {"IF", "COND_IF"}
    assert ("ADD" in ops) == value and ("SUB" in ops) != value
    assert all(not op_names(s) & {"IF", "COND_IF"} for s in statics)


def test_shape_condition_decays_after_binding_to_either_branch():
    model = _if_model(_dim_compare("one", "Greater", "four"), else_g=CONCAT_ELSE)
    graph = convert(model)
    assert "IF" in op_names(graph)
    n, w = graph.outputs[0].type.shape
    assert str(n) == "N"
    assert str(w) not in ("W", "2*W") and w.free_symbols() == {"W"}   # c*W + (1-c)*2W, exact either way
    statics = check_everywhere(model, _feeds((2, 6), (3, 3), (1, 5), (2, 4)))
    assert [s.outputs[0].type.shape for s in statics] == [(2, 6), (3, 6), (1, 5), (2, 8)]
    assert all(not op_names(s) & {"IF", "COND_IF"} for s in statics)


@pytest.mark.parametrize("cond_nodes,taken", [
    (_dim_compare("one", "GreaterOrEqual", "one"), "ADD"),   # W >= 1 holds for every binding
    (_dim_compare("zero", "Greater", "four"), "SUB"),        # dim 0 is a static 3
    (_dim_compare("zero", "Equal", "four"), "SUB"),
])
def test_condition_the_scope_proves_is_decided_at_import(cond_nodes, taken):
    model = _if_model(cond_nodes, dims=(3, "W"))
    ops = op_names(convert(model))
    assert taken in ops and not ops & {"IF", "COND_IF"}
    check_everywhere(model, _feeds((3, 2), (3, 7)))


def test_branches_returning_shape_tensors_keep_exact_dims():
    # then: Shape(x); else: [W, N] (a transposed shape). Reshape(x, chosen shape) downstream.
    then_g = subgraph("then", [node("Shape", ["x"], ["ts"])], [], [info("ts", I64, None)])
    swapped = [node("Shape", ["x"], ["es"]), node("Gather", ["es", "perm"], ["ep"], axis=0)]
    else_g = subgraph("else", swapped, [], [info("ep", I64, None)], [const("perm", np.array([1, 0], np.int64))])
    model = _if_model(_dim_compare("zero", "Greater", "four"), then_g, else_g,
                      extra=[node("Reshape", ["x", "y"], ["z"])])
    graph = convert(model)
    reshape = next(op for op in graph.ops if op.op.name == "RESHAPE")
    assert "EXTRACT_DIM" not in op_names(graph)
    assert len(reshape.operands) == 3 and all(str(v.type).startswith("index<") for v in reshape.operands[1:])
    check_everywhere(model, _feeds((5, 2), (2, 3)))


def _data_condition():
    return [node("ReduceSum", ["x"], ["s"], keepdims=0), node("Greater", ["s", "zero_f"], ["c"])]


def _data_model(then_g=ADD_THEN, else_g=SUB_ELSE):
    model = _if_model(_data_condition(), then_g, else_g)
    model.graph.initializer.extend([const("zero_f", np.array(0.0, np.float32))])
    return model


def test_data_condition_becomes_cond_if_that_the_reference_model_runs(tmp_path):
    model = _data_model()
    assert "COND_IF" in op_names(convert(model))
    positive, negative = rand(2, 3, low=0.1, high=1.0), rand(3, 4, low=-1.0, high=-0.1, seed=1)
    statics = check_everywhere(model, [{"x": positive}, {"x": negative}], reference_dir=tmp_path)
    assert all("COND_IF" in op_names(s) for s in statics)


def test_data_condition_with_captured_shape_values(tmp_path):
    # The then-branch reshapes x using its own shape: the region captures GET_DIM values.
    body = [node("Shape", ["x"], ["ts"]), node("Reshape", ["x", "ts"], ["tr"]), node("Add", ["tr", "tr"], ["t_out"])]
    then_g = subgraph("then", body, [], [info("t_out", F32, None)])
    model = _data_model(then_g)
    check_everywhere(model, [{"x": rand(2, 3, low=0.1)}, {"x": rand(4, 2, low=-1.0, high=-0.1)}],
                     reference_dir=tmp_path)


def test_data_condition_with_branches_of_different_shapes_is_refused():
    with pytest.raises(ConversionError, match="TOSA COND_IF needs both branches to return the same shape"):
        convert(_data_model(else_g=CONCAT_ELSE))


def test_if_inside_if_captures_outer_values():
    # Outer: a data condition (COND_IF); inner, in the then-branch: W > 4 on the outer input x.
    inner = [node("Shape", ["x"], ["is"]), node("Gather", ["is", "one"], ["id"], axis=0),
             node("Greater", ["id", "four"], ["ic"]),
             node("If", ["ic"], ["t_out"], then_branch=ADD_THEN, else_branch=SUB_ELSE)]
    then_g = subgraph("then", inner, [], [info("t_out", F32, None)])
    model = _data_model(then_g)
    assert {"COND_IF", "IF"} <= op_names(convert(model))
    check_everywhere(model, [{"x": rand(2, 6, low=0.1)}, {"x": rand(2, 3, low=0.1, seed=1)},
                             {"x": rand(3, 5, low=-1.0, high=-0.1, seed=2)}])


def test_condition_must_be_boolean_data():
    model = _if_model([node("Cast", ["x"], ["c"], to=9)], dims=(1,))
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2
    with pytest.raises(ConversionError, match="one-element bool tensor"):
        convert(model)
