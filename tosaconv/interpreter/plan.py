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
import weakref
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from ..ir.dtypes import DType
from ..ir.types import IndexType
from ..limits import MAX_DIM
from .registry import kernel_for

if TYPE_CHECKING:
    from ..ir.graph import Graph, Operation, Value

_NUMPY: dict = {d.value: d.numpy for d in DType}   # by value: the enum's own hash and property are slow
_INT = {int}


class Slot:
    """One result of a step: its IR value, numpy dtype, static shape and byte size (or None)."""

    __slots__ = ("value", "type", "name", "index", "dtype", "shape", "nbytes", "checks")

    def __init__(self, value: Value, checks: tuple) -> None:
        kind = value.type
        self.value = value
        self.type = kind
        self.name: str = value.name
        self.index: bool = kind.__class__ is IndexType
        self.dtype: Optional[np.dtype] = None if self.index else _NUMPY[kind.dtype._value_]
        self.shape: Optional[tuple] = None
        self.nbytes: Optional[int] = None
        self.checks: tuple = checks
        if not self.index and set(map(type, kind.shape)) <= _INT:
            self.shape = kind.shape
            self.nbytes = _static_bytes(kind.shape, self.dtype.itemsize)


class Step:
    """One op of the plan: the op, its kernel, operand names, result slots, and names dead after it."""

    __slots__ = ("op", "opdef", "kernel", "operand_values", "result_values", "operands", "results", "release")

    def __init__(self, op: Operation, kernel: Callable, results: list) -> None:
        self.op = op
        self.opdef = op.op
        self.kernel = kernel
        self.operand_values: tuple = tuple(op.operands)
        self.result_values: tuple = tuple(op.results)
        self.operands: list = [v.name for v in op.operands]
        self.results: list = results
        self.release: list = []


def _static_bytes(shape: tuple, itemsize: int) -> int:
    """The byte size of a static shape; -1 when a dim is negative or above TOSA's int32 limit, so the
    evaluator always hands such a shape to the full budget check (which reports it)."""
    if shape and (min(shape) < 0 or max(shape) > MAX_DIM):
        return -1
    return math.prod(shape) * itemsize


class _Cached:
    """A graph's plan and what it was built from, to tell whether the graph changed since."""

    __slots__ = ("ref", "steps", "outputs", "assumptions")

    def __init__(self, ref: weakref.ref, steps: list, graph: Graph) -> None:
        self.ref = ref
        self.steps = steps
        self.outputs: tuple = tuple(graph.outputs)
        self.assumptions: tuple = tuple(getattr(graph, "assumptions", ()))

    def matches(self, graph: Graph) -> bool:
        """True when ``graph`` still has the ops, values and types the plan was built from."""
        ops, steps = graph.ops, self.steps
        if (len(ops) != len(steps) or tuple(graph.outputs) != self.outputs
                or tuple(getattr(graph, "assumptions", ())) != self.assumptions):
            return False
        for op, step in zip(ops, steps):
            if (op is not step.op or op.op is not step.opdef or tuple(op.operands) != step.operand_values
                    or tuple(op.results) != step.result_values):
                return False
            for slot in step.results:
                if slot.value.type is not slot.type or slot.value.name != slot.name:
                    return False
        return True


_CACHE: dict = {}   # id(graph) -> _Cached, dropped when the graph is collected


def plan_for(graph: Graph, checks: dict) -> list:
    """The plan of ``graph``: built once and reused by later runs (a Loop body runs once per iteration;
    a benchmark runs a program many times) while the graph's ops, values and types stay the same."""
    key = id(graph)
    cached = _CACHE.get(key)
    if cached is not None and cached.ref() is graph and cached.matches(graph):
        return cached.steps
    steps = build_plan(graph, checks)
    _CACHE[key] = _Cached(weakref.ref(graph, lambda ref: _forget(key, ref)), steps, graph)
    return steps


def _forget(key: int, ref: weakref.ref) -> None:
    if key in _CACHE and _CACHE[key].ref is ref:
        del _CACHE[key]


def build_plan(graph: Graph, checks: dict) -> list:
    """The steps of ``graph``, in op order; ``checks`` maps a value name to its assumptions."""
    steps, last = [], {}
    keep = {v.name for v in graph.outputs}
    for position, op in enumerate(graph.ops):
        slots = [Slot(v, checks.get(v.name, ())) for v in op.results]
        steps.append(Step(op, kernel_for(op.op), slots))
        for name in steps[-1].operands:
            last[name] = position
        for slot in slots:
            last[slot.name] = position
    for name, position in last.items():
        if name not in keep:
            steps[position].release.append(name)
    return steps
