"""Test helpers: build one-op graphs and run them through the evaluator.

Operands are given as numpy arrays (graph inputs, with the IR type read from
the array's dtype, int64 meaning INT48) or Python ints (Index values made by
INDEX_CONST). The op's result type comes from its shape rule unless a test
passes one, as RESCALE and CAST-like ops need.
"""
from __future__ import annotations

import numpy as np

from tosaconv.interpreter import evaluate
from tosaconv.interpreter.chains import _Chain
from tosaconv.interpreter.plan import plan_for
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.types import TensorType

NUMPY_TO_IR = {
    np.dtype(np.bool_): DType.BOOL, np.dtype(np.int8): DType.INT8, np.dtype(np.int16): DType.INT16,
    np.dtype(np.int32): DType.INT32, np.dtype(np.int64): DType.INT48, np.dtype(np.float16): DType.FP16,
    np.dtype(np.float32): DType.FP32,
}

LOC = Location("TestOp", "under_test", "test")


def one_op_graph(op, operands, attrs=None, result_type=None, types=None):
    """A graph computing ``op(*operands)``; returns ``(graph, feed)``."""
    graph = Graph()
    b = Builder(graph, LOC)
    values, feed = [], {}
    for i, x in enumerate(operands):
        if isinstance(x, int):
            values.append(b.index(x))
            continue
        x = np.asarray(x)
        dtype = (types or {}).get(i, NUMPY_TO_IR[x.dtype])
        values.append(graph.add_input(f"in{i}", TensorType(dtype, x.shape)))
        feed[f"in{i}"] = x
    out = b.emit(op, *values, attrs=attrs, result_type=result_type)
    graph.set_outputs([out], ["out"])
    return graph, feed


def run_op(op, operands, attrs=None, result_type=None, types=None) -> np.ndarray:
    """Evaluate ``op`` on ``operands`` and return its one result."""
    graph, feed = one_op_graph(op, operands, attrs, result_type, types)
    return evaluate(graph, feed)["out"]


def tensor(dtype: DType, shape) -> TensorType:
    return TensorType(dtype, tuple(shape))


def fused_steps(graph: Graph, kind: type) -> list:
    """The warm-plan calls of ``kind`` (a fused step's class) in ``graph``: top-level steps and chain links."""
    found = []
    for step in plan_for(graph, {}).run_steps:
        calls = [step.call] + ([step.call.call] + [c for _, c, _ in step.call.links] if isinstance(step.call, _Chain) else [])
        found += [c for c in calls if isinstance(c, kind)]
    return found
