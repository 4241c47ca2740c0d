"""Quantized TFLite activations whose kernels fill a float LUT: one TOSA TABLE each.

LOGISTIC, TANH, GELU, EXP, ELU and LOG on int8 (and uint8 where LiteRT has a
uint8 kernel) run ``LookupTable`` over a 256-entry LUT that ``Prepare`` fills
with ``LUTPopulate`` (tflite/kernels/activations.cc ``SigmoidPrepare``,
``TanhPrepare``, ``GeluPrepare``, ``EluPrepare``; exp.cc ``Prepare``;
elementwise.cc ``LogLUTPrepare``). The reference kernels (BUILTIN_REF) use
that LUT too, so tosaconv fills the same table with
:func:`~tosaconv.importers.tflite.qtables.lut_populate_int8` (float32 steps and
the C library's functions, see that module) and emits one TABLE: no rounding
happens in TOSA at all. The transforms below restate each kernel's lambda with
its float32 evaluation order. int16 EXP, LOG and GELU use the same transforms
in a 513-entry interpolated LUT (:mod:`.q_act16`); LiteRT has no int16 ELU.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ..qtables import emit_int8_table, libm, lut_populate_int8, tflite_values
from ..quant import scale, value_range, zero_point
from ..reader import ConvertError
from ..registry import converter
from .q_act16 import LUT16_OPS, convert_lut16, no_int16_kernel
from .q_lut16 import convert_int16

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo

F = np.float32
SQRT_2_OVER_PI = F(2.0 / math.sqrt(math.pi) * math.sqrt(0.5))   # gelu.h kSqrt2dPi (M_2_SQRTPI * M_SQRT1_2)


def eight_bit_io(node: OpReader, types: Sequence[str] = ("INT8", "UINT8")) -> tuple[TensorInfo, TensorInfo]:
    """The input and output infos of a unary 8-bit quantized op, or a ConvertError."""
    x, y = node.input_infos[0], node.output_infos[0]
    if x.type_name == "INT16" and y.type_name == "INT16":
        raise no_int16_kernel(node)      # the int16 forms LiteRT has are routed to q_act16 before this
    if x.type_name != y.type_name:
        raise ConvertError(f"quantized {node.op_type} with {x.type_name} input and {y.type_name} output: "
                           "TFLite requires the same type for both")
    if x.type_name not in types:
        raise ConvertError(f"quantized {node.op_type} on {x.type_name} is not supported: tosaconv converts "
                           f"{' and '.join(t.lower() for t in types)} only for this op (LiteRT has no uint8 "
                           "EXP, ELU, LOG or RSQRT kernel)")
    return x, y


def lut_op(ctx: TfliteContext, node: OpReader, transform: Callable[[np.ndarray], np.ndarray], types: Sequence[str] = ("INT8", "UINT8")) -> Value:
    """The TABLE that LUTPopulate<int8_t/uint8_t> fills with ``transform`` (float32 -> float32); int16 EXP,
    LOG and GELU take LUTPopulate<int16_t>'s 513-entry table instead (:mod:`.q_act16`)."""
    if node.input_infos[0].type_name == "INT16" and node.op_type in LUT16_OPS:
        return convert_lut16(ctx, node, transform)
    x, y = eight_bit_io(node, types)
    entries = lut_populate_int8(transform, scale(x), zero_point(x), scale(y), zero_point(y),
                                tflite_values(x), value_range(y))
    return emit_int8_table(ctx, ctx.tensor(node.inputs[0]), y, entries)


def _logistic(v: np.ndarray) -> np.ndarray:
    return F(1) / (F(1) + libm("expf", -v))


def _gelu(v: np.ndarray) -> np.ndarray:
    return F(0.5) * v * libm("erfcf", v * F(-math.sqrt(0.5)))


def _gelu_approximate(v: np.ndarray) -> np.ndarray:
    cube = F(0.044715) * v * v * v
    return F(0.5) * v * (F(1) + libm("tanhf", SQRT_2_OVER_PI * (v + cube)))


@converter("LOGISTIC", form="quantized")
def convert_q_logistic(ctx: TfliteContext, node: OpReader) -> Converted:
    if node.input_infos[0].type_name == "INT16":
        return convert_int16(ctx, node)
    # SigmoidPrepare: TF_LITE_ENSURE(output->params.scale == 1. / 256) for int8 and uint8.
    if scale(node.output_infos[0]) != 1.0 / 256:
        raise ConvertError(f"quantized LOGISTIC needs output scale 1/256 (TFLite's kernel refuses "
                           f"{scale(node.output_infos[0])!r}); requantize the output")
    return lut_op(ctx, node, _logistic)


@converter("TANH", form="quantized")
def convert_q_tanh(ctx: TfliteContext, node: OpReader) -> Converted:
    if node.input_infos[0].type_name == "INT16":
        return convert_int16(ctx, node)
    return lut_op(ctx, node, lambda v: libm("tanhf", v))


@converter("GELU", options="GeluOptions", form="quantized")
def convert_q_gelu(ctx: TfliteContext, node: OpReader) -> Converted:
    return lut_op(ctx, node, _gelu_approximate if node.opt("Approximate") else _gelu)


@converter("EXP", form="quantized")
def convert_q_exp(ctx: TfliteContext, node: OpReader) -> Converted:
    return lut_op(ctx, node, lambda v: libm("expf", v), types=("INT8",))


@converter("ELU", form="quantized")
def convert_q_elu(ctx: TfliteContext, node: OpReader) -> Converted:
    return lut_op(ctx, node, lambda v: np.where(v < 0, libm("expm1f", v), v).astype(F), types=("INT8",))


@converter("LOG", form="quantized")
def convert_q_log(ctx: TfliteContext, node: OpReader) -> Converted:
    # LogLUTPrepare: log(v) for v > 0; the output's lowest value otherwise.
    y = node.output_infos[0]
    lowest = F(F(value_range(y)[0] - zero_point(y)) * F(scale(y)))
    with np.errstate(divide="ignore", invalid="ignore"):
        return lut_op(ctx, node, lambda v: np.where(v <= 0, lowest, libm("logf", np.maximum(v, F(1e-30)))),
                      types=("INT8",))
