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

A :class:`Plan` also learns from its first run. A step whose kernel returned
exactly the arrays its static types promise (numpy arrays of that dtype and
shape) is *trusted*: for a static type the dtype and shape follow from the
operands' types alone, so later runs call its kernel without checking the
results again. A CONST's value is kept once it is made, and later runs put
every constant in place before the first op instead of calling the kernel.
The first run is the checked one: it reports a kernel's failure or a result
that contradicts its type, and a plan whose run failed stays unchecked. It
also notes which results share memory with an operand, so that in a static
program a float elementwise step may write into an operand that dies with it
(inplace.py), and a convolution may skip a bias of zeros (zero_bias.py). A static program's
depthwise and 1x1 convolutions with constant weights get kernels made once for them (convolution.py).
A warm run's neighbour steps whose intermediate value no one else reads run as one step (chains.py), a
squeeze-excitation gate's tiny branch runs as one step too (gates.py), as do a convolution and the constant
elementwise steps after it (epilogues.py), and a PAD that its only reader slices
back inside the input passes the input on (pad_slices.py). A later run finds its plan still valid without
comparing every op when no op or value of a planned graph was assigned to since (watch.py).
"""
from __future__ import annotations

import math
import weakref
from collections import Counter
from itertools import chain
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from ..ir.dtypes import DType
from ..ir.graph import walk_graphs
from ..ir.types import IndexType
from ..limits import MAX_DIM
from .chains import chain_steps
from .convolution import prepared_depthwise, prepared_pointwise, prepared_window
from .data_layout import prepared_slice
from .reduction import prepared_reduce_sum
from .epilogues import fuse_epilogues
from .errors import KernelError
from .gates import fuse_gates
from .inplace import inplace_kernel, keeps_operands, produces_fresh
from .pad_slices import skip_pads_sliced_away
from .registry import kernel_for
from .watch import edits, watch
from .windows import KEPT_PADDED_PER_PLAN, KeptBytes
from .zero_bias import skip_zero_biases

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

    __slots__ = ("op", "opdef", "kernel", "call", "operands", "results", "names", "release", "checkable",
                 "trusted", "constant", "fresh")

    def __init__(self, op: Operation, kernel: Callable, results: list) -> None:
        self.op = op
        self.opdef = op.op
        self.kernel = kernel
        self.call: Callable = kernel     # what a warm run calls: the kernel, or its in-place form
        self.operands: list = [v.name for v in op.operands]
        self.results: list = results
        self.names: tuple = tuple(slot.name for slot in results)
        self.release: list = []
        # results a first run can verify once for all: static types, no assumption to check on them
        self.checkable: bool = all(slot.shape is not None and not slot.checks for slot in results)
        self.trusted = False      # the first run verified its results
        # a CONST whose value a run may make once and keep (the plan holds it while the graph lives)
        self.constant: bool = self.checkable and op.op.name == "CONST" and not op.operands
        self.fresh = False        # the first run saw it return writeable arrays sharing no operand's memory

    def learn(self, results: list, args: list) -> list:
        """Trust this step from now on when ``results`` (its kernel's, unconverted) are exactly the
        arrays its static types promise; return the operand names whose memory a result shares."""
        if self.checkable and len(results) == len(self.results):
            self.trusted = all(type(r) is np.ndarray and r.dtype == slot.dtype and r.shape == slot.shape
                               for r, slot in zip(results, self.results))
        arrays = [r for r in results if isinstance(r, np.ndarray)]
        shared = [name for name, a in zip(self.operands, args)
                  if isinstance(a, np.ndarray) and any(np.may_share_memory(r, a) for r in arrays)]
        self.fresh = self.trusted and not shared and all(r.flags.writeable for r in arrays)
        return shared


def _static_bytes(shape: tuple, itemsize: int) -> int:
    """The byte size of a static shape; -1 when a dim is negative or above TOSA's int32 limit, so the
    evaluator always hands such a shape to the full budget check (which reports it)."""
    if shape and (min(shape) < 0 or max(shape) > MAX_DIM):
        return -1
    return math.prod(shape) * itemsize


def _op_fields(ops: list) -> list:
    """Each op's kind, attributes, operand list and result list, one list per field (a comprehension reads a
    slot several times faster than attrgetter, and a list of the fields themselves is cheaper than of tuples)."""
    return [[o.op for o in ops], [o.attrs for o in ops], [o.operands for o in ops], [o.results for o in ops]]


def _value_fields(values: list) -> list:
    """Each value's type and name, one list per field (as :func:`_op_fields`)."""
    return [[v.type for v in values], [v.name for v in values]]


def _same(a: list, b: list) -> bool:
    """``a == b`` for lists of field tuples: C loops that stop at identical objects, the usual case. Two
    different attribute objects may not compare (a dataclass holding arrays): then they differ."""
    try:
        return a == b
    except (ValueError, TypeError):
        return False


class Plan:
    """A graph's steps and what its first run taught: the constants' values, which steps to trust, which
    values another's result shares memory with (so which operands a step may overwrite)."""

    __slots__ = ("ref", "ops", "fields", "values", "value_fields", "ends", "steps", "run_steps", "constants",
                 "warm", "max_bytes", "shared", "edits")

    def __init__(self, ref: weakref.ref, steps: list, graph: Graph) -> None:
        self.ref = ref
        self.ops: list = list(graph.ops)
        # the graph's inputs (a prepared kernel's geometry comes from its operands' types) and each op's results
        self.values: list = list(chain(graph.inputs, chain.from_iterable(op.results for op in self.ops)))
        # the edit count (watch.py) under which the fields below were read, or None when some op or value
        # cannot be watched; watched first, so that any later assignment to them changes the count
        self.edits: Optional[int] = edits() if watch(chain(self.ops, self.values)) else None
        # what the plan depends on, held (so no id is reused): each op's kind, attributes, operand and
        # result lists; each result's type and name; the outputs and assumptions
        self.fields: list = _op_fields(self.ops)
        self.value_fields: list = _value_fields(self.values)
        self.ends: tuple = (list(graph.outputs), list(getattr(graph, "assumptions", ())), list(graph.inputs))
        self.steps = steps
        self.run_steps: list = steps      # a warm run's steps: all but the constants it keeps
        self.constants: dict = {}
        self.shared: set = set()      # values some op returned a view of (or itself): never written in place
        self.warm = False          # a run completed: its constants are kept, its verifiable steps checked
        sizes = [slot.nbytes for step in steps for slot in step.results if slot.nbytes is not None]
        # a warm run skips the budget check of static results when the budget allows the largest of them
        self.max_bytes: float = math.inf if any(n < 0 for n in sizes) else max(sizes, default=0)

    def matches(self, graph: Graph) -> bool:
        """True when ``graph`` still has the inputs, ops, attributes, values and types the plan was built from.
        Passes replace an op's operand list rather than edit it (passes/rewrite.py), so the lists are
        compared as objects; a changed result list means other values, whose types are not looked at.
        The graph's op list, inputs, outputs and assumptions are compared every time; the ops' and values' fields
        only when some watched op or value was assigned to since they last matched (watch.py)."""
        ops = graph.ops
        if not (ops == self.ops and self.ends == (list(graph.outputs), list(getattr(graph, "assumptions", ())),
                                                  list(graph.inputs))):
            return False
        seen = edits()
        if seen == self.edits:
            return True
        if not (_same(_op_fields(ops), self.fields) and _same(_value_fields(self.values), self.value_fields)):
            return False
        if self.edits is not None:
            self.edits = seen           # the fields matched as of this count
        return True

    def learn(self, step: Step, results: list, args: list) -> None:
        """Record what a cold run saw ``step`` return (its kernel's results, unconverted) from ``args``."""
        self.shared.update(step.learn(results, args))
        if step.constant and step.trusted:
            self.constants[step.names[0]] = results[0]

    def ready(self) -> None:
        """A cold run completed: later runs may take the warm path, without the constants it kept and with
        the elementwise steps that may write into a dying operand doing so."""
        self.run_steps = [step for step in self.steps if not (step.constant and step.names[0] in self.constants)]
        # what the first run saw of who shares whose memory holds for later runs when every shape is static;
        # under symbols, a later binding may make a view where the first made a copy
        static = all(step.checkable for step in self.steps)
        owned = _owned_values(self.steps, self.shared) if static else {}
        kept = KeptBytes(KEPT_PADDED_PER_PLAN)       # the padded input buffers its convolutions keep
        for step in self.steps:
            special = inplace_kernel(step, owned, self.constants) or (_prepared(step, self.constants, kept)
                                                                      if static else None)
            step.call = step.kernel if special is None else special
        outputs = {v.name for v in self.ends[0]}
        readers = readers_of(self.steps)
        skip_zero_biases(self.steps, readers, self.constants, outputs)
        if static:
            skip_pads_sliced_away(self.steps, readers, outputs)
            self.run_steps = fuse_gates(self.run_steps, readers, self.constants, outputs)
            self.run_steps = fuse_epilogues(self.run_steps, readers, self.constants, outputs, owned)
        self.run_steps = chain_steps(self.run_steps, readers_of(self.run_steps), outputs)
        self.warm = True


def readers_of(steps: list) -> dict:
    """Each value name read by ``steps`` -> the steps that read it, in order, each once."""
    readers: dict = {}
    for step in steps:
        for name in dict.fromkeys(step.operands):
            readers.setdefault(name, []).append(step)
    return readers


def _prepared(step: Step, constants: dict, kept: KeptBytes) -> Optional[Callable]:
    """A kernel made once for a trusted convolution with constant float32 weights (and, for CONV2D, bias) on a
    static float32 input (convolution.prepared_depthwise, prepared_pointwise, prepared_window), or a float32
    REDUCE_SUM's or a SLICE's without the kernel's per-call checks (reduction.prepared_reduce_sum,
    data_layout.prepared_slice), or None."""
    kind = step.opdef.name
    if step.trusted and kind == "REDUCE_SUM":
        return prepared_reduce_sum(step.op)
    if step.trusted and kind == "SLICE":
        return prepared_slice(step.op)
    if not step.trusted or kind not in ("CONV2D", "DEPTHWISE_CONV2D"):
        return None
    weights, bias, x = constants.get(step.operands[1]), constants.get(step.operands[2]), step.op.operands[0].type
    if not isinstance(weights, np.ndarray) or step.results[0].dtype != np.float32 or x.dtype != DType.FP32 \
            or not set(map(type, x.shape)) <= _INT:
        return None
    if kind == "DEPTHWISE_CONV2D":
        return prepared_depthwise(step.op, weights, tuple(x.shape), kept)
    pointwise = prepared_pointwise(step.op, weights, tuple(x.shape), bias) if isinstance(bias, np.ndarray) else None
    return pointwise or prepared_window(step.op, weights, tuple(x.shape), kept)


def _owned_values(steps: list, shared: set) -> dict:
    """name -> static shape of each float32 value no one but its single reader at a time can see: made
    new by a fresh kernel, never viewed by another op's result, never kept by a stateful or region op."""
    kept = {name for step in steps if keeps_operands(step) for name in step.operands}
    owned = {}
    for step in steps:
        if step.fresh and produces_fresh(step):
            for slot in step.results:
                if slot.name not in shared and slot.name not in kept and slot.dtype == np.float32:
                    owned[slot.name] = slot.shape
    return owned


_CACHE: dict = {}   # id(graph) -> Plan, dropped when the graph is collected


def plan_for(graph: Graph, checks: dict) -> Plan:
    """The plan of ``graph``: built once and reused by later runs (a Loop body runs once per iteration;
    a benchmark runs a program many times) while the graph's ops, values and types stay the same.
    Building it reports every op (in the graph or its regions) that has no kernel."""
    key = id(graph)
    cached = _CACHE.get(key)
    if cached is not None and cached.ref() is graph and cached.matches(graph):
        return cached
    check_kernels(graph)
    plan = _CACHE[key] = Plan(weakref.ref(graph, lambda ref: _forget(key, ref)), build_plan(graph, checks), graph)
    return plan


def check_kernels(graph: Graph) -> None:
    """Report every op without a kernel at once, with counts and first locations."""
    missing: Counter = Counter()
    first: dict = {}
    for op in (op for g in walk_graphs(graph) for op in g.ops):
        if kernel_for(op.op) is None:
            missing[op.op.name] += 1
            first.setdefault(op.op.name, op.location)
    if missing:
        listing = "; ".join(f"{name} x{n} (first at {first[name]})" for name, n in sorted(missing.items()))
        raise KernelError(f"the interpreter has no kernel for: {listing}",
                          location=first[min(missing)], op_name=min(missing))


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
