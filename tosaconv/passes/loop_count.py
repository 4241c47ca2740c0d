"""How many iterations a LOOP with a condition runs, when its condition counts up to dims.

TensorFlow's ``map_fn``/``while_loop`` exports an ONNX Loop whose trip count is
"unbounded" and whose condition is ``i < N`` (often twice: the loop counter and
the element counter), with ``N`` a dim read by Shape and ``i`` a state that
starts at a constant and grows by a constant each iteration. The count is then
a dim expression, exactly, though the importer gave it a data-dependent symbol.
:func:`proven_count` finds it by evaluating the condition symbolically:

- a state is affine in the iteration number ``k`` when its update is
  ``state + c`` and its initial value a constant;
- a value is a dim expression in ``k`` through CONST, DIMS_TO_TENSOR, ADD,
  SUB, MUL, and the shape-preserving casts and reshapes of one element (int32
  casts to float exactly below 2^24);
- a condition is a conjunction (LOGICAL_AND) of GREATER / GREATER_EQUAL terms
  ``A > B``; each must have ``A - B = E - s·k`` with a constant step ``s = 1``.

Iteration ``m`` runs while every term of the condition computed by iteration
``m - 1`` holds (``E_i - (m - 1) > 0``), and the first runs when the initial
condition (the same terms at ``k = -1``) holds; so the count is
``max(min_i(E_i + 1), 0)``. Anything else gives None (the caller refuses).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..ir import attrs as A
from ..ir.graph import Graph, Operation, Value
from ..ir.ops import Op
from ..ir.region_rules import iteration_symbol
from ..symbolic.expr import Dim, Expr, bounds, dmax, dmin, same, subs, sym

_K = "loop iteration k"   # the 0-based iteration number, as a symbol of the evaluation
_PASS = (Op.CAST, Op.RESHAPE, Op.IDENTITY, Op.EXPAND_DIMS, Op.COLLAPSE_DIMS)
_Env = dict[int, Dim]     # id of a body value -> its value as a dim expression in k


def proven_count(op: Operation, operands: list[Value]) -> Optional[Dim]:
    """The exact iteration count of LOOP ``op`` (a dim expression), or None when it is not provable here."""
    a = op.attrs_as(A.LoopAttrs)
    body = a.body
    initial = [_value(v, {}) for v in operands[2:2 + a.num_state]]
    steps = [_step(body, j, a) for j in range(a.num_state)]
    k = sym(_K)
    env: _Env = {id(v): x + s * k for v, x, s in zip(body.inputs[2:2 + a.num_state], initial, steps)
                 if x is not None and s is not None}
    terms = _terms(body.outputs[0], env)
    first = _terms(operands[1], {})
    if not terms or first is None:
        return None
    it = iteration_symbol(body)
    thresholds: list[Dim] = []
    for d in terms:
        d = subs(d, {it: k + 1})
        e, rate = subs(d, {_K: 0}), subs(d, {_K: 1}) - subs(d, {_K: 0})
        if not same(rate, -1) or not same(subs(d, {_K: 2}) - subs(d, {_K: 1}), -1) or _K in _symbols(e):
            return None
        thresholds.append(e + 1)
    if sorted(map(str, first)) != sorted(map(str, thresholds)):
        return None    # the initial condition is not the same terms one step earlier
    count = thresholds[0]
    for t in thresholds[1:] + _trip(operands[0]):
        count = dmin(count, t)
    return dmax(count, 0) if isinstance(count, Expr) and not _nonnegative(count) else count


def _trip(trip: Value) -> list[Dim]:
    """The trip count as a bound, unless it is ONNX's "no limit" (2^31 - 1 and more)."""
    value = trip.index_type.value
    return [] if isinstance(value, int) and value >= 2**31 - 1 else [value]


def _nonnegative(d: Dim) -> bool:
    return bounds(d)[0] >= 0


def _symbols(d: Dim) -> frozenset[str]:
    return d.free_symbols() if isinstance(d, Expr) else frozenset()


def _step(body: Graph, j: int, a: A.LoopAttrs) -> Optional[int]:
    """``c`` when the body's state ``j`` output is ``state_j + c`` (c a constant), else None."""
    s = sym("loop state")
    out = _value(body.outputs[1 + j], {id(body.inputs[2 + j]): s})
    if out is None:
        return None
    c = out - s
    return int(c) if not isinstance(c, Expr) else None


def _value(v: Value, env: _Env) -> Optional[Dim]:
    """The one-element tensor ``v`` as a dim expression (ints; integral float constants), or None."""
    if id(v) in env:
        return env[id(v)]
    p = v.producer
    if p is None:
        return None
    if p.op is Op.CONST:
        values = np.asarray(p.attrs_as(A.ConstAttrs).values).ravel()
        if values.size != 1 or float(values[0]) != int(values[0]):
            return None
        return int(values[0])
    if p.op is Op.DIMS_TO_TENSOR and len(p.operands) == 1:
        return p.operands[0].index_type.value
    if p.op in _PASS:
        return _value(p.operands[0], env)
    if p.op in (Op.ADD, Op.SUB, Op.MUL):
        x, y = (_value(o, env) for o in p.operands[:2])
        if x is None or y is None:
            return None
        return x + y if p.op is Op.ADD else x - y if p.op is Op.SUB else x * y
    return None


def _terms(v: Value, env: _Env) -> Optional[list[Dim]]:
    """The condition ``v`` as the list of ``A - B`` of its ``A > B`` terms, or None."""
    p = v.producer
    if p is None:
        return None
    if p.op is Op.LOGICAL_AND:
        parts = [_terms(o, env) for o in p.operands]
        joined: list[Dim] = []
        for x in parts:
            if x is None:
                return None
            joined += x
        return joined
    if p.op in (Op.RESHAPE, Op.IDENTITY):
        return _terms(p.operands[0], env)
    if p.op in (Op.GREATER, Op.GREATER_EQUAL):
        lhs, rhs = (_value(o, env) for o in p.operands)
        if lhs is None or rhs is None:
            return None
        return [lhs - rhs + (1 if p.op is Op.GREATER_EQUAL else 0)]
    return None
