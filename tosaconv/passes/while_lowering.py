"""Lowering a LOOP that cannot be unrolled to TOSA WHILE_LOOP.

A Loop whose condition is computed from tensor data, or whose trip count is
too large to unroll, runs as a WHILE_LOOP when it has no scan outputs (their
length would be data-dependent). The loop carries an int32 iteration counter,
the condition, the state and the tensors the body captured; the cond graph
is ``counter < trip_count and cond``; the body graph is the LOOP body rebuilt
under the bindings, with the iteration number, which the LOOP body reads as
an Index value, turned into int32 tensor arithmetic. A body that uses the
iteration number as a size (a slice bound, a reshape) cannot be static, and
is refused.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Optional, Union

import numpy as np

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.dtypes import DType
from ..ir.graph import Graph, Operation, Value
from ..ir.ops import Op, OpDef
from ..ir.region_rules import iteration_symbol
from ..ir.types import IndexType, ValueType
from ..ir.verifier import verify
from .dce import eliminate_dead_code
from .decay import DataDependentDim, index_value
from .rebuild import rebuild_op

TENSOR_OPS: dict[OpDef, tuple[OpDef, A.Attrs]] = {Op.INDEX_ADD: (Op.ADD, A.NoAttrs()), Op.INDEX_SUB: (Op.SUB, A.NoAttrs()),
               Op.INDEX_MUL: (Op.MUL, A.MulAttrs(0)), Op.INDEX_MIN: (Op.MINIMUM, A.NanModeAttrs()),
               Op.INDEX_MAX: (Op.MAXIMUM, A.NanModeAttrs())}


class Iteration:
    """An Index value computed from the iteration number: an int32 tensor of shape [1] at run time."""

    def __init__(self, tensor: Value) -> None:
        self.tensor = tensor


# A body value while the body is rebuilt: an IR value, or the iteration number's int32 tensor
BodyValue = Union[Value, Iteration]


def lower_to_while(op: Operation, b: Builder, env: dict[str, int], start: int, trip: int, cond: Optional[Value],
                   state: Sequence[Value], captured: Sequence[Value]) -> list[Value]:
    """Iterations ``start`` to ``trip - 1`` of LOOP ``op`` (while ``cond`` holds) as one WHILE_LOOP;
    returns the final state."""
    index_caps = {i: index_value(op, v) for i, v in enumerate(captured) if isinstance(v.type, IndexType)}
    tensors = [v for i, v in enumerate(captured) if i not in index_caps]
    cond = cond if cond is not None else b.const(np.array(True))
    carried = [b.const(np.array(start, np.int32)), cond] + list(state) + tensors
    types = [v.type for v in carried]
    body = _body_graph(op, env, types, len(captured), index_caps)
    loop = b.create(Op.WHILE_LOOP, carried, A.WhileLoopAttrs(_cond_graph(op, types, trip), body))
    return loop.results[2:2 + len(state)]


def _cond_graph(op: Operation, types: list[ValueType], trip: int) -> Graph:
    g = _shell("cond", types)
    b = Builder(g, op.location)
    more = b.emit(Op.GREATER, b.const(np.array(trip, np.int32)), g.inputs[0])
    g.set_outputs([b.emit(Op.LOGICAL_AND, more, g.inputs[1])], ["cond"])
    return g


def _shell(name: str, types: list[ValueType]) -> Graph:
    g = Graph(name=name)
    for i, t in enumerate(types):
        g.add_input(f"{name}_in{i}", t)
    return g


def _body_graph(op: Operation, env: dict[str, int], types: list[ValueType], n_captured: int,
                index_caps: dict[int, int]) -> Graph:
    a, g = op.attrs_as(A.LoopAttrs), _shell("body", types)
    b = Builder(g, op.location)
    counter, cond_in = g.inputs[0], g.inputs[1]
    state_in = g.inputs[2:2 + a.num_state]
    caps_in = iter(g.inputs[2 + a.num_state:])
    caps = [b.index(index_caps[i]) if i in index_caps else next(caps_in) for i in range(n_captured)]
    one = b.const(np.array(1, np.int32))
    nxt = b.emit(Op.ADD, counter, one)
    region = a.body
    head: list[BodyValue] = [Iteration(b.emit(Op.RESHAPE, nxt, attrs=A.ReshapeAttrs((1,))))] + ([cond_in] if a.has_cond else [])
    mapping: dict[int, BodyValue] = {id(v): o for v, o in zip(region.inputs, [*head, *state_in, *caps])}
    _rebuild_body(op, region, b, env, mapping)
    outs = [body_output(op, mapping[id(v)]) for v in region.outputs]
    cond_out = outs[0] if a.has_cond else cond_in
    state_out = outs[int(a.has_cond):int(a.has_cond) + a.num_state]
    g.set_outputs([nxt, cond_out] + state_out + list(g.inputs[2 + a.num_state:]),
                  [f"out{i}" for i in range(len(types))])
    eliminate_dead_code(g)
    _check_static(op, g)
    return g


def _rebuild_body(op: Operation, region: Graph, b: Builder, env: dict[str, int],
                  mapping: dict[int, BodyValue]) -> None:
    symbol = iteration_symbol(region)
    if any(symbol in c.symbols() for c in region.ledger.entries):
        raise DataDependentDim(op, f"{op.location} checks sizes that depend on the iteration number, which a "
                                   "WHILE_LOOP cannot do")
    rebuild_body_ops(op, region, b, mapping, lambda inner, values: rebuild_op(inner, values, b, env))


def rebuild_body_ops(op: Operation, region: Graph, b: Builder, mapping: dict[int, BodyValue],
                     rebuild: Callable[[Operation, list[Value]], list[Value]]) -> None:
    """Each op of a loop body rebuilt with ``b``: one that reads the iteration number as int32 arithmetic
    (:func:`translate`), any other by ``rebuild(op, operands)``; ``mapping`` takes old values to new."""
    for inner in region.ops:
        operands = [mapping[id(v)] for v in inner.operands]
        values = [v for v in operands if not isinstance(v, Iteration)]
        with b.at(inner.location):
            if len(values) < len(operands):
                results: list[BodyValue] = [translate(op, inner, operands, b)]
            else:
                results = list(rebuild(inner, values))
        for old, new in zip(inner.results, results):
            mapping[id(old)] = new


def translate(op: Operation, inner: Operation, operands: list[BodyValue], b: Builder) -> BodyValue:
    """An op on the iteration number, as int32 tensor arithmetic (or a refusal)."""
    if inner.op not in TENSOR_OPS and inner.op is not Op.DIMS_TO_TENSOR:
        raise DataDependentDim(op, f"{op.location} runs a data-dependent number of iterations (a WHILE_LOOP), "
                                   f"but its body uses the iteration number as a size ({inner.op.name} at "
                                   f"{inner.location}), which a TOSA loop body cannot do")
    tensors = [v.tensor if isinstance(v, Iteration) else b.const(np.array([index_value(op, v)], np.int32))
               for v in operands]
    if inner.op in TENSOR_OPS:
        tensor_op, attrs = TENSOR_OPS[inner.op]
        return Iteration(b.emit(tensor_op, *tensors, attrs=attrs))
    t = tensors[0] if len(tensors) == 1 else b.emit(Op.CONCAT, *tensors, attrs=A.AxisAttrs(0))
    dtype = inner.attrs_as(A.DimsToTensorAttrs).dtype
    return t if dtype is DType.INT32 else b.emit(Op.CAST, t, attrs=A.CastAttrs(dtype))


def _check_static(op: Operation, g: Graph) -> None:
    problems = verify(g, require_static=True)
    if problems:
        raise DataDependentDim(op, f"{op.location} would run as a WHILE_LOOP, but its body's shapes depend on "
                                   f"the iteration: {problems[0]}")


def body_output(op: Operation, v: BodyValue) -> Value:
    """A body output: the iteration number itself is refused, as any other use of it as a value."""
    if isinstance(v, Iteration):
        raise DataDependentDim(op, f"{op.location} runs a data-dependent number of iterations (a WHILE_LOOP), "
                                   "but its body returns the iteration number as an Index value")
    return v
