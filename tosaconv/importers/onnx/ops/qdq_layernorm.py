"""Integer forms of the two float cones a quantized LayerNorm leaves between DequantizeLinear and QuantizeLinear.

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

import numpy as np

from ....interpreter.registry import KernelContext, kernel_for
from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.graph import Value
from ....ir.ops import Op, Trait
from ....lowering.int32_ops import Int32Ops
from ....lowering.reduce import reduce_chain
from ....lowering.rsqrt import normalized_rsqrt
from ....lowering.tables import int8_table, wide_table
from ....symbolic.expr import same
from .qdq_core import LAYOUT, NoFold, NotMine, activation, const_real, emit_activation, replay, trace
from .qdq_table import cone_values
from .qtypes import rescale

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


def layernorm_rule(ctx, x: Value, y_scale: float, y_zp: int) -> Value:
    """The signed-form int8 QuantizeLinear(x) for a LayerNorm's variance or normalized value."""
    p = x.producer
    if p is None or p.op not in (Op.MUL, Op.ADD):
        raise NotMine("not a LayerNorm variance or normalization")
    found = _mean(x)
    if found is not None:
        square, axes, _ = found
        return _variance(ctx, _squared(square), axes, y_scale, y_zp)
    for i in (0, 1):
        cen = _centered(p.operands[i])
        if cen is not None:
            try:
                return _normalized(ctx, cen, p.operands[1 - i], x, y_scale, y_zp)
            except NotMine:
                break
    return _whole(ctx, x, y_scale, y_zp)


# -- matching -------------------------------------------------------------------------

def _mean(v: Value):
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


def _count(v: Value, axes) -> int:
    n = 1
    for a in axes:
        dim = v.type.shape[a]
        if not isinstance(dim, int):
            return 0
        n *= dim
    return n


def _centered(v: Value):
    """A :class:`Centered` when ``v`` is ``SUB(x, mean(x))`` then layout ops, else None."""
    post = []
    while v.producer is not None and v.producer.op in LAYOUT:
        post.append(v.producer)
        v = v.producer.operands[0]
    p = v.producer
    if p is None or p.op is not Op.SUB:
        return None
    found = _mean(p.operands[1])
    if found is None or found[0] is not p.operands[0]:
        return None
    return Centered(p.operands[0], found[1], found[2], post[::-1])


def _squared(v: Value) -> Centered:
    p = v.producer
    if p is None or p.op is not Op.MUL or p.operands[0] is not p.operands[1] or p.attrs.shift:
        raise NotMine("a mean of something other than a square")
    cen = _centered(p.operands[0])
    if cen is None:
        raise NotMine("a mean of the square of something other than a centred tensor")
    return cen


# -- emitting -------------------------------------------------------------------------

def _int32(ctx, v: Value) -> Value:
    return ctx.b.emit(Op.CAST, v, attrs=A.CastAttrs(DType.INT32))


def _scalar(ctx, value: int, like: Value) -> Value:
    return ctx.b.const(np.full((1,) * like.type.rank, value, dtype=np.int32))


def _row(ctx, cen: Centered):
    """(the Activation of the centred tensor, its int32 values, their row sums)."""
    if cen.count > MAX_ROW:
        raise NoFold(f"a LayerNorm row of {cen.count} elements could overflow the int32 sum of squares "
                     f"(at most {MAX_ROW})")
    act = activation(trace(ctx, cen.source))
    q = _int32(ctx, emit_activation(ctx, act))
    return act, q, reduce_chain(ctx, Op.REDUCE_SUM, q, cen.axes)


def _variance(ctx, cen: Centered, axes: list, y_scale: float, y_zp: int) -> Value:
    if cen.axes_after() != axes:
        raise NoFold("the variance is taken over other axes than the mean it is centred by")
    act, q, total = _row(ctx, cen)
    n = cen.count
    unit = act.scale * act.scale / (n * y_scale)          # output units per unit of C
    k = _fraction_bits(65025 * n * unit)
    r = rescale(ctx, total, 1.0 / n, DType.INT32)
    c = replay(ctx, ctx.b.emit(Op.SUB, q, r), cen.post)
    e = ctx.b.emit(Op.SUB, total, ctx.b.emit(Op.MUL, r, _scalar(ctx, n, r), attrs=A.MulAttrs(0)))
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


def _normalized(ctx, cen: Centered, factor: Value, x: Value, y_scale: float, y_zp: int) -> Value:
    leaf, real = cone_values(ctx, factor)
    if not _same_shape(x.type.shape, _shape_after(cen)):
        raise NoFold("the normalizing factor broadcasts the centred tensor to a larger shape")
    entries, gain = _factor_table(real)
    act, q, total = _row(ctx, cen)
    n = cen.count
    a = ctx.b.emit(Op.SUB, ctx.b.emit(Op.MUL, q, _scalar(ctx, n, q), attrs=A.MulAttrs(0)), total)
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


def _non_finite(ctx, a: Value, index: Value, real: np.ndarray) -> Value:
    """What moves the output to a bound where ``f`` is not finite (0 elsewhere), as onnxruntime quantizes
    ``a * f``: +-inf saturates to the bound of its sign, NaN (``0 * inf``, or ``f`` NaN) to the type's
    minimum. ``sign = RESCALE(a, 128)`` saturates to -128, 0 or 127; the offset is
    ``K * (2 sign(f) * sign - 1)`` with ``K`` beyond any in-range output."""
    special = ~np.isfinite(real)
    slope = np.where(np.isinf(real), 2 * np.sign(np.where(np.isinf(real), real, 0.0)), 0).astype(np.int64)
    sign = _int32(ctx, rescale(ctx, a, 128.0, DType.INT8))
    tables = [_int32(ctx, int8_table(ctx, index, t, (-128, 127))) for t in (slope, special.astype(np.int64))]
    offset = ctx.b.emit(Op.SUB, ctx.b.emit(Op.MUL, tables[0], sign, attrs=A.MulAttrs(0)), tables[1])
    return ctx.b.emit(Op.MUL, offset, _scalar(ctx, OUT_REACH, offset), attrs=A.MulAttrs(0))


def _shape_after(cen: Centered) -> list:
    return list(cen.post[-1].result.type.shape if cen.post else cen.source.type.shape)


def _same_shape(a, b) -> bool:
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


def _check_error(scale: float, entries: np.ndarray):
    """The output error before the last rounding: the MUL's rounding (half a unit of the product) plus
    the table's (half a unit of the entry, relative to the smallest non-zero entry, at the largest
    output that does not saturate)."""
    smallest = int(np.abs(entries[entries != 0]).min())
    error = scale / 2 + OUT_REACH / (2 * smallest)
    if scale * (1 << PRODUCT_BITS) >= 1 << 29 or error > MAX_ERROR:
        raise NoFold(f"the normalizing factor spans too wide a range for an exact integer form "
                     f"(error bound {error:.3g} output units)")


# -- a whole LayerNorm between DequantizeLinear and QuantizeLinear ---------------------

FULL_MAX_ROW = 363       # N * sum(c^2) <= 16257 N^2 stays below 2**31
FULL_MAX_ERROR = 1 / 32  # output units the whole LayerNorm may be off before its last rounding
MAX_CHAIN = 8            # elementwise float ops between the variance and the normalizing factor
VAR_SAMPLES = np.array([1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4])


def _whole(ctx, x: Value, y_scale: float, y_zp: int) -> Value:
    """``Q((x - mean) * f(var) * gamma + beta)`` with ``f(v) = 1 / sqrt(v + eps)``: the LayerNormalization
    op, or its primitive-op spelling with nothing quantized inside."""
    v, beta = _peel(ctx, x, Op.ADD)
    v, gamma = _peel(ctx, v, Op.MUL)
    p = v.producer
    if p is None or p.op is not Op.MUL:
        raise NotMine("not a LayerNorm")
    for i in (0, 1):
        cen = _centered(p.operands[i])
        if cen is not None:
            eps = _epsilon(ctx, cen, p.operands[1 - i])
            return _emit_whole(ctx, cen, eps, _constant(gamma, 1.0), _constant(beta, 0.0), y_scale, y_zp)
    raise NotMine("not a LayerNorm")


def _peel(ctx, v: Value, op: Op) -> tuple:
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


def _constant(real, default: float) -> np.ndarray:
    return np.full((1,), default) if real is None else np.asarray(real, dtype=np.float64)


def _epsilon(ctx, cen: Centered, factor: Value) -> float:
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
    found = _mean(v)
    if found is None:
        return False
    try:
        square = _squared(found[0])
    except NoFold:
        return False
    return square.source is cen.source and square.axes == cen.axes and found[1] == square.axes_after()


def _is_constant(ctx, v: Value) -> bool:
    try:
        return const_real(ctx, v).size == 1
    except NoFold:
        return False


def _run_chain(ctx, ops, leaf: Value, values: np.ndarray) -> np.ndarray:
    env = {leaf: values.astype(leaf.type.dtype.numpy)}
    kctx = KernelContext()
    with np.errstate(all="ignore"):
        for op in ops:
            args = [env[w] if w in env else const_real(ctx, w).astype(w.type.dtype.numpy).reshape(-1)
                    for w in op.operands]
            env[op.result] = np.asarray(kernel_for(op.op)(op, args, kctx)[0]).reshape(-1)
    return env[ops[-1].result].astype(np.float64)


def _emit_whole(ctx, cen: Centered, eps: float, gamma: np.ndarray, beta: np.ndarray, y_scale: float,
                y_zp: int) -> Value:
    """The integer LayerNorm (see the module docstring): ``a / sqrt(U + E)`` times gamma, plus beta."""
    n = cen.count
    if n > FULL_MAX_ROW:
        raise NoFold(f"a LayerNorm row of {n} elements: its variance could overflow int32 (the integer "
                     f"form of a LayerNorm whose variance is not quantized takes at most {FULL_MAX_ROW})")
    act, q, total = _row(ctx, cen)
    big_e = eps * n * n / (act.scale * act.scale)          # eps in units of U = N^2 var / s^2
    if 16257 * n * n + math.floor(big_e) >= 1 << 31:
        raise NoFold("a LayerNorm epsilon too large for the int32 variance")
    plan = _AffinePlan(n, gamma, beta, y_scale)
    r = rescale(ctx, total, 1.0 / n, DType.INT32)
    c = ctx.b.emit(Op.SUB, q, r)
    e = ctx.b.emit(Op.SUB, total, _mul32(ctx, r, n))
    squares = reduce_chain(ctx, Op.REDUCE_SUM, _mul32(ctx, c, c), cen.axes)
    u = ctx.b.emit(Op.SUB, _mul32(ctx, squares, n), ctx.b.emit(Op.MUL, e, e, attrs=A.MulAttrs(0)))
    v = ctx.b.emit(Op.ADD, u, _scalar(ctx, math.floor(big_e), u)) if big_e >= 1 else u
    inv, h = normalized_rsqrt(ctx, v, big_e - math.floor(big_e))
    ops = Int32Ops(ctx, v.type.rank)
    inv = replay(ctx, ops.rdbpot(inv, ops.sub(15, h)), cen.post)          # 1/sqrt(U + E) * 2**44 / 2**15
    a = replay(ctx, ctx.b.emit(Op.SUB, _mul32(ctx, q, n), total), cen.post)
    normalized = ctx.b.emit(Op.MUL, a, inv, attrs=A.MulAttrs(plan.s1))    # (x - mean) / std * 2**f
    return plan.emit(ctx, normalized, y_zp)


def _mul32(ctx, v: Value, k) -> Value:
    other = _scalar(ctx, k, v) if isinstance(k, int) else k
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

    def _check(self, n: int, g_max: float):
        out_reach = OUT_REACH + float(np.abs(self.beta).max()) / self.y_scale
        error = (out_reach * 2.0 ** -14.5                                   # 1/sqrt, relative
                 + g_max * 2.0 ** -(self.f + 1) / self.y_scale               # the normalized value's rounding
                 + math.sqrt(n) * 2.0 ** -(self.g + 1) / self.y_scale        # gamma's
                 + 2.0 ** -self.f2 / self.y_scale)                           # the product's and beta's
        if error > FULL_MAX_ERROR or self.s2 < 0 or self.s2 > 62:
            raise NoFold(f"the LayerNorm's scales leave too few fixed-point bits for an exact integer form "
                         f"(error bound {error:.3g} output units)")
        self.error = error

    def emit(self, ctx, normalized: Value, y_zp: int) -> Value:
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
