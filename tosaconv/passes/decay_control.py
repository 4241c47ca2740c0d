"""Decay rules of the control-flow ops: inline, unroll, or specialize the regions.

An IF whose Index condition is bound, or a COND_IF whose condition folded to a
constant, is replaced by the taken branch, inlined into the enclosing graph
(the branch's ledger is checked then, since only the taken branch's facts must
hold). A COND_IF on tensor data stays a COND_IF whose regions are rebuilt as
static regions (Index inputs become constants inside). A LOOP whose trip count
is bound is unrolled: the body is inlined once per iteration with its
iteration symbol bound, until the trip count or a condition that folded to
false ends it. From an iteration whose condition depends on tensor data (or
past ``MAX_UNROLL``), the rest of a loop without scan outputs runs as a TOSA
WHILE_LOOP (:mod:`.while_lowering`); with scan outputs it is refused.
"""
from __future__ import annotations

from ..interpreter.binding import bare_symbol
from ..interpreter.control_flow import truth
from ..ir import attrs as A
from collections.abc import Sequence
from typing import Optional

from ..ir.builder import Builder
from ..ir.graph import Graph, Operation, Value
from ..ir.ops import Op
from ..ir.region_rules import iteration_symbol, loop_groups
from ..ir.types import IndexType
from ..symbolic.expr import is_static, subs
from .dce import eliminate_dead_code
from .decay import ANY, EXACT, DataDependentDim, decays, index_value
from .rebuild import check_ledger, rebuild_ops
from .while_lowering import lower_to_while

MAX_UNROLL = 1024   # iterations; a longer loop runs as a WHILE_LOOP (unrolled, it would bloat the program)


def const_truth(v: Value) -> Optional[bool]:
    """The value of a constant condition, or None when it depends on tensor data."""
    if v.producer is None or v.producer.op is not Op.CONST:
        return None
    return truth(v.producer.attrs_as(A.ConstAttrs).values)


def inline_region(region: Graph, b: Builder, env: dict[str, int], operands: Sequence[Value], what: str) -> list[Value]:
    """Rebuild ``region``'s ops into ``b`` with its inputs bound to ``operands``; returns its outputs."""
    check_ledger(region, env, f"{what}: ")
    mapping: dict[int, Value] = {id(v): o for v, o in zip(region.inputs, operands)}
    rebuild_ops(region, b, env, mapping)
    return [mapping[id(v)] for v in region.outputs]


def static_region(op: Operation, region: Graph, env: dict[str, int], operands: Sequence[Value],
                  what: str) -> tuple[Graph, list[Value]]:
    """``(region rebuilt under env, the operands it still takes)``: Index inputs become constants."""
    env = dict(env)
    check_ledger(region, env, f"{what}: ")
    new = region.region_shell(region.name)
    b, mapping, kept = Builder(new), dict[int, Value](), list[Value]()
    for v, outer in zip(region.inputs, operands):
        if isinstance(outer.type, IndexType):
            mapping[id(v)] = b.index(index_value(op, outer))
        else:
            mapping[id(v)] = new.add_input(v.name, outer.type)
            kept.append(outer)
    rebuild_ops(region, b, env, mapping)
    new.set_outputs([mapping[id(v)] for v in region.outputs], region.output_names)
    eliminate_dead_code(new)
    return new, kept


@decays(Op.IF, needs=ANY)   # picks a branch; the branch's ops check their own
def decay_if(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    a = op.attrs_as(A.CondIfAttrs)
    taken = a.then_graph if index_value(op, operands[0]) else a.else_graph
    return inline_region(taken, b, env, operands[1:], f"the taken branch of {op.location}")


@decays(Op.COND_IF, needs=ANY)
def decay_cond_if(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    a = op.attrs_as(A.CondIfAttrs)
    cond, ins = operands[0], operands[1:]
    taken = const_truth(cond)
    if taken is not None:
        branch = a.then_graph if taken else a.else_graph
        return inline_region(branch, b, env, ins, f"the taken branch of {op.location}")
    then_g, kept = static_region(op, a.then_graph, env, ins, f"the then branch of {op.location}")
    else_g, _ = static_region(op, a.else_graph, env, ins, f"the else branch of {op.location}")
    return b.create(Op.COND_IF, [cond] + kept, A.CondIfAttrs(then_g, else_g)).results


@decays(Op.WHILE_LOOP, needs=EXACT)
def decay_while_loop(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    w = op.attrs_as(A.WhileLoopAttrs)
    cond_g, kept = static_region(op, w.cond_graph, env, operands, f"the cond graph of {op.location}")
    body_g, _ = static_region(op, w.body_graph, env, operands, f"the body graph of {op.location}")
    return b.create(Op.WHILE_LOOP, kept, A.WhileLoopAttrs(cond_g, body_g)).results


@decays(Op.LOOP, needs=EXACT)
def decay_loop(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    a = op.attrs_as(A.LoopAttrs)
    groups = loop_groups(operands[1:], a)
    cond = groups["cond"][0] if a.has_cond else None
    state, stacks = list(groups["state"]), [list[Value]() for _ in a.scan_output_axes]
    count, trip = 0, index_value(op, operands[0])
    if trip > MAX_UNROLL and cond is None:   # it surely runs them all: too many to unroll
        return _while_rest(op, b, env, 0, trip, cond, state, groups["captured"], _TOO_LONG)
    for k in range(trip):
        if _stops(op, cond):
            break
        if k >= MAX_UNROLL or (cond is not None and const_truth(cond) is None):
            # Data-dependent from here on (or too long): the remaining iterations run as one WHILE_LOOP.
            why = _TOO_LONG if k >= MAX_UNROLL else "continues while a condition computed from tensor data holds"
            return _while_rest(op, b, env, k, trip, cond, state, groups["captured"], why)
        env_k = dict(env, **{iteration_symbol(a.body): k + 1})
        slices = [_slice_at(b, x, axis, k, rev) for x, axis, rev
                  in zip(groups["scan"], a.scan_input_axes, a.scan_input_reverse)]
        head = [b.index(k + 1)] + ([cond] if cond is not None else [])
        outs = inline_region(a.body, b, env_k, head + state + slices + groups["captured"],
                             f"iteration {k} of {op.location}")
        if cond is not None:
            cond, outs = outs[0], outs[1:]
        state = outs[:a.num_state]
        for stack, out in zip(stacks, outs[a.num_state:]):
            stack.append(out)
        count += 1
    _bind_iterations(op, count, env)
    return state + [_stack(op, b, s, axis, rev) for s, axis, rev
                    in zip(stacks, a.scan_output_axes, a.scan_output_reverse)]


def _stops(op: Operation, cond: Optional[Value]) -> bool:
    return cond is not None and const_truth(cond) is False


_TOO_LONG = f"runs more than {MAX_UNROLL} iterations"


def _while_rest(op: Operation, b: Builder, env: dict[str, int], k: int, trip: int, cond: Optional[Value],
                state: list[Value], captured: list[Value], why: str) -> list[Value]:
    if op.attrs_as(A.LoopAttrs).scan_output_axes:
        raise DataDependentDim(op, f"{op.location} {why}, so it cannot be unrolled, and its scan outputs would "
                                   "have a length known only when it runs (a WHILE_LOOP needs fixed shapes)")
    return lower_to_while(op, b, env, k, trip, cond, state, captured)


def _bind_iterations(op: Operation, count: int, env: dict[str, int]) -> None:
    """The scan outputs' length: bind it when it was data-dependent, check it otherwise."""
    a = op.attrs_as(A.LoopAttrs)
    n = subs(a.iterations[0], env)
    if is_static(n):
        if n != count and a.scan_output_axes:
            raise DataDependentDim(op, f"{op.location} ran {count} iterations, but its type says {n}")
        return
    name = bare_symbol(n)
    if name is None:
        raise DataDependentDim(op, f"{op.location} has iteration count {n}, which the bindings do not fix")
    env[name] = count


def _slice_at(b: Builder, x: Value, axis: int, k: int, reverse: int) -> Value:
    shape = x.tensor_type.static_shape()
    index = shape[axis] - 1 - k if reverse else k
    start = tuple(index if i == axis else 0 for i in range(len(shape)))
    size = tuple(1 if i == axis else d for i, d in enumerate(shape))
    piece = b.emit(Op.SLICE, x, attrs=A.SliceAttrs(start, size))
    return b.emit(Op.RESHAPE, piece, attrs=A.ReshapeAttrs(shape[:axis] + shape[axis + 1:]))


def _stack(op: Operation, b: Builder, slices: list[Value], axis: int, reverse: int) -> Value:
    if not slices:
        raise DataDependentDim(op, f"{op.location} runs no iterations, so its scan outputs would be empty "
                                   "(TOSA dims are >= 1)")
    pieces = []
    for s in (slices[::-1] if reverse else slices):
        shape = s.tensor_type.static_shape()
        pieces.append(b.emit(Op.RESHAPE, s, attrs=A.ReshapeAttrs(shape[:axis] + (1,) + shape[axis:])))
    return pieces[0] if len(pieces) == 1 else b.emit(Op.CONCAT, *pieces, attrs=A.AxisAttrs(axis))
