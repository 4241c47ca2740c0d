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
  int32, then scaled to the output. Where a single RESCALE of the stored input
  is exact, for the term on every stored value or (8-bit) for the output on
  every pair of values, each input takes one (:mod:`.q_add_terms`), which Vela
  fuses with the output scaling into one NPU elementwise op; with two per input
  it runs every RESCALE on its own (5x the cycles on a 256x256 ADD).
  ``--npu-fast`` takes the nearest single RESCALE where no exact one exists:
  it differs from TFLite's input term by at most 1 unit of ``2**-left_shift``
  of the input, which moves the output by a tiny fraction of its unit (the
  output multiplier is below ``2**-12`` for any practical scales), so the
  result is within 1 of LiteRT's. int16 inputs without an exact form spell the
  two roundings out (:func:`_split_rescale`).
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

from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.int32_ops import Int32Ops
from ..qmath import (F32, activation_bounds, fit_rescale_input, qtensor, requantize_out, same_types, scale_int32,
                     shifted_int32)
from ..quant import quantize_multiplier, scale, value_range, zero_point
from ..reader import ConvertError
from ..registry import converter
from . import q_add_terms as T
from .q_pot import is_pot_int16, pot_add

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.ops import OpDef
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo


def _scaled_inputs(ctx: TfliteContext, node: OpReader, left_shift: int, fast: bool = False, pair: Optional[tuple[int, float]] = None) -> tuple[list[Value], float]:
    """Both inputs as ``MultiplyByQuantizedMultiplierSmallerThanOneExp((q - zp) << left_shift, s_i / twice_max)``.

    ``pair`` (ADD/SUB: ``(sign, real_out)``) allows :func:`.q_add_terms.pair_forms`; ``fast`` (--npu-fast)
    takes the nearest single RESCALE where no exact one exists, within 1 of the term."""
    infos = node.input_infos[:2]
    top = T.twice_max(infos)
    reals = [float(F32(scale(info))) / top for info in infos]
    forms = T.pair_forms(infos, left_shift, *pair, reals) if pair and not fast else None
    if forms:
        return [T.emit_form(ctx, qtensor(ctx, node, i), infos[i], forms[i]) for i in range(2)], top
    values = []
    for i, (info, real) in enumerate(zip(infos, reals)):
        form = T.exact_form(info, left_shift, real) or (T.nearest_form(left_shift, real) if fast else None)
        if form is not None:
            values.append(T.emit_form(ctx, qtensor(ctx, node, i), info, form))
        elif left_shift == 15:
            values.append(_split_rescale(ctx, qtensor(ctx, node, i), info, left_shift, real))
        else:
            values.append(scale_int32(ctx, shifted_int32(ctx, qtensor(ctx, node, i), info, left_shift), real))
    return values, top


def _split_rescale(ctx: TfliteContext, x: Value, info: TensorInfo, left_shift: int, real: float) -> Value:
    """The input term as TFLite's two roundings, spelled out: ``SaturatingRoundingDoublingHighMul((q - zp) <<
    left_shift, m)`` is one SINGLE_ROUND RESCALE of the stored input by ``m / 2**(31 - left_shift)``, and
    ``RoundingDivideByPOT(b, e)`` (half away from zero) is a rounding arithmetic shift of ``b - [b < 0]``.

    Used for int16 inputs, where it replaces an int16 -> int32 copy, a MUL by ``2**15`` and a DOUBLE_ROUND
    int32 RESCALE (Vela: 10.2k -> 9.9k cycles on the int16x8 sample); for int8 Vela runs the 31-bit
    RESCALE of the stored input in two passes, which costs more than the two RESCALEs (13.0k -> 14.1k)."""
    m, exponent = quantize_multiplier(real)
    b = T.emit_form(ctx, x, info, T.Form(m, 31 - left_shift))
    if exponent == 0:
        return b
    ops = Int32Ops(ctx, b.type.rank)
    below = ops.sub(b, ctx.b.emit(Op.LOGICAL_RIGHT_SHIFT, b, ops.const(31)))
    return ops.rdbpot(below, -exponent)


def _add_sub(op: OpDef, pot_sign: int) -> Callable[[TfliteContext, OpReader], Value]:
    def convert(ctx: TfliteContext, node: OpReader) -> Value:
        dtype = same_types(node)
        y = node.output_infos[0]
        bounds = activation_bounds(y, node.opt("FusedActivationFunction"))
        if dtype == "INT16" and node.opt("PotScaleInt16") and is_pot_int16(node):
            return pot_add(ctx, node, pot_sign, bounds)
        left_shift = 15 if dtype == "INT16" else 20
        real_out = T.twice_max(node.input_infos[:2]) / float(F32(1 << left_shift) * F32(scale(y)))
        (a, b), _ = _scaled_inputs(ctx, node, left_shift, fast=ctx.model.npu_fast, pair=(pot_sign, real_out))
        acc = ctx.b.emit(op, a, b)
        return requantize_out(ctx, acc, real_out, y, bounds)
    return convert


converter("ADD", options="AddOptions", form="quantized")(_add_sub(Op.ADD, 1))
converter("SUB", options="SubOptions", form="quantized")(_add_sub(Op.SUB, -1))


@converter("MUL", options="MulOptions", form="quantized")
def convert_q_mul(ctx: TfliteContext, node: OpReader) -> Converted:
    dtype = same_types(node)
    infos, y = node.input_infos[:2], node.output_infos[0]
    if dtype == "INT16":
        _require_zero_points(node)
    a, b = (shifted_int32(ctx, qtensor(ctx, node, i), infos[i]) for i in range(2))
    acc = ctx.b.emit(Op.MUL, a, b, attrs=A.MulAttrs(0))
    real = float(np.float64(F32(scale(infos[0]))) * np.float64(F32(scale(infos[1]))) / np.float64(F32(scale(y))))
    acc = fit_rescale_input(ctx, acc, real, _max_offset(infos[0]) * _max_offset(infos[1]))
    return requantize_out(ctx, acc, real, y, activation_bounds(y, node.opt("FusedActivationFunction")))


def _max_offset(info: TensorInfo) -> int:
    lo, hi = value_range(info)
    return max(hi - zero_point(info), zero_point(info) - lo)


def _require_zero_points(node: OpReader) -> None:
    for info in list(node.input_infos[:2]) + [node.output_infos[0]]:
        if zero_point(info) != 0:
            raise ConvertError(f"int16 {node.op_type} needs zero point 0 on '{info.name}' (TFLite's kernel "
                               f"requires symmetric int16), got {zero_point(info)}")


@converter("SQUARED_DIFFERENCE", form="quantized")
def convert_q_squared_difference(ctx: TfliteContext, node: OpReader) -> Converted:
    same_types(node, types=("INT8",))
    (a, b), twice_max = _scaled_inputs(ctx, node, 7)
    d = ctx.b.emit(Op.SUB, a, b)
    sq = ctx.b.emit(Op.MUL, d, d, attrs=A.MulAttrs(0))
    y = node.output_infos[0]
    real_out = twice_max * twice_max / float(F32(1 << 14) * F32(scale(y)))
    return requantize_out(ctx, sq, real_out, y)
