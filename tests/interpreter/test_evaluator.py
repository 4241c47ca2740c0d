"""The evaluator loop and symbol binding: symbolic graphs at several shapes, input checks, located errors."""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import InputError, KernelError, bind_from_shapes, evaluate
from tosaconv.interpreter.plan import build_plan
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType
from tosaconv.symbolic.constraints import Kind, Provenance
from tosaconv.symbolic.expr import add, mul
from tosaconv.symbolic.scope import SymbolInfo

LOC = Location("Reshape", "flatten", "onnx")


def symbolic_graph():
    """x: [batch, seq, 4], mask: [batch, seq] -> (x * mask) reshaped to [batch*seq, 4], plus batch*seq."""
    graph = Graph()
    batch = graph.scope.declare(SymbolInfo("batch", "input 'x' axis 0", input_name="x", axis=0))
    seq = graph.scope.declare(SymbolInfo("seq", "input 'x' axis 1", input_name="x", axis=1))
    b = Builder(graph, LOC)
    x = graph.add_input("x", TensorType(DType.FP32, (batch, seq, 4)))
    mask = graph.add_input("mask", TensorType(DType.FP32, (batch, seq)))
    masked = b.emit(Op.MUL, x, b.emit(Op.RESHAPE, mask, b.get_dim(mask, 0), b.get_dim(mask, 1),
                                      attrs=A.ReshapeAttrs((-1, -1, 1))), attrs=A.MulAttrs())
    rows = b.emit(Op.INDEX_MUL, b.get_dim(x, 0), b.get_dim(x, 1))
    flat = b.emit(Op.RESHAPE, masked, rows, attrs=A.ReshapeAttrs((-1, 4)))
    graph.set_outputs([flat, rows], ["flat", "rows"])
    return graph


@pytest.mark.parametrize("batch,seq", [(2, 3), (5, 7)])
def test_symbolic_graph_runs_at_different_shapes(batch, seq):
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, seq, 4)).astype(np.float32)
    mask = (rng.random((batch, seq)) > 0.5).astype(np.float32)
    out = evaluate(symbolic_graph(), {"x": x, "mask": mask})
    assert list(out) == ["flat", "rows"]
    np.testing.assert_array_equal(out["flat"], (x * mask[:, :, None]).reshape(batch * seq, 4))
    assert int(out["rows"]) == batch * seq


def test_bind_from_shapes_binds_bare_symbols():
    env = bind_from_shapes(symbolic_graph(), {"x": (2, 9, 4), "mask": (2, 9)})
    assert env == {"batch": 2, "seq": 9}


def test_conflicting_symbol_bindings_name_both_places():
    with pytest.raises(InputError) as e:
        bind_from_shapes(symbolic_graph(), {"x": (2, 3, 4), "mask": (2, 5)})
    message = str(e.value)
    assert "input 'mask' axis 1 binds symbol 'seq' = 5" in message
    assert "input 'x' axis 1 bound it to 3" in message
    assert (e.value.input_name, e.value.axis) == ("mask", 1)


def test_given_bindings_must_agree_with_the_shapes():
    with pytest.raises(InputError, match="the given bindings bound it to 4"):
        bind_from_shapes(symbolic_graph(), {"x": (2, 3, 4), "mask": (2, 3)}, {"seq": 4})


def test_static_dim_mismatch():
    with pytest.raises(InputError, match="input 'x' axis 2 must have size 4, but the given array has 5"):
        evaluate(symbolic_graph(), {"x": np.zeros((2, 3, 5), np.float32), "mask": np.zeros((2, 3), np.float32)})


def test_expression_dims_are_solved_and_checked():
    graph = Graph()
    n = graph.scope.declare(SymbolInfo("n", "test"))
    graph.add_input("a", TensorType(DType.FP32, (add(mul(2, n), 1),)))
    graph.add_input("b", TensorType(DType.FP32, (n, mul(n, n))))
    assert bind_from_shapes(graph, {"a": (7,), "b": (3, 9)}) == {"n": 3}
    with pytest.raises(InputError, match=r"input 'b' axis 1 must have size n\*n = 9 \(n = 3 from input 'b' axis 0\)"):
        bind_from_shapes(graph, {"a": (7,), "b": (3, 8)})


def test_a_linear_dim_alone_determines_its_symbol():
    graph = Graph()
    n = graph.scope.declare(SymbolInfo("n", "test"))
    graph.add_input("a", TensorType(DType.FP32, (add(mul(2, n), 1),)))
    assert bind_from_shapes(graph, {"a": (7,)}) == {"n": 3}
    with pytest.raises(InputError, match="input shapes do not determine n; pass a binding"):
        bind_from_shapes(graph, {"a": (8,)})
    assert bind_from_shapes(graph, {"a": (9,)}, {"n": 4}) == {"n": 4}


def test_ledger_constraints_are_checked_with_their_provenance():
    graph = symbolic_graph()
    batch, seq = (graph.inputs[0].type.shape[i] for i in (0, 1))
    graph.ledger.require(Kind.DIVISIBLE, mul(batch, seq), 2, Provenance("Reshape", "pairs", "rows split in two"),
                         graph.scope)
    feed = {"x": np.zeros((3, 3, 4), np.float32), "mask": np.zeros((3, 3), np.float32)}
    with pytest.raises(InputError, match=r"batch\*seq % 2 == 0 does not hold.*\[Reshape 'pairs': rows split in two\]"):
        evaluate(graph, feed)
    feed = {"x": np.zeros((3, 2, 4), np.float32), "mask": np.zeros((3, 2), np.float32)}
    assert evaluate(graph, feed)["flat"].shape == (6, 4)


def test_missing_and_unknown_inputs_are_reported_together():
    with pytest.raises(InputError) as e:
        evaluate(symbolic_graph(), {"x": np.zeros((1, 1, 4), np.float32), "maks": np.zeros((1, 1))})
    assert "missing input 'mask'" in str(e.value)
    assert "unknown input 'maks'" in str(e.value)
    assert "'x', 'mask'" in str(e.value)


def test_wrong_rank():
    with pytest.raises(InputError, match="input 'mask' must have rank 2 .* has rank 3"):
        evaluate(symbolic_graph(), {"x": np.zeros((1, 1, 4), np.float32), "mask": np.zeros((1, 1, 1), np.float32)})


def int_graph():
    graph = Graph()
    x = graph.add_input("ids", TensorType(DType.INT32, (3,)))
    out = Builder(graph, Location("Neg", "neg", "onnx")).emit(Op.NEGATE, x, attrs=A.NegateAttrs())
    graph.set_outputs([out], ["y"])
    return graph


def test_input_dtypes_convert_when_values_fit():
    out = evaluate(int_graph(), {"ids": np.array([1, -2, 3], dtype=np.int64)})["y"]
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [-1, 2, -3])
    with pytest.raises(InputError, match="outside"):
        evaluate(int_graph(), {"ids": np.array([1, 2, 2**40], dtype=np.int64)})
    with pytest.raises(InputError, match="input 'ids' is i32, but the given array holds float64"):
        evaluate(int_graph(), {"ids": np.array([1.0, 2.0, 3.0])})


def identity_graph(dtype: DType, shape):
    graph = Graph()
    x = graph.add_input("x", TensorType(dtype, shape))
    graph.set_outputs([Builder(graph, LOC).emit(Op.IDENTITY, x)], ["y"])
    return graph


def test_unsigned_bool_and_bf16_inputs():
    got = evaluate(identity_graph(DType.INT8, (2,)), {"x": np.array([200, 5], np.uint8)})["y"]
    np.testing.assert_array_equal(got, [-56, 5])                     # unsigned data keeps its bits
    got = evaluate(identity_graph(DType.BOOL, (3,)), {"x": np.array([0, 1, 1])})["y"]
    np.testing.assert_array_equal(got, [False, True, True])
    with pytest.raises(InputError, match="input 'x' is bool"):
        evaluate(identity_graph(DType.BOOL, (1,)), {"x": np.array([2])})
    got = evaluate(identity_graph(DType.BF16, (1,)), {"x": np.array([1.0 + 2.0**-9])})["y"]
    np.testing.assert_array_equal(got, [1.0])                        # rounded to bfloat16


def test_kernel_errors_carry_the_op_and_its_location():
    graph = Graph()
    where = Location("Div", "model/div", "onnx")
    a = graph.add_input("a", TensorType(DType.INT32, (2,)))
    d = graph.add_input("d", TensorType(DType.INT32, (2,)))
    out = Builder(graph, where).emit(Op.INTDIV, a, d)
    graph.set_outputs([out], ["q"])
    with pytest.raises(KernelError) as e:
        evaluate(graph, {"a": np.array([1, 2], np.int32), "d": np.array([1, 0], np.int32)})
    assert str(e.value) == "while running INTDIV at Div 'model/div': INTDIV by zero"
    assert e.value.location == where
    assert e.value.op_name == "INTDIV"
    assert isinstance(e.value.__cause__, ValueError)


def test_results_that_contradict_their_type_are_reported():
    graph = Graph()
    x = graph.add_input("x", TensorType(DType.FP32, (2, 3)))
    wrong = TensorType(DType.FP32, (3, 3))
    out = Builder(graph, LOC).emit(Op.IDENTITY, x, result_type=wrong)
    graph.set_outputs([out], ["y"])
    with pytest.raises(KernelError, match=r"has shape \[2, 3\], but its type says <3x3>"):
        evaluate(graph, {"x": np.zeros((2, 3), np.float32)})


def test_intermediates_are_released_after_their_last_use():
    graph = Graph()
    b = Builder(graph, LOC)
    x = graph.add_input("x", TensorType(DType.FP32, (2,)))
    a = b.emit(Op.ABS, x)
    n = b.emit(Op.NEGATE, a, attrs=A.NegateAttrs())
    s = b.emit(Op.ADD, n, a)
    graph.set_outputs([s, n], ["s", "n"])
    schedule = [step.release for step in build_plan(graph, {})]
    assert schedule == [["x"], [], [a.name]]          # n is an output: kept to the end
    out = evaluate(graph, {"x": np.array([-1.0, 2.0], np.float32)})
    np.testing.assert_array_equal(out["s"], [0.0, 0.0])
    np.testing.assert_array_equal(out["n"], [-1.0, -2.0])


def test_a_graph_changed_between_runs_runs_as_changed():
    """The evaluator reuses a graph's plan between runs; a pass that edits the graph in place (new ops, a
    rewired operand, new outputs, a result's type) must still be run as it is now, not as it was."""
    graph = Graph()
    b = Builder(graph, LOC)
    x = graph.add_input("x", TensorType(DType.FP32, (2,)))
    a = b.emit(Op.ABS, x)
    graph.set_outputs([a], ["y"])
    data = np.array([-1.5, 2.0], np.float32)
    np.testing.assert_array_equal(evaluate(graph, {"x": data})["y"], np.abs(data))
    n = b.emit(Op.NEGATE, a, attrs=A.NegateAttrs())
    graph.set_outputs([n], ["y"])
    np.testing.assert_array_equal(evaluate(graph, {"x": data})["y"], -np.abs(data))
    graph.ops[-1].operands = [x]                       # rewired, as passes/rewrite.py does
    np.testing.assert_array_equal(evaluate(graph, {"x": data})["y"], -data)
    n.type = TensorType(DType.FP32, (3,))              # a result type the kernel no longer meets
    with pytest.raises(KernelError, match=r"has shape \[2\], but its type says <3>"):
        evaluate(graph, {"x": data})


def test_a_graph_output_can_be_an_input():
    graph = Graph()
    x = graph.add_input("x", TensorType(DType.FP32, (1,)))
    graph.set_outputs([x, x], ["same", "again"])
    out = evaluate(graph, {"x": np.array([4.0], np.float32)})
    assert out["same"][0] == out["again"][0] == 4.0
