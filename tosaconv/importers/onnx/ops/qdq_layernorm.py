"""Integer forms of the two float cones a quantized LayerNorm leaves between DequantizeLinear and QuantizeLinear.

(A whole LayerNorm with nothing quantized inside, such as the LayerNormalization op, is
:mod:`.qdq_layernorm_whole`, which shares this module's matching.)

onnxruntime's quantizer quantizes every intermediate of a LayerNorm spelled in
primitive ops (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add)
except the centred value ``d = x - mean(x)``. Two QuantizeLinears then quantize
a float cone that no per-op rule covers:

* the **variance** ``Q(mean((d)^2))`` (Pow(d, 2) or Mul(d, d), layout ops such
  as a Transpose allowed between the Sub and the squaring);
* the **normalized value** ``Q(d * f(v))`` where ``f(v)`` is any elementwise
  float chain of one quantized tensor ``v`` (``Div(d, Sqrt(v))``,
  ``Mul(d, Reciprocal(Sqrt(v)))``...): the dequantized ``var + eps``.

Both are rebuilt on the int8 data ``q`` (zero point ``z``, scale ``s``; ``N``
elements per normalized row) with TOSA integer ops Ethos-U runs (CAST,
REDUCE_SUM, SUB, MUL, TABLE, RESCALE, layout ops):

**Variance.** With any integer ``r`` per row, ``sum((q - mean q)^2) / N =
C/N - (e/N)^2`` where ``c = q - r``, ``C = sum(c^2)``, ``e = sum(c)``; the zero
point cancels. ``r = RESCALE(sum(q), 1/N)`` (rounded) lies between the row's
extremes, so ``|c| <= 255``, ``C <= 65025 N`` and ``|e| <= N/2 + 1``: exact in
int32 for rows up to :data:`MAX_ROW` elements (longer rows are refused).
``C`` and ``e^2`` are rescaled to ``2**k`` output units (``k >= K_MIN``
fractional bits, as many as keep ``C``'s RESCALE in range), subtracted, and one
RESCALE by ``2**-k`` adds the output zero point. Each intermediate rounding
is below ``2**-k`` output units, so the result is the exact value rounded,
or one unit off where the exact value is within ``2**-(k-1)`` of a rounding tie.

**Normalized value.** ``d = s * a / N`` with ``a = N q - sum(q)`` (exact,
``|a| <= 255 N``). ``f`` takes 256 values, evaluated at import with the
interpreter's own float kernels on every value of ``v``; a TABLE-built int32
``F(v) = round(f(v) * G)`` (three int8 TABLEs of 7 bits: up to 21 bits plus
sign) replaces it, and ``MUL(a, F, shift)`` (int64 product, rounded) keeps
the product below ``2**30``. One RESCALE by ``s 2**shift / (N G y_scale)``
gives the output. The error before that last rounding is bounded at import
time (the largest in-range output over the smallest table entry, plus the
shift's rounding) and must be below :data:`MAX_ERROR` output units, so
again results are the exact ones, or one unit off next to a tie. Where
``f`` is not finite (``v`` dequantizes to 0, or below 0), the float result is
infinite or NaN and onnxruntime quantizes it to a bound (+-inf to the bound of
its sign, NaN to the type's minimum); two more int8 TABLEs and the sign of
``a`` (a saturating RESCALE) add an offset that saturates the output the same
way.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.graph import Value
from ....ir.ops import Op
from ....lowering.reduce import reduce_chain
from ....lowering.tables import int8_table, wide_table
from ....symbolic.expr import same
from .qdq_core import LAYOUT, NoFold, NotMine, activation, emit_activation, replay, trace
from .qdq_table import cone_values
from .qtypes import rescale

if TYPE_CHECKING:
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from .qdq_core import Activation

MAX_ROW = 33025          # 65025 * N (the sum of squares) stays below 2**31
K_MIN = 8                # fractional output bits the variance keeps before its last rounding
TABLE_BITS = 21          # magnitude bits of the normalizing factor's table entries
PRODUCT_BITS = 30        # |a * F| >> shift stays below 2**30
MAX_ERROR = 1 / 64       # output units the normalized value may be off before its last rounding
OUT_REACH = 384          # the largest |output - zero point| that does not saturate, plus margin


class Centered:
    """``x - mean(x)`` over ``axes`` of ``source``, then the layout ops ``post``."""

    def __init__(self, source: Value, axes: list, count: int, post: list):
        self.source, self.axes, self.count, self.post = source, axes, count, post

    def axes_after(self) -> list:
        """The normalized axes in the coordinates after ``post`` (transposes only)."""
        axes = list(self.axes)
        for op in self.post:
            if op.op is Op.TRANSPOSE:
                axes = [list(op.attrs.perms).index(a) for a in axes]
            elif op.op is not Op.IDENTITY:
                raise NoFold(f"a {op.op.name} between the centring and the normalization")
        return sorted(axes)


def layernorm_rule(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    """The signed-form int8 QuantizeLinear(x) for a LayerNorm's variance or normalized value."""
    p = x.producer
    if p is None or p.op is not Op.MUL:
        raise NotMine("not a LayerNorm variance or normalization")
    found = mean_of(x)
    if found is not None:
        square, axes, _ = found
        return _variance(ctx, squared_centered(square), axes, y_scale, y_zp)
    for i in (0, 1):
        cen = centered(p.operands[i])
        if cen is not None:
            return _normalized(ctx, cen, p.operands[1 - i], x, y_scale, y_zp)
    raise NotMine("not a LayerNorm variance or normalization")


# -- matching -------------------------------------------------------------------------

def mean_of(v: Value) -> Optional[tuple[Value, list, int]]:
    """(source, axes, count) when ``v`` is REDUCE_SUMs of ``source`` over ``axes`` times 1/count."""
    p = v.producer
    if p is None or p.op is not Op.MUL or p.attrs.shift:
        return None
    for i in (0, 1):
        c, total = p.operands[i].producer, p.operands[1 - i]
        if c is None or c.op is not Op.CONST or np.size(c.attrs.values) != 1:
            continue
        source, axes = total, []
        while source.producer is not None and source.producer.op is Op.REDUCE_SUM:
            axes.append(source.producer.attrs.axis)
            source = source.producer.operands[0]
        count = _count(source, axes)
        if axes and count and math.isclose(float(np.reshape(c.attrs.values, -1)[0]) * count, 1.0, rel_tol=1e-6):
            return source, sorted(axes), count
    return None


def _count(v: Value, axes: Sequence[int]) -> int:
    n = 1
    for a in axes:
        dim = v.type.shape[a]
        if not isinstance(dim, int):
            return 0
        n *= dim
    return n


def centered(v: Value) -> Optional[Centered]:
    """A :class:`Centered` when ``v`` is ``SUB(x, mean(x))`` then layout ops, else None."""
    post = []
    while v.producer is not None and v.producer.op in LAYOUT:
        post.append(v.producer)
        v = v.producer.operands[0]
    p = v.producer
    if p is None or p.op is not Op.SUB:
        return None
    found = mean_of(p.operands[1])
    if found is None or found[0] is not p.operands[0]:
        return None
    return Centered(p.operands[0], found[1], found[2], post[::-1])


def squared_centered(v: Value) -> Centered:
    p = v.producer
    if p is None or p.op is not Op.MUL or p.operands[0] is not p.operands[1] or p.attrs.shift:
        raise NotMine("a mean of something other than a square")
    cen = centered(p.operands[0])
    if cen is None:
        raise NotMine("a mean of the square of something other than a centred tensor")
    return cen


# -- emitting -------------------------------------------------------------------------

def int32(ctx: ImportContext, v: Value) -> Value:
    return ctx.b.emit(Op.CAST, v, attrs=A.CastAttrs(DType.INT32))


def scalar(ctx: ImportContext, value: int, like: Value) -> Value:
    return ctx.b.const(np.full((1,) * like.type.rank, value, dtype=np.int32))


def row_sums(ctx: ImportContext, cen: Centered) -> tuple[Activation, Value, Value]:
    """(the Activation of the centred tensor, its int32 values, their row sums)."""
    if cen.count > MAX_ROW:
        raise NoFold(f"a LayerNorm row of {cen.count} elements could overflow the int32 sum of squares "
                     f"(at most {MAX_ROW})")
    act = activation(trace(ctx, cen.source))
    q = int32(ctx, emit_activation(ctx, act))
    return act, q, reduce_chain(ctx, Op.REDUCE_SUM, q, cen.axes)


def _variance(ctx: ImportContext, cen: Centered, axes: list, y_scale: float, y_zp: int) -> Value:
    if cen.axes_after() != axes:
        raise NoFold("the variance is taken over other axes than the mean it is centred by")
    act, q, total = row_sums(ctx, cen)
    n = cen.count
    unit = act.scale * act.scale / (n * y_scale)          # output units per unit of C
    k = _fraction_bits(65025 * n * unit)
    r = rescale(ctx, total, 1.0 / n, DType.INT32)
    c = replay(ctx, ctx.b.emit(Op.SUB, q, r), cen.post)
    e = ctx.b.emit(Op.SUB, total, ctx.b.emit(Op.MUL, r, scalar(ctx, n, r), attrs=A.MulAttrs(0)))
    e = replay(ctx, e, cen.post)
    squares = reduce_chain(ctx, Op.REDUCE_SUM, ctx.b.emit(Op.MUL, c, c, attrs=A.MulAttrs(0)), axes)
    big = rescale(ctx, squares, unit * 2.0 ** k, DType.INT32)
    small = rescale(ctx, ctx.b.emit(Op.MUL, e, e, attrs=A.MulAttrs(0)), unit / n * 2.0 ** k, DType.INT32)
    return rescale(ctx, ctx.b.emit(Op.SUB, big, small), 2.0 ** -k, DType.INT8, output_zp=y_zp)


def _fraction_bits(largest: float) -> int:
    """The most fractional bits ``k`` (up to 24) with ``largest * 2**k`` below 2**29, the input range of
    the RESCALEs after it."""
    k = min(24, math.floor(29 - math.log2(largest)) - 1) if largest > 0 else 24
    if k < K_MIN:
        raise NoFold(f"the variance's output scale is too fine for its input scale ({k} fractional bits, "
                     f"at least {K_MIN} needed)")
    return k


def _normalized(ctx: ImportContext, cen: Centered, factor: Value, x: Value, y_scale: float, y_zp: int) -> Value:
    leaf, real = cone_values(ctx, factor)
    if not same_shape(x.type.shape, shape_after(cen)):
        raise NoFold("the normalizing factor broadcasts the centred tensor to a larger shape")
    entries, gain = _factor_table(real)
    act, q, total = row_sums(ctx, cen)
    n = cen.count
    a = ctx.b.emit(Op.SUB, ctx.b.emit(Op.MUL, q, scalar(ctx, n, q), attrs=A.MulAttrs(0)), total)
    a = replay(ctx, a, cen.post)
    shift = max(0, (255 * n * int(np.abs(entries).max())).bit_length() - PRODUCT_BITS)
    scale = act.scale * 2.0 ** shift / (n * gain * y_scale)
    _check_error(scale, entries)
    index = emit_activation(ctx, leaf)
    product = ctx.b.emit(Op.MUL, a, wide_table(ctx, index, entries), attrs=A.MulAttrs(shift))
    if np.isfinite(real).all():
        return rescale(ctx, product, scale, DType.INT8, output_zp=y_zp)
    if 255 * n >= 1 << 22:
        raise NoFold("the normalizing factor is infinite or NaN for some input value, and the row is too "
                     "long to find the sign of the result in integers")
    base = rescale(ctx, product, scale, DType.INT32)
    return rescale(ctx, ctx.b.emit(Op.ADD, base, _non_finite(ctx, a, index, real)), 1.0, DType.INT8,
                   output_zp=y_zp)


def _non_finite(ctx: ImportContext, a: Value, index: Value, real: np.ndarray) -> Value:
    """What moves the output to a bound where ``f`` is not finite (0 elsewhere), as onnxruntime quantizes
    ``a * f``: +-inf saturates to the bound of its sign, NaN (``0 * inf``, or ``f`` NaN) to the type's
    minimum. ``sign = RESCALE(a, 128)`` saturates to -128, 0 or 127; the offset is
    ``K * (2 sign(f) * sign - 1)`` with ``K`` beyond any in-range output."""
    special = ~np.isfinite(real)
    slope = np.where(np.isinf(real), 2 * np.sign(np.where(np.isinf(real), real, 0.0)), 0).astype(np.int64)
    sign = int32(ctx, rescale(ctx, a, 128.0, DType.INT8))
    tables = [int32(ctx, int8_table(ctx, index, t, (-128, 127))) for t in (slope, special.astype(np.int64))]
    offset = ctx.b.emit(Op.SUB, ctx.b.emit(Op.MUL, tables[0], sign, attrs=A.MulAttrs(0)), tables[1])
    return ctx.b.emit(Op.MUL, offset, scalar(ctx, OUT_REACH, offset), attrs=A.MulAttrs(0))


def shape_after(cen: Centered) -> list:
    return list(cen.post[-1].result.type.shape if cen.post else cen.source.type.shape)


def same_shape(a: Sequence[Dim], b: Sequence[Dim]) -> bool:
    return len(a) == len(b) and all(same(p, q) for p, q in zip(a, b))


def _factor_table(real: np.ndarray) -> tuple:
    """(int entries, gain G): ``round(f * G)`` with the largest finite ``|f|`` at ``2**TABLE_BITS - 1``;
    0 where ``f`` is not finite (:func:`_non_finite` handles those)."""
    finite = np.isfinite(real)
    if not finite.any() or not np.abs(real[finite]).max() > 0:
        raise NoFold("the normalizing factor is zero or not finite for every input value")
    top = (1 << TABLE_BITS) - 1
    gain = top / float(np.abs(real[finite]).max())
    entries = np.where(finite, np.rint(np.where(finite, real, 0.0) * gain), 0.0)
    return entries.astype(np.int64), gain


def _check_error(scale: float, entries: np.ndarray) -> None:
    """The output error before the last rounding: the MUL's rounding (half a unit of the product) plus
    the table's (half a unit of the entry, relative to the smallest non-zero entry, at the largest
    output that does not saturate)."""
    smallest = int(np.abs(entries[entries != 0]).min())
    error = scale / 2 + OUT_REACH / (2 * smallest)
    if scale * (1 << PRODUCT_BITS) >= 1 << 29 or error > MAX_ERROR:
        raise NoFold(f"the normalizing factor spans too wide a range for an exact integer form "
                     f"(error bound {error:.3g} output units)")

