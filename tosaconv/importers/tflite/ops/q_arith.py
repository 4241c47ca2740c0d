"""Quantized TFLite ADD, SUB, MUL and SQUARED_DIFFERENCE (int8, uint8, int16) in int32 arithmetic.

TOSA 1.0 has no int8/int16 ADD, SUB or MUL, so every operand is first moved
to int32 by an exact RESCALE and the result is scaled back by a DOUBLE_ROUND
RESCALE, which is TFLite's ``MultiplyByQuantizedMultiplier`` (see quant.py).

- ADD / SUB (add.cc / sub.cc ``Prepare``, ``reference_integer_ops::AddElementwise``,
  ``reference_ops::SubElementwise``): ``left_shift`` 20 (8-bit) or 15 (int16
  general path); ``twice_max = 2 * max(s1, s2)`` in double; input multipliers
  ``s_i / twice_max``; output multiplier ``twice_max / ((1 << left_shift) * s_out)``
  (a float product, exact). Each input is ``(q - zp) << left_shift`` scaled
  by its multiplier (two roundings inside one DOUBLE_ROUND RESCALE), summed in
  int32, then scaled to the output. An input has at most 65,536 stored values,
  so :func:`_one_rescale` looks for a single RESCALE straight from the stored
  input (multiplier, shift, single or double rounding) that gives the same
  int32 on *every* one of them, by intersecting, value by value, the interval
  of multipliers that round to the wanted result. It usually exists (always for
  the input whose multiplier is 1/2, ``(q - zp) << (left_shift - 1)``), and then
  each input costs one RESCALE instead of two; otherwise the two stay. With
  one RESCALE per input Vela fuses the whole ADD (input and output scaling)
  into one NPU elementwise op; with two it runs every RESCALE on its own
  (5x the cycles on a 256x256 ADD). ``--npu-fast`` therefore takes the
  nearest single RESCALE where no exact one exists: it differs from TFLite's
  input term by at most 1 unit of ``2**-left_shift`` of the input, which moves
  the output by a tiny fraction of its unit (the output multiplier is below
  ``2**-12`` for any practical scales), so the result is within 1 of LiteRT's.
- int16 with power-of-two scales and zero points 0 takes add.cc/sub.cc's
  ``pot_scale_int16`` path (the option's default): one input is rounded by
  ``RoundingDivideByPOT`` (half away from zero, built from an arithmetic
  shift) and the sum saturates to int16 (:mod:`.q_pot`).
- MUL (mul.cc, ``reference_integer_ops::MulElementwise``): ``(q1 - zp1) * (q2 - zp2)``
  scaled by ``double(s1) * double(s2) / double(s_out)``.
- SQUARED_DIFFERENCE int8 (squared_difference.cc): ADD's scheme with
  ``left_shift`` 7, the difference squared in int32, output multiplier
  ``twice_max**2 / ((1 << 14) * s_out)``.

Fused activations clamp to ``CalculateActivationRangeQuantized``'s bounds.
"""
from __future__ import annotations

import numpy as np

from ....interpreter.fixed_point import apply_scale_32
from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ..qmath import (F32, activation_bounds, fit_rescale_input, qtensor, requantize_out, same_types, scale_int32,
                     shifted_int32, signed_input)
from ..int32_ops import Int32Ops
from ..quant import quantize_multiplier, scale, tosa_multiplier, value_range, zero_point
from ..reader import ConvertError
from ..registry import converter
from .q_pot import is_pot_int16, pot_add


def _scaled_inputs(ctx, node, left_shift: int, fast: bool = False):
    """Both inputs as ``MultiplyByQuantizedMultiplierSmallerThanOneExp((q - zp) << left_shift, s_i / twice_max)``
    (``fast``: the nearest single RESCALE where no exact one exists, within 1 of it)."""
    infos = node.input_infos[:2]
    twice_max = 2.0 * float(max(F32(scale(infos[0])), F32(scale(infos[1]))))
    values = []
    for i, info in enumerate(infos):
        real = float(F32(scale(info))) / twice_max
        one = _one_rescale(ctx, qtensor(ctx, node, i), info, left_shift, real)
        if one is None and fast:
            one = _nearest_rescale(ctx, qtensor(ctx, node, i), info, left_shift, real)
        if one is None and left_shift == 15:
            one = _split_rescale(ctx, qtensor(ctx, node, i), info, left_shift, real)
        if one is None:
            one = scale_int32(ctx, shifted_int32(ctx, qtensor(ctx, node, i), info, left_shift), real)
        values.append(one)
    return values, twice_max


def _split_rescale(ctx, x, info, left_shift: int, real: float):
    """The input term as TFLite's two roundings, spelled out: ``SaturatingRoundingDoublingHighMul((q - zp) <<
    left_shift, m)`` is one SINGLE_ROUND RESCALE of the stored input by ``m / 2**(31 - left_shift)``, and
    ``RoundingDivideByPOT(b, e)`` (half away from zero) is a rounding arithmetic shift of ``b - [b < 0]``.

    Used for int16 inputs, where it replaces an int16 -> int32 copy, a MUL by ``2**15`` and a DOUBLE_ROUND
    int32 RESCALE (Vela: 10.2k -> 9.9k cycles on the int16x8 sample); for int8 Vela runs the 31-bit
    RESCALE of the stored input in two passes, which costs more than the two RESCALEs (13.0k -> 14.1k)."""
    m, exponent = quantize_multiplier(real)
    x, zp = signed_input(ctx, x, info)
    attrs = A.RescaleAttrs((m,), (31 - left_shift,), zp, 0, scale32=True, rounding_mode="SINGLE_ROUND",
                           output_dtype=DType.INT32)
    b = ctx.b.emit(Op.RESCALE, x, attrs=attrs)
    if exponent == 0:
        return b
    ops = Int32Ops(ctx, b.type.rank)
    below = ops.sub(b, ctx.b.emit(Op.LOGICAL_RIGHT_SHIFT, b, ops.const(31)))
    return ops.rdbpot(below, -exponent)


def _nearest_rescale(ctx, x, info, left_shift: int, real: float):
    """``(q - zp) * m / 2**(shift - left_shift)`` rounded once (--npu-fast): TFLite rounds ``(q - zp) << left_shift``
    twice, at bit 31 of the product and then by the exponent, and two roundings of the same value land at
    most 1 apart, so this differs from the exact input term by at most 1 unit of ``2**-left_shift``."""
    m, shift = tosa_multiplier(real)
    x, zp = signed_input(ctx, x, info)
    attrs = A.RescaleAttrs((m,), (shift - left_shift,), zp, 0, scale32=True, rounding_mode="SINGLE_ROUND",
                           output_dtype=DType.INT32)
    return ctx.b.emit(Op.RESCALE, x, attrs=attrs)


def _one_rescale(ctx, x, info, left_shift: int, real: float):
    """``MultiplyByQuantizedMultiplier((q - zp) << left_shift, real)`` as one RESCALE of the stored input, or
    None when no multiplier and shift reproduce it on every value of the type."""
    lo, hi = value_range(info)
    d = np.arange(lo - zero_point(info), hi - zero_point(info) + 1, dtype=np.int64)
    d = d[np.argsort(-np.abs(d), kind="stable")]     # the largest values narrow the interval fastest
    m0, s0 = tosa_multiplier(real)
    want = apply_scale_32(d << left_shift, m0, s0, double_round=True)   # what the two RESCALEs compute
    top = min(62, (((1 << 31) - 1) * (1 << s0) // (m0 << left_shift)).bit_length() - 1)
    for shift in (top, top - 1):
        for double in (False, True) if shift > 31 else (False,):     # DOUBLE_ROUND differs only above 31
            m = _fitting_multiplier(d, want, shift, double) if shift >= 2 else None
            if m is not None:
                x, zp = signed_input(ctx, x, info)
                attrs = A.RescaleAttrs((m,), (shift,), zp, 0, scale32=True,
                                       rounding_mode="DOUBLE_ROUND" if double else "SINGLE_ROUND",
                                       output_dtype=DType.INT32)
                return ctx.b.emit(Op.RESCALE, x, attrs=attrs)
    return None


def _fitting_multiplier(d: np.ndarray, want: np.ndarray, shift: int, double: bool):
    """A multiplier that takes every ``d`` to ``want``: the interval the largest values allow (exact
    integer bounds), its ends and middle then checked on all values at once."""
    bounds = _multiplier_range(d[:256].tolist(), want[:256].tolist(), shift, double)
    if bounds is None:
        return None
    for m in sorted({bounds[0], bounds[1], (bounds[0] + bounds[1]) // 2}):
        if np.array_equal(apply_scale_32(d, m, shift, double_round=double), want):
            return m
    return None


def _multiplier_range(d: list, want: list, shift: int, double: bool):
    """The interval ``(lo, hi)`` of multipliers M in [0, 2**31) with ``(d * M + round(d)) >> shift == want``
    for every d (``round`` is apply_scale_32's, with the +-2**30 of DOUBLE_ROUND), or None."""
    lo, hi = 0, (1 << 31) - 1
    for di, c in zip(d, want):
        if di == 0:
            if c != 0:
                return None
            continue
        r = (1 << (shift - 1)) + (((1 << 30) if di > 0 else -(1 << 30)) if double else 0)
        a, b = (c << shift) - r, ((c + 1) << shift) - r - 1        # a <= di * M <= b
        if di > 0:
            lo, hi = max(lo, -(-a // di)), min(hi, b // di)
        else:
            lo, hi = max(lo, -(-b // di)), min(hi, a // di)
        if lo > hi:
            return None
    return lo, hi


def _add_sub(op, pot_sign: int):
    def convert(ctx, node):
        dtype = same_types(node)
        y = node.output_infos[0]
        bounds = activation_bounds(y, node.opt("FusedActivationFunction"))
        if dtype == "INT16" and node.opt("PotScaleInt16") and is_pot_int16(node):
            return pot_add(ctx, node, pot_sign, bounds)
        left_shift = 15 if dtype == "INT16" else 20
        (a, b), twice_max = _scaled_inputs(ctx, node, left_shift, fast=ctx.model.npu_fast)
        acc = ctx.b.emit(op, a, b)
        real_out = twice_max / float(F32(1 << left_shift) * F32(scale(y)))
        return requantize_out(ctx, acc, real_out, y, bounds)
    return convert


converter("ADD", options="AddOptions", kind="quantized")(_add_sub(Op.ADD, 1))
converter("SUB", options="SubOptions", kind="quantized")(_add_sub(Op.SUB, -1))


@converter("MUL", options="MulOptions", kind="quantized")
def convert_q_mul(ctx, node):
    dtype = same_types(node)
    infos, y = node.input_infos[:2], node.output_infos[0]
    if dtype == "INT16":
        _require_zero_points(node)
    a, b = (shifted_int32(ctx, qtensor(ctx, node, i), infos[i]) for i in range(2))
    acc = ctx.b.emit(Op.MUL, a, b, attrs=A.MulAttrs(0))
    real = float(np.float64(F32(scale(infos[0]))) * np.float64(F32(scale(infos[1]))) / np.float64(F32(scale(y))))
    acc = fit_rescale_input(ctx, acc, real, _max_offset(infos[0]) * _max_offset(infos[1]))
    return requantize_out(ctx, acc, real, y, activation_bounds(y, node.opt("FusedActivationFunction")))


def _max_offset(info) -> int:
    lo, hi = value_range(info)
    return max(hi - zero_point(info), zero_point(info) - lo)


def _require_zero_points(node):
    for info in list(node.input_infos[:2]) + [node.output_infos[0]]:
        if zero_point(info) != 0:
            raise ConvertError(f"int16 {node.op_type} needs zero point 0 on '{info.name}' (TFLite's kernel "
                               f"requires symmetric int16), got {zero_point(info)}")


@converter("SQUARED_DIFFERENCE", kind="quantized")
def convert_q_squared_difference(ctx, node):
    same_types(node, types=("INT8",))
    (a, b), twice_max = _scaled_inputs(ctx, node, 7)
    d = ctx.b.emit(Op.SUB, a, b)
    sq = ctx.b.emit(Op.MUL, d, d, attrs=A.MulAttrs(0))
    y = node.output_infos[0]
    real_out = twice_max * twice_max / float(F32(1 << 14) * F32(scale(y)))
    return requantize_out(ctx, sq, real_out, y)
