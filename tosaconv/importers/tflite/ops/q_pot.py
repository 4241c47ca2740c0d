"""The int16 power-of-two path of quantized TFLite ADD and SUB (add.cc / sub.cc ``pot_scale_int16``).

When every scale is a power of two and every zero point 0, TFLite's Prepare
(``CheckedLog2`` on each scale, in float32) lets one input be shifted right
by ``log2(s_in) - log2(s_out)`` bits with gemmlowp's ``RoundingDivideByPOT``
(round half away from zero) and adds (or subtracts) it to the other with
int16 saturation: reference_ops ``Add(int16)`` / ``Sub16``. The other input's
shift must be 0 and neither may be positive, or TFLite refuses the model.
Here the rounding shift is ``(v + 2**(k-1) - (v < 0)) >> k`` in int32, and the
saturation and the fused activation are one clamp before the cast to int16.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.typed import clamp
from ..quant import scale, zero_point
from ..reader import ConvertError

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ..node import OpReader
    from ..context import TfliteContext


def checked_log2(x: float) -> tuple[bool, int]:
    """TFLite's ``CheckedLog2``: (is a power of two, rounded log2), computed in float32."""
    f = np.float32
    log2 = f(np.log(f(x))) * (f(1.0) / f(np.log(f(2.0))))
    rounded = np.sign(log2) * np.floor(np.abs(np.float64(log2)) + 0.5)
    return bool(abs(f(log2 - f(rounded))) < f(1e-3)), int(rounded)


def is_pot_int16(node: OpReader) -> bool:
    infos = list(node.input_infos[:2]) + [node.output_infos[0]]
    return all(zero_point(i) == 0 and checked_log2(scale(i))[0] for i in infos)


def pot_add(ctx: TfliteContext, node: OpReader, sign: int, bounds: tuple) -> Value:
    """``sat16(in1 + sign * in2)`` with the shifted input divided by a power of two first."""
    out_log2 = checked_log2(scale(node.output_infos[0]))[1]
    shifts = [checked_log2(scale(i))[1] - out_log2 for i in node.input_infos[:2]]
    if max(shifts) > 0 or min(shifts) < 0 and 0 not in shifts:
        raise ConvertError(f"int16 {node.op_type} with power-of-two scales needs input scales at most the "
                           f"output's and one equal to it (TFLite's kernel refuses shifts {shifts})")
    if sign > 0 and node.input_infos[0].shape != node.input_infos[1].shape:
        # add.cc's EvalAddQuantized calls the non-broadcasting reference Add here (LiteRT reads out of bounds).
        raise ConvertError("int16 ADD with power-of-two scales does not broadcast in TFLite (its kernel reads "
                           "both inputs elementwise); give both inputs one shape or set pot_scale_int16 false")
    values = []
    for i in range(2):
        v = ctx.b.emit(Op.CAST, ctx.tensor(node.inputs[i]), attrs=A.CastAttrs(DType.INT32))
        values.append(_rounding_divide_by_pot(ctx, v, -shifts[i]) if shifts[i] else v)
    acc = ctx.b.emit(Op.ADD if sign > 0 else Op.SUB, *values)
    lo, hi = bounds
    return ctx.b.emit(Op.CAST, clamp(ctx, acc, lo, hi), attrs=A.CastAttrs(DType.INT16))


def _rounding_divide_by_pot(ctx: TfliteContext, v: Value, k: int) -> Value:
    """gemmlowp ``RoundingDivideByPOT(v, k)``: ``v / 2**k`` rounded half away from zero (int32)."""
    k_type = v.type
    negative = ctx.b.emit(Op.GREATER, ctx.b.scalar_like(0, k_type), v)
    nudge = ctx.b.emit(Op.SELECT, negative, ctx.b.scalar_like((1 << (k - 1)) - 1, k_type),
                       ctx.b.scalar_like(1 << (k - 1), k_type))
    shifted = ctx.b.emit(Op.ADD, v, nudge)
    return ctx.b.emit(Op.ARITHMETIC_RIGHT_SHIFT, shifted, ctx.b.scalar_like(k, k_type),
                      attrs=A.ArithmeticRightShiftAttrs(False))
