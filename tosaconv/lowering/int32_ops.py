"""Emitting int32 fixed-point arithmetic as TOSA ops, each step equal to its gemmlowp counterpart.

:class:`Int32Ops` wraps the builder for tensors of one rank; integer operands
become broadcast constants. The identities it relies on:

* ``srdhm(a, b)`` (gemmlowp ``SaturatingRoundingDoublingHighMul``) is TOSA
  ``MUL`` with ``shift = 31``: both compute ``floor((a*b + 2**30) / 2**31)``.
  gemmlowp's negative nudge ``1 - 2**30`` with C's truncating division gives
  the same floor, so only ``a == b == INT32_MIN`` (saturation) differs, which
  no caller here produces.
* ``rdbpot(x, e)`` (``RoundingDivideByPOT``) of a non-negative ``x`` is TOSA
  ``ARITHMETIC_RIGHT_SHIFT`` with ``round = true`` (round half up).
* :meth:`one_over_one_plus_x` is gemmlowp's ``one_over_one_plus_x_for_x_in_0_1``
  for ``a`` in ``[0, 2**31)``: ``RoundingHalfSum(a, INT32_MAX)`` is
  ``(a >> 1) + 2**30`` there, the Newton-Raphson steps never saturate, and the
  final ``Rescale<0>`` (a saturating doubling) is spelled with MINIMUM/MAXIMUM.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

import numpy as np

from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.ops import Op

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..ir.ops import OpDef
    from .context import LoweringContext

HALF_RANGE = 1 << 30
Operand = Union["Value", int, np.integer]   # an int32 tensor, or a scalar that becomes a broadcast constant


class Int32Ops:
    def __init__(self, ctx: LoweringContext, rank: int):
        self.b = ctx.b
        self.rank = rank

    def const(self, value: Union[int, np.integer]) -> Value:
        return self.b.const(np.full((1,) * self.rank, value, dtype=np.int32))

    def _v(self, x: Operand) -> Value:
        return self.const(x) if isinstance(x, (int, np.integer)) else x

    def _bin(self, op: OpDef, a: Operand, b: Operand, attrs: Optional[A.Attrs] = None) -> Value:
        return self.b.emit(op, self._v(a), self._v(b), attrs=attrs)

    def add(self, a: Operand, b: Operand) -> Value:
        return self._bin(Op.ADD, a, b)

    def sub(self, a: Operand, b: Operand) -> Value:
        return self._bin(Op.SUB, a, b)

    def minimum(self, a: Operand, b: Operand) -> Value:
        return self._bin(Op.MINIMUM, a, b, A.NanModeAttrs())

    def maximum(self, a: Operand, b: Operand) -> Value:
        return self._bin(Op.MAXIMUM, a, b, A.NanModeAttrs())

    def bit_and(self, a: Operand, b: Operand) -> Value:
        return self._bin(Op.BITWISE_AND, a, b)

    def shift_left(self, a: Operand, b: Operand) -> Value:
        return self._bin(Op.LOGICAL_LEFT_SHIFT, a, b)

    def clz(self, a: Value) -> Value:
        return self.b.emit(Op.CLZ, a)

    def srdhm(self, a: Operand, b: Operand) -> Value:
        """gemmlowp SaturatingRoundingDoublingHighMul (no INT32_MIN * INT32_MIN operands)."""
        return self._bin(Op.MUL, a, b, A.MulAttrs(31))

    def rdbpot(self, x: Operand, exponent: Operand) -> Value:
        """gemmlowp RoundingDivideByPOT of a non-negative ``x``."""
        return self._bin(Op.ARITHMETIC_RIGHT_SHIFT, x, exponent, A.ArithmeticRightShiftAttrs(True))

    def reduce(self, op: OpDef, x: Value, axis: int) -> Value:
        attrs = A.AxisNanAttrs(axis) if op is Op.REDUCE_MAX else A.AxisAttrs(axis)
        return self.b.emit(op, x, attrs=attrs)

    def one_over_one_plus_x(self, a: Operand) -> Value:
        """gemmlowp ``one_over_one_plus_x_for_x_in_0_1`` (Q0.31 in and out) for ``a`` in [0, 2**31)."""
        half_denominator = self.add(self.rdbpot_floor(a, 1), HALF_RANGE)
        x = self.add(self.srdhm(half_denominator, -1010580540), 1515870810)
        for _ in range(3):
            one_minus = self.sub(1 << 29, self.srdhm(half_denominator, x))
            x = self.add(x, self.shift_left(self.srdhm(x, one_minus), 2))
        return self.saturating_double(x)

    def rdbpot_floor(self, x: Operand, exponent: Operand) -> Value:
        return self._bin(Op.ARITHMETIC_RIGHT_SHIFT, x, exponent, A.ArithmeticRightShiftAttrs(False))

    def saturating_double(self, x: Operand) -> Value:
        """gemmlowp ``SaturatingRoundingMultiplyByPOT<1>`` of a non-negative ``x``."""
        limit = HALF_RANGE - 1
        doubled = self.shift_left(self.minimum(x, limit), 1)
        return self.add(doubled, self.minimum(self.maximum(self.sub(x, limit), 0), 1))


def identity_rescale(ctx: LoweringContext, x: Value, out_dtype: DType, *, input_zp: int = 0, output_zp: int = 0,
                     input_unsigned: bool = False, output_unsigned: bool = False) -> Value:
    """An exact RESCALE (multiplier 2**30, shift 30) that changes type, subtracts ``input_zp``, adds
    ``output_zp`` and saturates."""
    attrs = A.RescaleAttrs((1 << 30,), (30,), int(input_zp), int(output_zp), scale32=True, rounding_mode="SINGLE_ROUND",
                           input_unsigned=input_unsigned, output_unsigned=output_unsigned, output_dtype=out_dtype)
    return ctx.b.emit(Op.RESCALE, x, attrs=attrs)


def input_as_int32(ctx: LoweringContext, x: Value, type_name: str, zp: int = 0) -> Value:
    """8/16-bit quantized storage ``x`` of ``type_name`` (INT8, UINT8 or INT16) as int32 values minus
    ``zp`` (uint8 through int16, since TOSA forbids an unsigned RESCALE to int32)."""
    if type_name == "UINT8":
        x = identity_rescale(ctx, x, DType.INT16, input_unsigned=True)
    values = identity_rescale(ctx, x, DType.INT32)
    return Int32Ops(ctx, x.type.rank).sub(values, zp) if zp else values


def int32_to_output(ctx: LoweringContext, values: Value, type_name: str, zp: int = 0) -> Value:
    """int32 ``values`` plus ``zp``, saturated into ``type_name`` storage (INT8, UINT8 or INT16; uint8
    through int16)."""
    if type_name == "UINT8":
        return identity_rescale(ctx, identity_rescale(ctx, values, DType.INT16), DType.INT8, output_zp=zp,
                                output_unsigned=True)
    if type_name == "INT16":   # TOSA requires output_zp 0 for int16
        values = Int32Ops(ctx, values.type.rank).add(values, zp) if zp else values
        return identity_rescale(ctx, values, DType.INT16)
    return identity_rescale(ctx, values, DType.INT8, output_zp=zp)
