"""Quantized TFLite DIV (int8, uint8, int16) in TOSA int32 ops, bit-exact with LiteRT's reference kernel.

LiteRT 2.3's BUILTIN_REF DIV (div.cc ``Prepare``/``EvalQuantized``,
reference/div.h ``DivElementwise`` and ``BroadcastDivSlowQuantized``; int16
takes the same integer path, broadcasting or not, checked against LiteRT):

1. Prepare: ``real = s1 / (s2 * s_out)`` in float32 (three float scales),
   widened; ``QuantizeMultiplier`` -> ``(multiplier, shift)``.
2. ``v1 = q1 - zp1``, ``v2 = q2 - zp2`` (Eval refuses ``q2 == zp2``); if
   ``v2 < 0`` both are negated.
3. ``GetReciprocal(v2, 31)``: ``c = clz(v2)``, ``inv =
   one_over_one_plus_x((v2 << c) - 2**31)``, ``recip_shift = 31 - c``.
4. ``h = CountLeadingSignBits(v1)`` (31 for 0), ``q = SRDHM(v1 << h, inv)``
   (``MultiplyByQuantizedMultiplierGreaterThanOne``).
5. ``MultiplyByQuantizedMultiplierSmallerThanOneExp(q, multiplier,
   shift - recip_shift - h)``: ``RoundingDivideByPOT(SRDHM(q, multiplier), e)``
   with ``e = recip_shift + h - shift``; plus ``zp_out``, clamped to the
   activation range.

**The exponent leaves gemmlowp's range.** ``e`` is often 32 or more (a small
quotient, or a zero numerator, whose ``h`` is 31) and can be negative for
huge multipliers. gemmlowp's ``RoundingDivideByPOT`` then shifts by an
out-of-range amount, which C++ leaves undefined; LiteRT's x86-64 build
computes ``mask = int32((1ll << (e & 63)) - 1)`` and ``x >> (e & 31)``, so for
``e & 32`` the mask is all ones and the result is ``(x >> (e & 31)) + (x >= 0)``
(for instance ``zp_out + 1`` for a zero numerator). tosaconv reproduces that
exactly (checked over every int8/uint8 pair and on int16 sweeps, with
exponents from -14 to 38), since LiteRT is the reference: ``s = e & 31`` and
``mask = ~(-1 << s) | -(e & 32 != 0)``, then gemmlowp's threshold rounding.
The final ``+ zp_out`` wraps in int32 as the C++ addition does; the wrap is
spelled as a SELECT to the clamp bound it lands beyond.

Every TOSA step stays inside int32: MUL with shift 31 is SRDHM (operands
never both INT32_MIN, see :mod:`tosaconv.lowering.int32_ops`); shifts are 0..31 (a divisor
equal to its zero point, which LiteRT refuses at run time, gets ``clz`` capped
at 31 and a defined but meaningless result).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.int32_ops import Int32Ops, int32_to_output
from ....lowering.int32_ops import input_as_int32
from ..qmath import F32, activation_bounds, qtensor, same_types
from ..quant import quantize_multiplier, scale, zero_point
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.ops import OpDef
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader

I32_MAX, I32_MIN = (1 << 31) - 1, -(1 << 31)


def div_multiplier(s1: float, s2: float, s_out: float) -> tuple:
    """div.cc Prepare: ``input1 scale / (input2 scale * output scale)`` in float32, QuantizeMultiplier'd."""
    return quantize_multiplier(float(F32(s1) / (F32(s2) * F32(s_out))))


class _DivOps(Int32Ops):
    """The few extra int32 steps DIV needs on top of :class:`Int32Ops`."""

    def emit(self, op: OpDef, *args, attrs: Optional[A.Attrs] = None) -> Value:
        return self.b.emit(op, *(self._v(a) for a in args), attrs=attrs)

    def asr(self, x: Value, amount: Union[Value, int]) -> Value:
        return self.emit(Op.ARITHMETIC_RIGHT_SHIFT, x, amount, attrs=A.ArithmeticRightShiftAttrs(False))

    def select(self, cond: Value, a: Value, b: Value) -> Value:
        return self.emit(Op.SELECT, cond, a, b)

    def greater(self, a: Value, b: Value) -> Value:
        return self.emit(Op.GREATER, a, b)


def reciprocal(ops: _DivOps, v2: Value) -> tuple[Value, Value, Value]:
    """div.h's sign flip and ``GetReciprocal(|v2|, 31)``: (negative?, inv, clz)."""
    negative = ops.greater(0, v2)
    magnitude = ops.emit(Op.ABS, v2)
    headroom = ops.minimum(ops.clz(magnitude), 31)          # 32 only for the refused v2 == 0
    inv = ops.one_over_one_plus_x(ops.bit_and(ops.shift_left(magnitude, headroom), I32_MAX))
    return negative, inv, headroom


def count_leading_sign_bits(ops: _DivOps, x: Value) -> Value:
    """common.h ``CountLeadingSignBits`` (GCC's ``__builtin_clrsb``; 31 for 0): ``clz(x ^ (x >> 31)) - 1``."""
    return ops.sub(ops.clz(ops.emit(Op.BITWISE_XOR, x, ops.asr(x, 31))), 1)


def x86_rounding_divide_by_pot(ops: _DivOps, x: Value, exponent: Value) -> Value:
    """gemmlowp ``RoundingDivideByPOT(x, e)`` as LiteRT's x86-64 build runs it for any ``e`` (see above)."""
    amount = ops.bit_and(exponent, 31)
    all_ones = ops.sub(0, ops.asr(ops.bit_and(exponent, 32), 5))
    mask = ops.emit(Op.BITWISE_OR, ops.emit(Op.BITWISE_NOT, ops.shift_left(-1, amount)), all_ones)
    remainder = ops.bit_and(x, mask)
    threshold = ops.add(ops.asr(mask, 1), ops.emit(Op.LOGICAL_RIGHT_SHIFT, x, 31))
    floor = ops.asr(x, amount)
    return ops.select(ops.greater(remainder, threshold), ops.add(floor, 1), floor)   # x < 2**31 - 1 here


def add_zero_point_clamped(ops: _DivOps, r: Value, zp: int, lo: int, hi: int) -> Value:
    """``clamp(int32(r + zp), lo, hi)`` with C++'s int32 wrap-around of the addition (div.h)."""
    if zp == 0:
        return ops.minimum(ops.maximum(r, lo), hi)
    if zp > 0:
        wrapped, safe = ops.greater(r, I32_MAX - zp), ops.minimum(r, I32_MAX - zp)
    else:
        wrapped, safe = ops.greater(I32_MIN - zp, r), ops.maximum(r, I32_MIN - zp)
    clamped = ops.minimum(ops.maximum(ops.add(safe, zp), lo), hi)
    return ops.select(wrapped, lo if zp > 0 else hi, clamped)     # wrapped past the top lands far below


@converter("DIV", options="DivOptions", form="quantized")
def convert_q_div(ctx: TfliteContext, node: OpReader) -> Converted:
    dtype = same_types(node)
    (a_info, b_info), y = node.input_infos[:2], node.output_infos[0]
    multiplier, shift = div_multiplier(scale(a_info), scale(b_info), scale(y))
    # q - zp, exact (int16 zero points too)
    v1 = input_as_int32(ctx, qtensor(ctx, node, 0), a_info.type_name, zero_point(a_info))
    v2 = input_as_int32(ctx, qtensor(ctx, node, 1), b_info.type_name, zero_point(b_info))
    ops = _DivOps(ctx, max(v1.type.rank, v2.type.rank))
    negative, inv, c = reciprocal(_DivOps(ctx, v2.type.rank), v2)
    v1 = ops.select(negative, ops.sub(0, v1), v1)
    h = count_leading_sign_bits(ops, v1)
    quotient = ops.srdhm(ops.shift_left(v1, h), inv)         # MultiplyByQuantizedMultiplierGreaterThanOne
    scaled = ops.srdhm(quotient, multiplier)
    exponent = ops.add(h, ops.sub(31 - shift, c))            # recip_shift + h - output_shift
    r = x86_rounding_divide_by_pot(ops, scaled, exponent)
    lo, hi = activation_bounds(y, node.opt("FusedActivationFunction"))
    out = add_zero_point_clamped(ops, r, zero_point(y), lo, hi)
    return int32_to_output(ctx, out, dtype)

