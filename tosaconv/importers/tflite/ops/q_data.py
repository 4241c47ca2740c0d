"""Quantized data movement that needs more than the float converter: PAD, PADV2, SPACE_TO_BATCH_ND,
CONCATENATION, ARG_MAX and ARG_MIN.

The plain movers (RESHAPE, TRANSPOSE, GATHER, ...) are registered ``form="any"``
in their own modules (see :mod:`..qhelpers_data` for what TFLite does when
their parameters differ). These need the quantization:

* **Padding** fills with a quantized value: PAD and SPACE_TO_BATCH_ND with the
  output zero point (pad.cc / space_to_batch_nd.cc ``output->params.zero_point``),
  PADV2 with the stored ``constant_values``, whose zero point must equal the
  output's (pad.cc refuses the model otherwise; so does tosaconv).
* **CONCATENATION** (concatenation.cc): int8 requires every input's scale and
  zero point to equal the output's, int16 copies the stored values whatever
  their parameters, and uint8 runs ``reference_ops::ConcatenationWithScaling``:
  an input with other parameters is requantized per element in float32,
  ``clamp(int(TfLiteRound(q * scale + bias)) + out_zp, 0, 255)`` with ``scale =
  in_scale * (1 / out_scale)`` and ``bias = -in_zp * scale``. That maps each of
  the 256 stored values to one output value, so tosaconv evaluates it in numpy
  (float32, the same order) and emits one TABLE per such input: exact by
  construction, no rounding left to TOSA. A fused activation is refused, as
  LiteRT refuses it on quantized CONCATENATION.
* **ARG_MAX / ARG_MIN** compare stored values; uint8 storage holds int8 bits,
  whose order differs, so uint8 goes through the order-preserving ``u - 128``
  first (one exact RESCALE).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from ..qhelpers_data import same_quant
from ..qmath import same_types
from ..qtables import emit_int8_table, float_to_int32, round_half_away, tflite_values
from ..quant import scale, unsigned, zero_point
from ..reader import ConvertError
from ..registry import converter
from . import indexing, layout, shape, slicing
from .common import ACT
from .q_accum import activation as signed_activation

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo

F32 = np.float32


def stored(value: int, info: TensorInfo) -> int:
    """The int8/int16 storage of TFLite value ``value`` of tensor ``info`` (uint8 as its int8 bits)."""
    return value - 256 if unsigned(info) and value >= 128 else value


@converter("PAD", "PADV2", form="quantized")
def convert_q_pad(ctx: TfliteContext, node: OpReader) -> Converted:
    out = node.output_infos[0]
    value = zero_point(out)
    if node.input(2) is not None:
        c_info = node.input_infos[2]
        if zero_point(c_info) != zero_point(out):
            raise ConvertError(f"quantized PADV2 '{node.name}': constant_values has zero point "
                               f"{zero_point(c_info)} but the output has {zero_point(out)}; TFLite's pad.cc "
                               "requires them equal (LiteRT refuses this model too)")
        c = ctx.const(node.inputs[2])
        if c is None:
            raise ConvertError("PADV2 constant_values must be a constant")
        value = int(np.asarray(c).reshape(-1)[0])
    return slicing.pad(ctx, node, float(stored(value, out)))


@converter("SPACE_TO_BATCH_ND", form="quantized")
def convert_q_space_to_batch_nd(ctx: TfliteContext, node: OpReader) -> Converted:
    same_quant(node)
    out = node.output_infos[0]
    return layout.space_to_batch(ctx, node, float(stored(zero_point(out), out)))


def _requantize_table(ctx: TfliteContext, x: Value, info: TensorInfo, out: TensorInfo) -> Value:
    """ConcatenationWithScaling's per-element float requantization of uint8 ``x`` as one TABLE."""
    s = F32(scale(info)) * (F32(1) / F32(scale(out)))
    bias = F32(-zero_point(info)) * s
    values = tflite_values(info).astype(F32)
    rounded = round_half_away(values * s + bias)
    entries = np.clip(float_to_int32(rounded) + zero_point(out), 0, 255)
    return emit_int8_table(ctx, x, out, entries)


@converter("CONCATENATION", options="ConcatenationOptions", form="quantized")
def convert_q_concatenation(ctx: TfliteContext, node: OpReader) -> Converted:
    if node.opt("FusedActivationFunction") != ACT.NONE:
        raise ConvertError(f"quantized CONCATENATION '{node.name}' with a fused activation: TFLite's "
                           "concatenation.cc refuses it (LiteRT fails to prepare this model); remove the "
                           "activation or apply it as a separate op")
    kind = same_types(node, len(node.inputs))
    if kind == "INT8":
        same_quant(node, None)
    out = node.output_infos[0]
    xs = []
    for key, info in zip(node.inputs, node.input_infos):
        x = ctx.tensor(key)
        if kind == "UINT8" and (F32(scale(info)), zero_point(info)) != (F32(scale(out)), zero_point(out)):
            x = _requantize_table(ctx, x, info, out)
        xs.append(x)
    return shape.concat(ctx, node, xs)


def _q_arg(find_min: bool) -> Callable[[TfliteContext, OpReader], Value]:
    def convert(ctx: TfliteContext, node: OpReader) -> Value:
        x, _ = signed_activation(ctx, node.inputs[0], node.input_infos[0])
        return indexing.arg_of(ctx, node, x, find_min)
    return convert


converter("ARG_MAX", options="ArgMaxOptions", form="quantized")(_q_arg(find_min=False))
converter("ARG_MIN", options="ArgMinOptions", form="quantized")(_q_arg(find_min=True))
