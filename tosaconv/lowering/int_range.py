"""The values an integer IR tensor can take: a sound interval from the ops that compute it.

A TABLE built for a float function of a quantized tensor can be undefined on
part of its 256 entries (``sqrt`` of the negative half of a symmetric int8
scale) when the function's input, by construction, never takes those values
(a sum of squares is never negative). :func:`value_range` proves that: it
walks back from an integer value through the ops whose result interval
follows from their operands' (layout ops, CONCAT, PAD, CLAMP, CAST, ADD, SUB,
MAXIMUM, MINIMUM, a RESCALE with positive multipliers, a TABLE over the
reachable entries, constants) and gives the element type's whole range for
anything else, so the interval always holds every value the program can
produce, for every input. Integer semantics are those of the interpreter's
kernels, which the monotone ops are evaluated with at the interval's ends.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..interpreter.registry import KernelContext, kernel_for
from ..ir.graph import Operation, Value
from ..ir.ops import Op

MAX_DEPTH = 64
SAME = (Op.RESHAPE, Op.TRANSPOSE, Op.SLICE, Op.REVERSE, Op.TILE, Op.IDENTITY, Op.COLLAPSE_DIMS, Op.EXPAND_DIMS)
MONOTONE = (Op.RESCALE, Op.CLAMP)     # non-decreasing in their one data operand


def value_range(v: Value, depth: int = 0, memo: dict = None) -> tuple:
    """(lo, hi): every element of integer ``v`` lies in [lo, hi] whatever the program's inputs. Each value
    is analysed once per call (``memo``), so shared operands cost nothing extra."""
    memo = {} if memo is None else memo
    if id(v) not in memo:
        memo[id(v)] = _range(v, depth, memo)
    return memo[id(v)]


def _range(v: Value, depth: int, memo: dict) -> tuple:
    full = _full(v)
    p = v.producer
    if p is None or depth > MAX_DEPTH or full is None:
        return full
    try:
        lo, hi = _interval(p, v, depth + 1, memo)
    except Exception:  # noqa: BLE001 - no proof is not an error: the whole range is always sound
        return full
    if lo < full[0] or hi > full[1]:
        return full           # e.g. an int32 ADD that could wrap
    return lo, hi


def _full(v: Value) -> Optional[tuple[int, int]]:
    dtype = v.type.dtype
    if not dtype.is_int:
        return None
    info = np.iinfo(dtype.numpy)
    return int(info.min), int(info.max)


def _interval(p: Operation, v: Value, depth: int, memo: dict) -> tuple:
    ranges = lambda: [value_range(o, depth, memo) for o in p.operands if o.type.dtype.is_int]  # noqa: E731
    if p.op is Op.CONST:
        values = np.asarray(p.attrs.values)
        return (int(values.min()), int(values.max())) if values.size else _full(v)
    if p.op in SAME or (p.op is Op.CAST and p.operands[0].type.dtype.is_int):
        return value_range(p.operands[0], depth, memo)      # a CAST that would wrap is caught by the caller
    if p.op in (Op.CONCAT, Op.MAXIMUM, Op.MINIMUM):
        rs = ranges()
        if p.op is Op.MAXIMUM:
            return max(r[0] for r in rs), max(r[1] for r in rs)
        if p.op is Op.MINIMUM:
            return min(r[0] for r in rs), min(r[1] for r in rs)
        return min(r[0] for r in rs), max(r[1] for r in rs)
    if p.op is Op.PAD:
        lo, hi = value_range(p.operands[0], depth, memo)
        pad = int(p.attrs.pad_const)
        return min(lo, pad), max(hi, pad)
    if p.op in (Op.ADD, Op.SUB):
        (a, b), (c, d) = ranges()
        return (a + c, b + d) if p.op is Op.ADD else (a - d, b - c)
    if p.op is Op.TABLE and len(p.attrs.table) == 256:
        lo, hi = value_range(p.operands[0], depth, memo)
        reachable = np.asarray(p.attrs.table)[lo + 128:hi + 129]
        return int(reachable.min()), int(reachable.max())
    if p.op in MONOTONE and _increasing(p):
        return _ends(p, value_range(p.operands[0], depth, memo))
    return _full(v)


def _increasing(p: Operation) -> bool:
    if p.op is not Op.RESCALE:
        return True
    a = p.attrs
    return all(m > 0 for m in a.multiplier) and not a.input_unsigned and not a.output_unsigned


def _ends(p: Operation, interval: tuple) -> tuple:
    """A monotone op evaluated with its own kernel at the interval's two ends (per channel when it is)."""
    x = p.operands[0]
    channels = len(p.attrs.multiplier) if p.op is Op.RESCALE and p.attrs.per_channel else 1
    ends = np.repeat(np.asarray(interval, dtype=x.type.dtype.numpy).reshape(2, 1), channels, axis=1)
    with np.errstate(all="ignore"):
        out = np.asarray(kernel_for(p.op)(p, [ends], KernelContext())[0])
    return int(out.min()), int(out.max())
