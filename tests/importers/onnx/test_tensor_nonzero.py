"""ONNX NonZero and Compress: outputs whose size depends on data.

Three paths: a constant input folds at import; an input the bindings make
constant (computed from shapes) keeps a NONZERO op that decays at
specialization, so the static program matches onnxruntime at every binding;
an input that is real data gives a NONZERO whose count is an Exact,
data-dependent symbol (seed 003: the count is the true size, known only at run time). That program runs symbolically (compared with onnxruntime at two
sizes, also feeding GatherND and a Transpose), prints and parses as text IR,
and specialization fails with a ShapeError saying the count of non-zeros is
only known when the model runs.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tosaconv import api
from tosaconv.diagnostics import ShapeError
from tosaconv.ir.parser import parse_graph
from tosaconv.symbolic.expr import same, sym
from tosaconv.symbolic.scope import ExtentKind

from .harness import BOOL, F32, I64, check_with_onnxruntime, const, convert, info, make_model, one_node, rand


def _runtime_nonzero():
    return one_node("NonZero", [info("x", F32, ["N", "W"])], [info("y", I64, None)], opset=13)


def _feeds():
    out = []
    for seed, (n, w) in enumerate([(3, 4), (2, 7)]):
        x = rand(n, w, seed=seed)
        x[x < 0] = 0.0
        out.append({"x": x})
    return out


def test_constant_input_folds_at_import():
    nodes = [helper.make_node("NonZero", ["c"], ["nz"]), helper.make_node("Add", ["nz", "x"], ["y"])]
    c = np.array([[0, 3, 0], [1, 0, 2]], np.float32)
    model = make_model(nodes, [info("x", I64, [2, "K"])], [info("y", I64, None)], [const("c", c)], opset=13)
    graph = check_with_onnxruntime(model, [{"x": np.arange(2 * k).reshape(2, k)} for k in (3, 1)])
    assert "NONZERO" not in graph.histogram()


def test_runtime_input_has_an_exact_data_dependent_count():
    graph = convert(_runtime_nonzero())
    (op,) = [op for op in graph.ops if op.op.name == "NONZERO"]
    count = op.attrs.count
    assert same(op.result.type.shape[1], sym(count)) and op.result.type.shape[0] == 2
    info_ = graph.scope.symbols[count]
    assert info_.kind is ExtentKind.EXACT and info_.data_dependent
    assert same(info_.bound, sym("N") * sym("W"))
    assert "NonZero" in info_.origin and "output axis 1" in info_.origin


def test_runtime_input_runs_symbolically():
    check_with_onnxruntime(_runtime_nonzero(), _feeds(), specialized=False)


def test_runtime_input_cannot_be_specialized():
    graph = convert(_runtime_nonzero())
    with pytest.raises(ShapeError, match="the count of non-zeros .* is only known when the model runs") as err:
        api.specialize(graph, {"N": 3, "W": 4})
    assert err.value.diagnostics[0].code == "E-DATA-DEPENDENT"


def test_symbolic_program_with_nonzero_round_trips_as_text():
    graph = convert(_runtime_nonzero())
    text = api.print_ir(graph)
    assert "NONZERO" in text
    assert api.print_ir(parse_graph(text)) == text


def test_input_computed_from_shapes_decays_at_specialization():
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "zero"], ["n"]),
             helper.make_node("Range", ["zero", "n", "one"], ["r"]),
             helper.make_node("NonZero", ["r"], ["nz"]), helper.make_node("Cast", ["nz"], ["y"], to=TensorProto.INT64)]
    model = make_model(nodes, [info("x", F32, ["N", 2])], [info("y", I64, None)],
                       [const("zero", np.array(0, np.int64)), const("one", np.array(1, np.int64))], opset=13)
    graph = check_with_onnxruntime(model, [{"x": rand(n, 2, seed=n)} for n in (4, 2)])
    assert "NONZERO" in graph.histogram()
    assert "NONZERO" not in api.specialize(graph, {"N": 5}).histogram()


def test_nonzero_feeding_gather_nd_runs_symbolically():
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("Transpose", ["nz"], ["idx"]),
             helper.make_node("GatherND", ["x", "idx"], ["y"])]
    model = make_model(nodes, [info("x", F32, ["N", "W"])], [info("y", F32, None)], opset=13)
    check_with_onnxruntime(model, _feeds(), specialized=False)


def test_compress_with_a_constant_condition_is_static():
    model = one_node("Compress", [info("x", F32, ["N", 4])], [info("y", F32, None)],
                     [const("c", np.array([True, False, True, True]))], opset=11, axis=1)
    graph = check_with_onnxruntime(model, [{"x": rand(n, 4, seed=n)} for n in (2, 5)])
    assert "NONZERO" not in graph.histogram()


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_compress_with_a_runtime_condition(axis):
    attrs = {} if axis is None else {"axis": axis}
    model = one_node("Compress", [info("x", F32, [3, "W"]), info("c", BOOL, ["L"])], [info("y", F32, None)],
                     opset=11, **attrs)
    feeds = [{"x": rand(3, w, seed=w), "c": np.array(c)} for w, c in ((4, [1, 0, 1]), (2, [0, 1]))]
    graph = check_with_onnxruntime(model, [{k: v.astype(bool) if k == "c" else v for k, v in f.items()}
                                           for f in feeds], specialized=False)
    with pytest.raises(ShapeError, match="only known when the model runs"):
        api.specialize(graph, {"W": 4, "L": 3})
