"""A float32 REDUCE_SUM in a static program runs a kernel made once per plan (reduction.prepared_reduce_sum).

The squeeze-and-excitation blocks of conv nets take a mean as two REDUCE_SUMs over a TRANSPOSE's strided
view. Every run must equal the float64 sum within float32 rounding, and later runs (the prepared kernel)
must give the first (checked) run's bits, on new inputs too.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import evaluate
from tosaconv.interpreter.plan import plan_for
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

RNG = np.random.default_rng(5)


def mean_graph(shape: tuple) -> Graph:
    """y = REDUCE_SUM(REDUCE_SUM(TRANSPOSE(x) to NCHW, axis 2), axis 3) (an SE block's mean, unscaled)."""
    graph = Graph()
    b = Builder(graph, Location("ReduceMean", "se", "onnx"))
    x = graph.add_input("x", TensorType(DType.FP32, shape))
    nchw = b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs((0, 3, 1, 2)))
    rows = b.emit(Op.REDUCE_SUM, nchw, attrs=A.AxisAttrs(2))
    graph.set_outputs([b.emit(Op.REDUCE_SUM, rows, attrs=A.AxisAttrs(3))], ["y"])
    return graph


@pytest.mark.parametrize("shape", [(1, 16, 24, 96), (2, 3, 5, 7), (1, 1, 1, 4)])
def test_later_runs_give_the_first_runs_bits(shape):
    graph = mean_graph(shape)
    for _ in range(2):
        x = RNG.standard_normal(shape).astype(np.float32)
        first = evaluate(graph, {"x": x})["y"]
        truth = x.astype(np.float64).sum(axis=(1, 2)).reshape(shape[0], shape[3], 1, 1)
        np.testing.assert_allclose(first, truth, rtol=1e-4, atol=1e-4)
        for _ in range(2):
            np.testing.assert_array_equal(evaluate(graph, {"x": x})["y"].view(np.uint32), first.view(np.uint32))
        steps = [s for s in plan_for(graph, {}).steps if s.opdef.name == "REDUCE_SUM"]
        assert all(s.call is not s.kernel for s in steps)
        graph = mean_graph(shape)       # a new graph: its first run checked again


def test_an_integer_sum_keeps_the_kernel():
    graph = Graph()
    b = Builder(graph, Location("ReduceSum", "int", "onnx"))
    x = graph.add_input("x", TensorType(DType.INT32, (3, 4)))
    graph.set_outputs([b.emit(Op.REDUCE_SUM, x, attrs=A.AxisAttrs(1))], ["y"])
    data = np.array([[1, 2, 3, 4], [2**31 - 1, 1, 0, 0], [-5, 5, -5, 5]], np.int32)
    for _ in range(3):
        np.testing.assert_array_equal(evaluate(graph, {"x": data})["y"], [[10], [-2**31], [0]])
    step = [s for s in plan_for(graph, {}).steps if s.opdef.name == "REDUCE_SUM"][0]
    assert step.call is step.kernel
