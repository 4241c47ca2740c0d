"""A whole LayerNorm between DequantizeLinear and QuantizeLinear, with nothing quantized inside, as integer TOSA.

The LayerNormalization op (opset 17), or its primitive-op spelling when no
quantizer put a Q/DQ pair inside, computes ``y = (x - mean) / sqrt(var + eps)
* gamma + beta`` in float; the QuantizeLinear after it is rebuilt on the int8
data ``q`` (scale ``s``, ``N`` elements per row; matching shared with
:mod:`.qdq_layernorm`). The normalizing factor may be spelled any way whose
value is ``1 / sqrt(var + eps)``: it is evaluated with the interpreter's
kernels on sample variances and ``eps`` is fitted.

* ``a = N q - sum(q)`` and ``U = N sum(c^2) - e^2`` (``c = q - r``, ``r`` the
  rounded row mean, ``e = sum(c)``) are exact integers with ``(x - mean) / sqrt(var + eps)
  = a / sqrt(U + E)``, ``E = eps N^2 / s^2``; ``U <= 16257 N^2`` fits int32 for
  rows up to 363 elements; in longer rows (up to :data:`.qdq_layernorm.MAX_ROW`)
  a row with a large ``sum(c^2)`` takes ``U / 4**x`` instead (:func:`_variance_units`);
* ``1 / sqrt(U + E)`` comes from :func:`tosaconv.lowering.rsqrt.normalized_rsqrt`
  (CLZ normalization, a TABLE guess, three Newton steps: relative error below
  2**-26) as ``r * 2**(h - 44)``; ``r`` shifted right by ``15 - h`` (rounded,
  relative error at most 2**-14.5) times ``a`` (MUL with shift) is the
  normalized value with ``29 - s1`` fractional bits, bounded by ``sqrt(N - 1)``;
* gamma (int32, ``g`` fractional bits, any sign) multiplies it (MUL with shift),
  beta is added in the same fixed point, and one RESCALE gives the output.

The error before that last rounding is bounded at import from the chosen bits
(:class:`_AffinePlan`) and must stay below :data:`FULL_MAX_ERROR` output units:
results are the exact LayerNorm of the quantized input rounded, or one unit
off next to a rounding tie.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from ....interpreter.registry import KernelContext, kernel_for
from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.graph import Value
from ....ir.ops import Op, Trait
from ....lowering.int32_ops import Int32Ops
from ....lowering.reduce import reduce_chain
from ....lowering.rsqrt import normalized_rsqrt
from .qdq_core import NoFold, NotMine, const_real, replay
from .qdq_layernorm import (OUT_REACH, Centered, centered, mean_of, row_sums, same_shape, scalar, shape_after,
                            squared_centered)
from .qtypes import rescale

if TYPE_CHECKING:
    from ....ir.graph import Operation
    from ..context import ImportContext

FULL_MAX_ERROR = 1 / 32  # output units the whole LayerNorm may be off before its last rounding
MAX_CHAIN = 8            # elementwise float ops between the variance and the normalizing factor
VAR_SAMPLES = np.array([1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4])


def whole_layernorm_rule(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    """``Q((x - mean) * f(var) * gamma + beta)`` with ``f(v) = 1 / sqrt(v + eps)``: the LayerNormalization
    op, or its primitive-op spelling with nothing quantized inside."""
    v, beta = _peel(ctx, x, Op.ADD)
    v, gamma = _peel(ctx, v, Op.MUL)
    p = v.producer
    if p is None or p.op is not Op.MUL:
        raise NotMine("not a LayerNorm")
    for i in (0, 1):
        cen = centered(p.operands[i])
        if cen is not None:
            eps = _epsilon(ctx, cen, p.operands[1 - i])
            if not same_shape(x.type.shape, shape_after(cen)):
                raise NoFold("gamma or beta broadcasts the LayerNorm to a larger shape")
            return _emit_whole(ctx, cen, eps, _constant(gamma, 1.0), _constant(beta, 0.0), y_scale, y_zp)
    raise NotMine("not a LayerNorm")


def _peel(ctx: ImportContext, v: Value, op: Op) -> tuple:
    """(the other operand, the constant) when ``v`` is ``op`` with one constant operand, else (v, None)."""
    p = v.producer
    if p is None or p.op is not op or (op is Op.MUL and p.attrs.shift):
        return v, None
    for i in (1, 0):
        try:
            return p.operands[1 - i], const_real(ctx, p.operands[i])
        except NoFold:
            continue
    return v, None


def _constant(real: Optional[np.ndarray], default: float) -> np.ndarray:
    return np.full((1,), default) if real is None else np.asarray(real, dtype=np.float64)


def _epsilon(ctx: ImportContext, cen: Centered, factor: Value) -> float:
    """``eps`` when ``factor`` is ``1 / sqrt(var + eps)`` of the variance of ``cen`` (fitted on samples with
    the interpreter's kernels, so any spelling qualifies: RSQRT, or RECIPROCAL of a square root)."""
    ops, v = [], factor
    while not _is_variance_of(v, cen):
        p = v.producer
        if p is None or not p.op.has(Trait.ELEMENTWISE) or len(ops) >= MAX_CHAIN:
            raise NotMine("not a LayerNorm's normalizing factor")
        chain = [w for w in p.operands if not _is_constant(ctx, w)]
        if len(chain) != 1:
            raise NotMine("not a LayerNorm's normalizing factor")
        ops.append(p)
        v = chain[0]
    if not ops:
        raise NotMine("not a LayerNorm's normalizing factor")
    f = _run_chain(ctx, ops[::-1], v, VAR_SAMPLES)
    with np.errstate(all="ignore"):
        eps = 1.0 / (f * f) - VAR_SAMPLES
    if not np.all(np.isfinite(eps)) or not np.all(np.abs(eps - eps[0]) <= 1e-5 * (VAR_SAMPLES + abs(eps[0])) + 1e-12):
        raise NoFold("the normalizing factor of the variance is not 1 / sqrt(variance + eps)")
    if eps[0] < -1e-12:
        raise NoFold("a LayerNorm epsilon below 0")
    return max(float(eps[0]), 0.0)


def _is_variance_of(v: Value, cen: Centered) -> bool:
    found = mean_of(v)
    if found is None:
        return False
    try:
        square = squared_centered(found[0])
    except NoFold:
        return False
    return square.source is cen.source and square.axes == cen.axes and found[1] == square.axes_after()


def _is_constant(ctx: ImportContext, v: Value) -> bool:
    try:
        return const_real(ctx, v).size == 1
    except NoFold:
        return False


def _run_chain(ctx: ImportContext, ops: Sequence[Operation], leaf: Value, values: np.ndarray) -> np.ndarray:
    env = {leaf: values.astype(leaf.type.dtype.numpy)}
    kctx = KernelContext()
    with np.errstate(all="ignore"):
        for op in ops:
            args = [env[w] if w in env else const_real(ctx, w).astype(w.type.dtype.numpy).reshape(-1)
                    for w in op.operands]
            env[op.result] = np.asarray(kernel_for(op.op)(op, args, kctx)[0]).reshape(-1)
    return env[ops[-1].result].astype(np.float64)


def _emit_whole(ctx: ImportContext, cen: Centered, eps: float, gamma: np.ndarray, beta: np.ndarray, y_scale: float,
                y_zp: int) -> Value:
    """The integer LayerNorm (see the module docstring): ``a / sqrt(U + E)`` times gamma, plus beta."""
    n = cen.count
    act, q, total = row_sums(ctx, cen)
    big_e = eps * n * n / (act.scale * act.scale)          # eps in units of U = N^2 var / s^2
    if big_e >= 1 << 30:
        raise NoFold("a LayerNorm epsilon too large for the int32 variance")
    plan = _AffinePlan(n, gamma, beta, y_scale)
    r = rescale(ctx, total, 1.0 / n, DType.INT32)
    c = ctx.b.emit(Op.SUB, q, r)
    e = ctx.b.emit(Op.SUB, total, _mul32(ctx, r, n))
    squares = reduce_chain(ctx, Op.REDUCE_SUM, _mul32(ctx, c, c), cen.axes)
    v, half_exponent = _variance_units(ctx, n, squares, ctx.b.emit(Op.MUL, e, e, attrs=A.MulAttrs(0)), big_e)
    inv, h = normalized_rsqrt(ctx, v, big_e - math.floor(big_e))
    ops = Int32Ops(ctx, v.type.rank)
    shift = ops.sub(15, h) if half_exponent is None else ops.add(ops.sub(15, h), half_exponent)
    inv = replay(ctx, ops.rdbpot(inv, shift), cen.post)                  # 1/sqrt(U + E) * 2**44 / 2**15
    a = replay(ctx, ctx.b.emit(Op.SUB, _mul32(ctx, q, n), total), cen.post)
    normalized = ctx.b.emit(Op.MUL, a, inv, attrs=A.MulAttrs(plan.s1))    # (x - mean) / std * 2**f
    return plan.emit(ctx, normalized, y_zp)


def _variance_units(ctx: ImportContext, n: int, squares: Value, e2: Value, big_e: float) -> tuple:
    """``(V, x)`` with ``U + E = (V + frac(E)) * 4**x`` in int32 (``x`` None: 0 everywhere).

    ``U = N sum(c^2) - e^2 <= 16257 N^2`` is exact while that bound and ``E`` fit int32. For longer rows,
    a row whose ``sum(c^2)`` exceeds ``limit`` takes ``U / 2**j`` (MUL with shift, ``j`` even, so that
    ``x = j / 2``), which is then at least 2**(31-j) and loses at most 2**-25 of its value; the other rows
    stay exact (SELECT)."""
    floor_e = math.floor(big_e)
    if 16257 * n * n + floor_e < 1 << 31:
        u = ctx.b.emit(Op.SUB, _mul32(ctx, squares, n), e2)
        return (ctx.b.emit(Op.ADD, u, scalar(ctx, floor_e, u)) if floor_e else u), None
    ops = Int32Ops(ctx, squares.type.rank)
    j = 2 * math.ceil((math.log2(16257 * n * n) - 30) / 2)
    limit = ((1 << 31) - 1 - floor_e) // n
    exact = ops.add(ops.sub(_mul32(ctx, ops.minimum(squares, limit), n), e2), floor_e)
    scaled = ops.sub(ctx.b.emit(Op.MUL, squares, scalar(ctx, n, squares), attrs=A.MulAttrs(j)), ops.rdbpot(e2, j))
    scaled = ops.add(scaled, round(big_e / 2 ** j))
    long_row = ctx.b.emit(Op.GREATER, squares, scalar(ctx, limit, squares))
    return (ctx.b.emit(Op.SELECT, long_row, scaled, exact),
            ctx.b.emit(Op.SELECT, long_row, scalar(ctx, j // 2, squares), scalar(ctx, 0, squares)))


def _mul32(ctx: ImportContext, v: Value, k: Union[int, Value]) -> Value:
    other = scalar(ctx, k, v) if isinstance(k, int) else k
    return ctx.b.emit(Op.MUL, v, other, attrs=A.MulAttrs(0))


class _AffinePlan:
    """Fixed-point bits of ``normalized * gamma + beta`` and the bound on the error they cause.

    ``normalized`` (at most ``sqrt(N - 1)`` in size) arrives with ``f = 29 - s1`` fractional bits;
    gamma is an int32 with ``g`` fractional bits; their MUL (shift ``s2``) and beta have ``F2`` bits,
    as many as keep ``sqrt(N) |gamma| + |beta|`` below 2**30; one RESCALE by ``2**-F2 / y_scale``
    gives the output."""

    def __init__(self, n: int, gamma: np.ndarray, beta: np.ndarray, y_scale: float):
        self.gamma, self.beta, self.y_scale = gamma, beta, y_scale
        self.s1 = max(1, math.ceil(math.log2(n) / 2))
        self.f = 29 - self.s1
        g_max = max(float(np.abs(gamma).max()), 2.0 ** -20)
        self.g = 29 - math.ceil(math.log2(g_max))
        reach = math.sqrt(n) * g_max + float(np.abs(beta).max())
        self.f2 = min(self.f + self.g, math.floor(math.log2((1 << 30) / reach)))
        self.s2 = self.f + self.g - self.f2
        self._check(n, g_max)

    def _check(self, n: int, g_max: float) -> None:
        out_reach = OUT_REACH + float(np.abs(self.beta).max()) / self.y_scale
        error = (out_reach * 2.0 ** -14.5                                   # 1/sqrt, relative
                 + g_max * 2.0 ** -(self.f + 1) / self.y_scale               # the normalized value's rounding
                 + math.sqrt(n) * 2.0 ** -(self.g + 1) / self.y_scale        # gamma's
                 + 2.0 ** -self.f2 / self.y_scale)                           # the product's and beta's
        if error > FULL_MAX_ERROR or self.s2 < 0 or self.s2 > 62:
            raise NoFold(f"the LayerNorm's scales leave too few fixed-point bits for an exact integer form "
                         f"(error bound {error:.3g} output units)")
        self.error = error

    def emit(self, ctx: ImportContext, normalized: Value, y_zp: int) -> Value:
        gamma = np.broadcast_to(self.gamma, self.gamma.shape)
        g = ctx.b.const(np.rint(gamma * 2.0 ** self.g).astype(np.int32).reshape(_ranked(gamma, normalized)))
        y = ctx.b.emit(Op.MUL, normalized, g, attrs=A.MulAttrs(self.s2))
        if np.any(self.beta):
            b = np.rint(self.beta * 2.0 ** self.f2).astype(np.int32).reshape(_ranked(self.beta, normalized))
            y = ctx.b.emit(Op.ADD, y, ctx.b.const(b))
        return rescale(ctx, y, 2.0 ** -self.f2 / self.y_scale, DType.INT8, output_zp=y_zp)


def _ranked(arr: np.ndarray, like: Value) -> tuple:
    """``arr``'s shape at ``like``'s rank (leading 1s), as TOSA's broadcasting needs."""
    shape = tuple(arr.shape)
    return (1,) * (like.type.rank - len(shape)) + shape
