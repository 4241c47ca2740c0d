"""ONNX Loop against onnxruntime, on symbolic inputs fed at two or more shapes.

A constant trip count is unrolled at import (the iteration number is an
import-time constant, so shape arithmetic on it stays constant); a trip count
read from an input's shape becomes a LOOP op that the interpreter runs and
specialization unrolls. Loop-carried values, scan outputs, a condition
computed in the body (from the iteration number: it folds once unrolled) and a
Loop nested in an If branch that captures outer values all match
onnxruntime. A condition computed from tensor data cannot be unrolled, and
the variants tosaconv cannot express are refused with the reason.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv import api
from tosaconv.diagnostics import ConversionError, ShapeError
from tosaconv.passes.decay_control import MAX_UNROLL

from .control_models import check_everywhere, node, op_names, subgraph
from .harness import BOOL, F32, I64, check_with_onnxruntime, const, convert, info, make_model, rand

LOOP_INPUTS = [info("i", I64, []), info("cond_in", BOOL, []), info("y_in", F32, None)]
INITS = [const("zero", np.array(0, np.int64)), const("one", np.array(1, np.int64)),
         const("two", np.array(2, np.int64)), const("two_f", np.array(2.0, np.float32)),
         const("ten_f", np.array(10.0, np.float32)), const("axes0", np.array([0], np.int64))]


def _body(nodes, cond="cond_in", scan=True):
    """A body adding row ``i`` of the outer ``x`` to the carried ``y`` (plus ``nodes``); scans ``2*y``."""
    rows = [node("Gather", ["x", "i"], ["row"], axis=0), node("Add", ["y_in", "row"], ["y_out"]),
            node("Mul", ["y_out", "two_f"], ["scan"])]
    outs = [info("cond_out", BOOL, []), info("y_out", F32, None)] + ([info("scan", F32, None)] if scan else [])
    return subgraph("body", rows + list(nodes) + [node("Identity", [cond], ["cond_out"])], LOOP_INPUTS, outs)


def _loop_model(trip_nodes, trip="n", cond="", body=None, outputs=("y", "ys")):
    nodes = list(trip_nodes) + [
        node("ReduceSum", ["x", "axes0"], ["y0"], keepdims=0), node("Sub", ["y0", "y0"], ["yinit"]),
        node("Loop", [trip, cond, "yinit"], list(outputs), body=body or _body([]))]
    return make_model(nodes, [info("x", F32, ["N", "W"])], [info(o, F32, None) for o in outputs], INITS)


SHAPE_TRIP = [node("Shape", ["x"], ["s"]), node("Gather", ["s", "zero"], ["n"], axis=0)]


def _feeds(*shapes):
    return [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)]


def test_trip_count_from_a_shape_unrolls_after_binding():
    model = _loop_model(SHAPE_TRIP)
    assert "LOOP" in op_names(convert(model))
    statics = check_everywhere(model, _feeds((3, 4), (5, 2), (1, 3)))
    assert all("LOOP" not in op_names(s) for s in statics)
    assert [s.outputs[1].type.shape for s in statics] == [(3, 4), (5, 2), (1, 3)]


def test_constant_trip_count_unrolls_at_import():
    model = _loop_model([node("Constant", [], ["n"], value=const("v", np.array(3, np.int64)))])
    assert "LOOP" not in op_names(convert(model))
    check_everywhere(model, _feeds((3, 4), (4, 2)))


def test_loop_accumulates_a_shape_value_at_import():
    # The carried value is a shape tensor: each iteration doubles it, then it reshapes x.
    body = subgraph("body", [node("Mul", ["k_in", "two"], ["k_out"]), node("Identity", ["cond_in"], ["cond_out"])],
                    [info("i", I64, []), info("cond_in", BOOL, []), info("k_in", I64, None)],
                    [info("cond_out", BOOL, []), info("k_out", I64, None)])
    nodes = [node("Shape", ["x"], ["s"]), node("Gather", ["s", "axes0"], ["k0"], axis=0),
             node("Loop", ["two", "", "k0"], ["k"], body=body),
             node("Concat", ["k", "minus1"], ["shape"], axis=0), node("Reshape", ["x", "shape"], ["y"])]
    model = make_model(nodes, [info("x", F32, ["N", 8])], [info("y", F32, None)],
                       INITS + [const("minus1", np.array([-1], np.int64))])
    graph = convert(model)
    assert "EXTRACT_DIM" not in op_names(graph) and "LOOP" not in op_names(graph)
    check_everywhere(model, _feeds((1, 8), (2, 8)))


LESS_THAN_TWO = [node("Less", ["i", "two"], ["keep"])]


@pytest.mark.parametrize("trip_nodes,shapes,lengths", [
    # trip count 10, unrolled at import: the condition stops it after 3 iterations (Gather needs 3 rows)
    ([node("Constant", [], ["n"], value=const("v", np.array(10, np.int64)))], [(5, 3), (3, 4)], [3, 3]),
    # trip count N, unrolled after binding: min(N, 3) iterations
    (SHAPE_TRIP, [(5, 3), (2, 4), (1, 2)], [3, 2, 1]),
])
def test_condition_computed_from_the_iteration_number_stops_the_loop(trip_nodes, shapes, lengths):
    model = _loop_model(trip_nodes, cond="true", body=_body(LESS_THAN_TWO, cond="keep"))
    model.graph.initializer.extend([const("true", np.array(True))])
    statics = check_everywhere(model, _feeds(*shapes))
    assert [s.outputs[1].type.shape[0] for s in statics] == lengths


def _data_condition_body(scan: bool, extra=()):
    """Stop once the carried sum reaches 10 (a condition computed from tensor data)."""
    stop = [node("ReduceSum", ["y_out"], ["total"], keepdims=0), node("Less", ["total", "ten_f"], ["keep"])]
    return _body([*extra, *stop], cond="keep", scan=scan)


DATA_FEEDS = [{"x": np.full((6, 2), 2.0, np.float32)}, {"x": np.full((3, 3), 0.5, np.float32)},
              {"x": np.full((4, 1), 20.0, np.float32)}]


def _data_loop(body, outputs=("y",)):
    model = _loop_model(SHAPE_TRIP, cond="true", body=body, outputs=outputs)
    model.graph.initializer.extend([const("true", np.array(True))])
    return model


def test_condition_from_tensor_data_becomes_a_while_loop(tmp_path):
    model = _data_loop(_data_condition_body(scan=False))
    statics = check_everywhere(model, DATA_FEEDS, reference_dir=tmp_path)
    assert all("WHILE_LOOP" in op_names(s) and "LOOP" not in op_names(s) for s in statics)


def test_while_loop_body_reads_the_iteration_number_as_data(tmp_path):
    # y_out = y_in + row_i + float(i) * 3: the iteration number becomes int32 tensor arithmetic.
    extra = [node("Cast", ["i"], ["fi"], to=1), node("Mul", ["fi", "three_f"], ["f3"]),
             node("Add", ["y_out", "f3"], ["y2"])]
    body = _data_condition_body(scan=False, extra=extra)
    body.output[1].name = "y2"
    model = _data_loop(body)
    model.graph.initializer.extend([const("three_f", np.array(3.0, np.float32))])
    check_everywhere(model, DATA_FEEDS, reference_dir=tmp_path)


def test_data_dependent_condition_with_scan_outputs_is_refused_at_specialization():
    model = _data_loop(_data_condition_body(scan=True), outputs=("y", "ys"))
    graph = check_with_onnxruntime(model, DATA_FEEDS, specialized=False)   # the symbolic program runs it
    with pytest.raises(ShapeError, match="condition computed from tensor data.*scan outputs would have a length"):
        api.specialize(graph, {"N": 6, "W": 2})


def test_while_loop_body_cannot_use_the_iteration_number_as_a_size():
    # Slice x[:i+1] and sum it: the slice's size follows the iteration number.
    extra = [node("Add", ["i", "one"], ["i1"]), node("Unsqueeze", ["i1", "axes0"], ["end"]),
             node("Slice", ["x", "zero1", "end"], ["head"]), node("ReduceSum", ["head", "axes0"], ["hs"], keepdims=0),
             node("Add", ["y_out", "hs"], ["y2"])]
    body = _data_condition_body(scan=False, extra=extra)
    body.output[1].name = "y2"
    model = _data_loop(body)
    model.graph.initializer.extend([const("zero1", np.array([0], np.int64))])
    graph = check_with_onnxruntime(model, DATA_FEEDS[:1], specialized=False)
    with pytest.raises(ShapeError, match="uses the iteration number as a size"):
        api.specialize(graph, {"N": 6, "W": 2})


@pytest.mark.parametrize("scan", [False, True])
def test_loop_too_long_to_unroll(scan, tmp_path):
    model = _loop_model(SHAPE_TRIP, body=_body([], scan=scan), outputs=("y", "ys") if scan else ("y",))
    feeds = [{"x": rand(MAX_UNROLL + 5, 2, low=-0.01, high=0.01)}]
    if not scan:
        statics = check_everywhere(model, feeds, reference_dir=tmp_path)
        assert "WHILE_LOOP" in op_names(statics[0])
        return
    with pytest.raises(ShapeError, match=f"runs more than {MAX_UNROLL} iterations"):
        api.specialize(convert(model), {"N": MAX_UNROLL + 5, "W": 2})


def test_loop_inside_if_branch_captures_outer_values():
    # If W > 2: a Loop over N rows (trip count and rows captured from the outer graph); else: x summed.
    then_nodes = SHAPE_TRIP + [node("ReduceSum", ["x", "axes0"], ["y0"], keepdims=0), node("Sub", ["y0", "y0"], ["yi"]),
                               node("Loop", ["n", "", "yi"], ["t_out", "t_scan"], body=_body([]))]
    then_g = subgraph("then", then_nodes, [], [info("t_out", F32, None)])
    else_nodes = [node("ReduceSum", ["x", "axes0"], ["e_out"], keepdims=0)]
    else_g = subgraph("else", else_nodes, [], [info("e_out", F32, None)])
    nodes = [node("Shape", ["x"], ["sx"]), node("Gather", ["sx", "one"], ["w"], axis=0),
             node("Greater", ["w", "two"], ["c"]), node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    model = make_model(nodes, [info("x", F32, ["N", "W"])], [info("y", F32, None)], INITS)
    assert {"IF", "LOOP"} <= op_names(convert(model))
    check_everywhere(model, _feeds((3, 4), (4, 2), (2, 5)))


def test_carried_value_that_changes_shape_needs_a_constant_trip_count():
    body = subgraph("body", [node("Concat", ["y_in", "y_in"], ["y_out"], axis=0),
                             node("Identity", ["cond_in"], ["cond_out"])],
                    LOOP_INPUTS, [info("cond_out", BOOL, []), info("y_out", F32, None)])
    with pytest.raises(ConversionError, match="changes from .* between iterations"):
        convert(_loop_model(SHAPE_TRIP, body=body, outputs=("y",)))
    constant = _loop_model([node("Constant", [], ["n"], value=const("v", np.array(2, np.int64)))], body=body,
                           outputs=("y",))
    check_everywhere(constant, _feeds((3, 2), (2, 4)))


def test_loop_without_trip_count_or_condition_is_refused():
    with pytest.raises(ConversionError, match="never ends"):
        convert(_loop_model([], trip=""))


def test_zero_iterations_with_scan_outputs_is_refused():
    model = _loop_model([node("Constant", [], ["n"], value=const("v", np.array(0, np.int64)))])
    with pytest.raises(ConversionError, match="would be empty"):
        convert(model)


def test_zero_iterations_keep_the_initial_state():
    model = _loop_model([node("Constant", [], ["n"], value=const("v", np.array(0, np.int64)))],
                        body=_body([], scan=False), outputs=("y",))
    check_everywhere(model, _feeds((3, 2), (2, 4)))
