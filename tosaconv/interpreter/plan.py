"""The execution plan of one graph: everything the evaluator's loop needs per op, worked out once per run.

Walking the IR for every op of every run (the kernel lookup by name, each
result's numpy dtype from its enum, its dims through the symbolic algebra,
its byte size for ``--max-tensor-bytes``, which values die after it) cost
more than the kernels themselves on small inputs. :func:`build_plan` does
that work in one pass over the ops: a :class:`Step` per op holds its kernel,
its operand names, the values it releases and a :class:`Slot` per result
with the result's numpy dtype and, when its type is static, its shape and
byte size. The evaluator then checks a kernel's result with two tuple
comparisons and the budget with one integer comparison. Results typed by
symbols keep the general checks, under the run's bindings.
"""
from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np

from ..ir.dtypes import DType
from ..ir.types import IndexType
from ..limits import MAX_DIM
from .registry import kernel_for

_NUMPY: dict = {d: d.numpy for d in DType}   # the enum's property builds a np.dtype on every call


class Slot:
    """One result of a step: its IR value, numpy dtype, static shape and byte size (or None)."""

    __slots__ = ("value", "name", "index", "dtype", "shape", "nbytes", "checks")

    def __init__(self, value, checks: tuple) -> None:
        self.value = value
        self.name: str = value.name
        self.index: bool = isinstance(value.type, IndexType)
        self.dtype: Optional[np.dtype] = None if self.index else _NUMPY[value.type.dtype]
        self.shape: Optional[tuple] = None
        self.nbytes: Optional[int] = None
        self.checks: tuple = checks
        if not self.index and all(type(d) is int for d in value.type.shape):
            self.shape = tuple(value.type.shape)
            self.nbytes = _static_bytes(self.shape, self.dtype.itemsize)


class Step:
    """One op of the plan: the op, its kernel, operand names, result slots, and names dead after it."""

    __slots__ = ("op", "kernel", "operands", "results", "release")

    def __init__(self, op, kernel: Callable, results: list) -> None:
        self.op = op
        self.kernel = kernel
        self.operands: list = [v.name for v in op.operands]
        self.results: list = results
        self.release: list = []


def _static_bytes(shape: tuple, itemsize: int) -> int:
    """The byte size of a static shape; -1 when a dim is negative or above TOSA's int32 limit, so the
    evaluator always hands such a shape to the full budget check (which reports it)."""
    if any(d < 0 or d > MAX_DIM for d in shape):
        return -1
    return math.prod(shape) * itemsize


def build_plan(graph, checks: dict) -> list:
    """The steps of ``graph``, in op order; ``checks`` maps a value name to its assumptions."""
    steps, last = [], {}
    keep = {v.name for v in graph.outputs}
    for position, op in enumerate(graph.ops):
        slots = [Slot(v, tuple(checks.get(v.name, ()))) for v in op.results]
        steps.append(Step(op, kernel_for(op.op), slots))
        for name in steps[-1].operands:
            last[name] = position
        for slot in slots:
            last[slot.name] = position
    for name, position in last.items():
        if name not in keep:
            steps[position].release.append(name)
    return steps
