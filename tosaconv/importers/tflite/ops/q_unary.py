"""Quantized TFLite RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1, ABS and NEG.

- RELU family (activations.cc ``ReluPrepare``, ``QuantizedReluX`` ->
  ``ReluX``): the multiplier is ``input_scale / output_scale`` divided in
  float32 and widened; each value is ``zp_out + MultiplyByQuantizedMultiplier(q - zp_in)``
  clamped to ``[max(T_min, zp_out + roundf(lo / s_out)), min(T_max, zp_out + roundf(hi / s_out))]``
  (no upper bound for RELU); with equal scales and zero points the
  multiplier is exactly 1 (``2**30``, shift 1), an identity, and only the
  CLAMP is emitted. int8 and uint8; int16 (zero points 0) for
  RELU and RELU6 only: LiteRT runs RELU_N1_TO_1 and RELU_0_TO_1 on 8-bit data.
- ABS int8/int16 (elementwise.cc ``AbsPrepare`` / ``AbsEvalQuantized``):
  ``|q - zp_in|``, rescaled by ``input_scale / output_scale`` (float32
  division) only when the scales differ, plus ``zp_out``, clamped.
- NEG int8/int16 (neg.cc): the kernel negates the stored integers and
  ignores the quantization parameters; ``-(-128)`` wraps to -128 as its
  ``static_cast`` does, so the negation runs in int32 and narrows by CAST
  (which keeps the low bits).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ..qmath import F32, f32_ratio, quantize_value, requantize_out, same_types, shifted_int32
from ..quant import QUANT_TYPES, scale, value_range, zero_point
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo

_RELU_RANGES = {"RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0), "RELU_0_TO_1": (0.0, 1.0)}


def _relu_bounds(info: TensorInfo, lo: float, hi: Optional[float]) -> tuple[int, int]:
    """QuantizedReluX's clamp: ``zp + (int32)roundf(bound / scale)`` within the type's range."""
    t_lo, t_hi = value_range(info)
    return max(t_lo, quantize_value(info, lo)), t_hi if hi is None else min(t_hi, quantize_value(info, hi))


def _int16_zero_points(node: OpReader) -> None:
    for info in (node.input_infos[0], node.output_infos[0]):
        if zero_point(info) != 0:
            raise ConvertError(f"int16 {node.op_type} needs zero point 0 on '{info.name}' (TFLite's Prepare "
                               f"requires it), got {zero_point(info)}")


def _relu(ctx: TfliteContext, node: OpReader) -> Value:
    lo, hi = _RELU_RANGES[node.op_type]
    types = ("INT8", "UINT8") if node.op_type in ("RELU_0_TO_1", "RELU_N1_TO_1") else ("INT8", "UINT8", "INT16")
    dtype = same_types(node, 1, types)
    if dtype == "INT16":
        _int16_zero_points(node)
    x, y = node.input_infos[0], node.output_infos[0]
    real = f32_ratio(scale(x), scale(y))
    if real == 1.0 and zero_point(x) == zero_point(y) and dtype != "UINT8":
        # MultiplyByQuantizedMultiplier by exactly 1 (2**30, shift 1) is the identity: only the clamp is left
        b_lo, b_hi = _relu_bounds(y, lo, hi)
        return ctx.b.emit(Op.CLAMP, ctx.tensor(node.inputs[0]), attrs=A.ClampAttrs(b_lo, b_hi))
    acc = shifted_int32(ctx, ctx.tensor(node.inputs[0]), x)
    return requantize_out(ctx, acc, real, y, _relu_bounds(y, lo, hi))


for _name in _RELU_RANGES:
    converter(_name, form="quantized")(_relu)


@converter("ABS", form="quantized")
def convert_q_abs(ctx: TfliteContext, node: OpReader) -> Converted:
    dtype = same_types(node, 1, ("INT8", "INT16"))
    if dtype == "INT16":
        _int16_zero_points(node)
    x, y = node.input_infos[0], node.output_infos[0]
    acc = ctx.b.emit(Op.ABS, shifted_int32(ctx, ctx.tensor(node.inputs[0]), x))
    same = F32(scale(x)) == F32(scale(y))
    return requantize_out(ctx, acc, 1.0 if same else f32_ratio(scale(x), scale(y)), y)


@converter("NEG", form="quantized")
def convert_q_neg(ctx: TfliteContext, node: OpReader) -> Converted:
    dtype = same_types(node, 1, ("INT8", "INT16"))
    wide = ctx.b.emit(Op.CAST, ctx.tensor(node.inputs[0]), attrs=A.CastAttrs(DType.INT32))
    negated = ctx.b.emit(Op.NEGATE, wide, attrs=A.NegateAttrs(0, 0))
    return ctx.b.emit(Op.CAST, negated, attrs=A.CastAttrs(QUANT_TYPES[dtype]))

