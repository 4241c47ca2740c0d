"""Quantized TFLite QUANTIZE (float -> int, and requantize) and DEQUANTIZE (int -> float).

**Requantize** (int8/uint8/int16 in, int8/uint8/int16 out) follows quantize.cc
``Prepare`` (``double(input_scale) / double(output_scale)`` through
QuantizeMultiplier) and reference ``Requantize``: ``MultiplyByQuantizedMultiplier``
(one DOUBLE_ROUND RESCALE) plus the output zero point, clamped. Its
``input ^ 0x80`` fast path for uint8 <-> int8 computes the same values.

**DEQUANTIZE** is ``static_cast<float>(double(scale) * (q - zp))``
(reference_integer_ops ``Dequantize``): the product of a float32 scale and an
integer of at most 17 bits is exact in double, so one float32 MUL of
``float(q - zp)`` by the scale rounds identically. Constant inputs (per-tensor
or per-channel weights, ``PerChannelDequantize``) fold at import when small or
with ``--fp32-weights``; larger int8/int16 weights stay narrow, dequantized by
CAST, SUB and MUL at run time (:mod:`tosaconv.lowering.weight_casts`).

**QUANTIZE float -> int** is reference ``AffineQuantize``:
``TfLiteRound(x / scale)`` (float32 division, round half away from zero) plus
the zero point, clamped. TOSA has no float division and its CAST rounds half
to even, so :func:`affine_quantize` builds the exact result:
``y = |x| * fl(1/scale)`` is within a few ulps of ``fl(|x| / scale)``, which
decides everything except whether the quotient reaches the half-integer
``h = floor(y) + 0.5``. That is decided exactly: ``fl(|x|/b) >= h`` iff
``|x| - h*b > -(u/2)*b`` (``u`` = ulp of float32 just below ``h``; at
equality, iff ``h`` is even), with ``|x| - h*b`` computed without error by
Dekker's product (Veltkamp split of the constant scale; ``h`` split at 2**7).
Inputs are clamped beforehand to ``+-(range + 4) * scale`` so every
intermediate stays a small half-integer (results there saturate anyway).
LiteRT casts the rounded quotient to int32 before adding the zero point, so
a quotient of ``2**31`` or more, or NaN, becomes x86's ``INT_MIN`` (then
``INT_MIN + zp``, wrapping when ``zp < 0``): tosaconv selects the same
saturated value there.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.weight_casts import keeps_narrow
from ..qmath import F32, f64_ratio, qtensor, shifted_int32, signed_input, to_unsigned
from ..quant import QUANT_TYPES, is_quantized, params, rescale, scale, unsigned, value_range, zero_point
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.ops import OpDef
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo

_REQUANTIZE = {"INT8": ("INT8", "UINT8", "INT16"), "UINT8": ("INT8", "UINT8", "INT16"), "INT16": ("INT8", "INT16")}


@converter("QUANTIZE", form="quantized")
def convert_quantize(ctx: TfliteContext, node: OpReader) -> Converted:
    x, y = node.input_infos[0], node.output_infos[0]
    if y.type_name not in QUANT_TYPES or not is_quantized(y):
        raise ConvertError(f"QUANTIZE to {y.type_name} is not supported: TFLite quantizes to int8, uint8 or int16")
    _check_int16_zp(x, y)
    if x.type_name == "FLOAT32":
        return affine_quantize(ctx, ctx.tensor(node.inputs[0]), y)
    if y.type_name not in _REQUANTIZE.get(x.type_name, ()):
        raise ConvertError(f"QUANTIZE from {x.type_name} to {y.type_name} is not supported (LiteRT's kernel "
                           "requantizes int8/uint8 to int8/uint8/int16 and int16 to int8/int16)")
    # quantize.cc Prepare: double(input scale) / double(output scale); reference Requantize.
    # TOSA's RESCALE reads or writes unsigned data, not both: uint8 -> uint8 reads the input as int8.
    v, zp = (signed_input(ctx, qtensor(ctx, node, 0), x) if unsigned(x) and unsigned(y)
             else (qtensor(ctx, node, 0), zero_point(x)))
    return rescale(ctx, v, f64_ratio(scale(x), scale(y)), QUANT_TYPES[y.type_name], input_zp=zp,
                   output_zp=zero_point(y), input_unsigned=unsigned(x) and not unsigned(y),
                   output_unsigned=unsigned(y))


def _check_int16_zp(*infos) -> None:
    for info in infos:
        if info.type_name == "INT16" and zero_point(info) != 0:
            raise ConvertError(f"int16 tensor '{info.name}' has zero point {zero_point(info)}; TFLite's QUANTIZE "
                               "requires 0 for int16")


class _Emit:
    """float32 TOSA arithmetic on tensors of one rank, with scalar constants made on demand."""

    def __init__(self, ctx: TfliteContext, like: Value):
        self.ctx, self.type = ctx, like.type

    def k(self, value: float) -> Value:
        return self.ctx.b.scalar_like(F32(value), self.type)

    def __call__(self, op: OpDef, *operands: Union[Value, float], attrs: Optional[A.Attrs] = None) -> Value:
        ops = [self.k(v) if not hasattr(v, "type") else v for v in operands]
        if op is Op.MUL:
            attrs = A.MulAttrs(0)
        return self.ctx.b.emit(op, *ops, attrs=attrs)


def _split(b: np.float32) -> tuple:
    """Veltkamp's split of float32 ``b`` into two halves of at most 12 significant bits each."""
    c = F32(b * F32(4097))
    hi = F32(c - F32(c - b))
    return hi, F32(b - hi)


def affine_quantize(ctx: TfliteContext, x: Value, info: TensorInfo) -> Value:
    """``clamp(TfLiteRound(x / scale) + zp)`` of float32 ``x`` into ``info``'s storage, bit for bit."""
    b = F32(scale(info))
    lo, hi = value_range(info)
    bound = F32(F32(hi - lo + 4) * b)
    if not (np.isfinite(bound) and b >= F32(2.0 ** -80)):
        raise ConvertError(f"QUANTIZE scale {float(b)!r} is outside the range tosaconv quantizes exactly "
                           "(2**-80 .. 1e33)")
    e = _Emit(ctx, x)
    v = ctx.b.emit(Op.CLAMP, x, attrs=A.ClampAttrs(float(-bound), float(bound)))
    s = e(Op.ABS, v)
    floor_y = e(Op.FLOOR, e(Op.MUL, s, F32(1) / b))
    h = e(Op.ADD, floor_y, 0.5)
    up = _reaches(e, s, h, b)
    n = e(Op.ADD, floor_y, e(Op.SELECT, up, 1.0, 0.0))
    n = e(Op.SELECT, e(Op.GREATER, 0.0, v), e(Op.NEGATE, n, attrs=A.NegateAttrs(0, 0)), n)
    n = e(Op.ADD, n, float(zero_point(info)))
    # LiteRT casts the rounded quotient to int32 before adding the zero point: a quotient
    # of 2**31 or more (or NaN) becomes INT_MIN on x86, and INT_MIN + zp wraps for zp < 0.
    overflow = e(Op.LOGICAL_NOT, e(Op.GREATER, _int32_overflow_bound(b), e(Op.ABS, x)))
    return _store(ctx, e(Op.SELECT, overflow, float(hi if zero_point(info) < 0 else lo), n), info)


def _int32_overflow_bound(b: np.float32) -> float:
    """The least float32 ``a`` with ``fl(a / b) >= 2**31`` (inf when there is none)."""
    with np.errstate(over="ignore"):
        a = F32(F32(2.0 ** 31) * b)
        while np.isfinite(a) and F32(a / b) < F32(2.0 ** 31):
            a = np.nextafter(a, F32(np.inf))
        while np.isfinite(a) and a > 0 and F32(np.nextafter(a, F32(0)) / b) >= F32(2.0 ** 31):
            a = np.nextafter(a, F32(0))
    return float(a)


def _reaches(e: _Emit, s: Value, h: Value, b: np.float32) -> Value:
    """Whether ``fl(s / b) >= h`` exactly, for ``s >= 0`` and a half-integer ``h`` near ``s / b``."""
    p = e(Op.MUL, h, b)
    b_hi, b_lo = _split(b)
    h_hi = e(Op.MUL, e(Op.FLOOR, e(Op.MUL, h, 2.0 ** -7)), 2.0 ** 7)
    h_lo = e(Op.SUB, h, h_hi)
    err = e(Op.SUB, e(Op.MUL, h_hi, b_hi), p)            # Dekker: h*b - p, exactly
    for a, c in ((h_hi, b_lo), (h_lo, b_hi), (h_lo, b_lo)):
        err = e(Op.ADD, err, e(Op.MUL, a, c))
    residual = e(Op.SUB, e(Op.SUB, s, p), err)          # s - h*b, exactly
    ulp = e(Op.SUB, h, e(Op.SUB, h, e(Op.MUL, h, 2.0 ** -24)))
    neg_half_ulp_b = e(Op.MUL, ulp, float(-0.5 * b))      # -(u/2)*b, exact (power-of-two times b)
    even = e(Op.EQUAL, e(Op.ADD, h, e(Op.MUL, ulp, 0.5)), h)
    tie = e(Op.LOGICAL_AND, e(Op.EQUAL, residual, neg_half_ulp_b), even)
    return e(Op.LOGICAL_OR, e(Op.GREATER, residual, neg_half_ulp_b), tie)


def _store(ctx: TfliteContext, n: Value, info: TensorInfo) -> Value:
    """Integer-valued float32 ``n`` clamped to the storage range and cast (uint8 via its int8 bits)."""
    lo, hi = value_range(info)
    n = ctx.b.emit(Op.CLAMP, n, attrs=A.ClampAttrs(float(lo), float(hi)))
    if not unsigned(info):
        return ctx.b.emit(Op.CAST, n, attrs=A.CastAttrs(QUANT_TYPES[info.type_name]))
    n = ctx.b.emit(Op.SUB, n, ctx.b.scalar_like(F32(128), n.type))
    return to_unsigned(ctx, ctx.b.emit(Op.CAST, n, attrs=A.CastAttrs(DType.INT8)))


@converter("DEQUANTIZE", form="quantized")
def convert_dequantize(ctx: TfliteContext, node: OpReader) -> Converted:
    info = node.input_infos[0]
    c = ctx.const(node.inputs[0])
    if c is not None and keeps_narrow(np.asarray(c)):
        return _dequantize_at_run_time(ctx, ctx.tensor(node.inputs[0]), info)
    if c is not None:
        ctx.set_const(node.outputs[0], _dequantize_const(np.asarray(c), info))
        return None
    if info.type_name not in QUANT_TYPES:
        raise ConvertError(f"DEQUANTIZE of {info.type_name} is not supported")
    q = shifted_int32(ctx, ctx.tensor(node.inputs[0]), info)    # per-tensor only: one scale and zero point
    f = ctx.b.emit(Op.CAST, q, attrs=A.CastAttrs(DType.FP32))
    return ctx.b.emit(Op.MUL, f, ctx.b.scalar_like(F32(scale(info)), f.type), attrs=A.MulAttrs(0))


def _dequantize_at_run_time(ctx: TfliteContext, q: Value, info: TensorInfo) -> Value:
    """int8/int16 weights kept narrow (:mod:`tosaconv.lowering.weight_casts`): ``(CAST(q) - zp) * scale`` with
    per-channel zero points and scales shaped to broadcast along the quantized dimension. The same float32
    values as :func:`_dequantize_const`: the CAST and SUB are exact, and one float32 product of float32
    operands rounds as the float64 product rounded to float32 does."""
    p = params(info)
    scales, zps = np.asarray(p.scale, F32).reshape(-1), np.asarray(p.zero_point, np.int64).reshape(-1)
    n = max(scales.size, zps.size)
    shape = [1] * q.type.rank
    if n > 1:
        shape[p.axis] = n
    f = ctx.b.emit(Op.CAST, q, attrs=A.CastAttrs(DType.FP32))
    if zps.any():
        f = ctx.b.emit(Op.SUB, f, ctx.b.const(np.broadcast_to(zps, (n,)).astype(F32).reshape(shape)))
    return ctx.b.emit(Op.MUL, f, ctx.b.const(np.broadcast_to(scales, (n,)).reshape(shape)), attrs=A.MulAttrs(0))


def _dequantize_const(q: np.ndarray, info: TensorInfo) -> np.ndarray:
    """``float(scale[c] * (q - zp[c]))`` along the quantized dimension (PerChannelDequantize)."""
    p = params(info)
    scales, zps = np.asarray(p.scale, F32).reshape(-1), np.asarray(p.zero_point, np.int64).reshape(-1)
    shape = [1] * q.ndim
    if scales.size > 1:
        shape[p.axis] = scales.size
    values = q.astype(np.int64) - zps.reshape(shape)
    return (values.astype(np.float64) * scales.reshape(shape).astype(np.float64)).astype(F32)
