"""Shared pieces of the quantized convolutions and products (q_conv, q_matmul):
operand forms, weights, biases, multipliers, and the accumulator's way out.

**Forms.** TFLite's integer kernels come in three forms, told apart by the
input and weight types: ``int8`` (int8 activations, int8 weights per tensor or
per output channel, int32 bias), ``uint8`` (the legacy form: uint8
activations and weights, one scale each, int32 bias) and ``int16x8`` (int16
activations with zero point 0, int8 weights, int64 or int32 bias). Float
activations with int8 weights ("hybrid", dynamic-range quantization) are
refused: LiteRT quantizes those activations at run time with float
arithmetic per batch row, which TOSA's integer ops cannot reproduce.

**Storage.** Every operand reaches TOSA in signed form: a uint8 activation
goes through a RESCALE (``input_unsigned``, minus 128, exact) and uint8
weights are shifted by -128 in numpy; the zero points move with them, so
``(q - zp)`` is unchanged. TFLite's int8 and int16 kernels ignore the weight
zero point (``reference_integer_ops``), so tosaconv uses 0 there as well.

**Way out.** The int32 accumulator (bias included) is scaled by one RESCALE
per op (DOUBLE_ROUND = ``MultiplyByQuantizedMultiplier``), saturating to the
8/16-bit type, then clamped to ``CalculateActivationRangeQuantized``'s bounds
when a fused activation narrows them. TOSA requires the RESCALE input within
``+-2**(shift-1)``; for multipliers >= 0.5 the accumulator is first clamped
per channel to that range with MAXIMUM/MINIMUM, which is exact because any
value beyond it saturates the output anyway (TFLite itself overflows int32
there for multipliers > 2**(31 - bits), so no model can depend on it).
The int48 accumulator of the int16x8 form follows TFLite's int64
``MultiplyByQuantizedMultiplier``: the multiplier reduced to 16 bits
(``(m + 2**15) >> 16``, at most 0x7FFF) and one round-half-up shift by
``15 - exponent``, which is RESCALE's ``apply_scale_16`` (scale32 false).
FULLY_CONNECTED does not come this way: LiteRT's reference kernels round a
double product there (see q_matmul).
An int16x8 bias must be int64: LiteRT reads an int32 one as int64 (garbage).
"""
from __future__ import annotations

from ....records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Optional

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from .. import quant
from ..qmath import activation_bounds, fit_rescale_input, signed_input, to_unsigned
from ..reader import ConvertError
from .common import ACT

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo


@dataclass
class QOperands:
    """A quantized product's operands in signed TOSA form."""
    form: str              # "int8", "uint8" or "int16x8"
    x: object              # the activation (IR value, int8 or int16)
    x_zp: int
    w: np.ndarray          # weights, int8 (signed form)
    w_zp: int
    reals: np.ndarray      # the real output multiplier, one or one per output channel
    acc: DType             # INT32 or INT48


FORMS = {("INT8", "INT8"): "int8", ("UINT8", "UINT8"): "uint8", ("INT16", "INT8"): "int16x8"}


def form_of(node: OpReader, x_info: TensorInfo, w_info: TensorInfo, forms: dict = FORMS) -> str:
    """The kernel form for activation ``x_info`` and weights ``w_info`` (a key of ``forms``), or a ConvertError."""
    pair = (x_info.type_name, w_info.type_name)
    if x_info.type_name in ("FLOAT32", "FLOAT16") and quant.is_quantized(w_info):
        raise ConvertError(
            f"hybrid {node.op_type} (float activations, {w_info.type_name} weights) is not supported: LiteRT "
            "quantizes the activations at run time with per-row float scales, which TOSA integer ops cannot "
            "reproduce; convert the model with full-integer quantization, or keep float weights")
    if pair not in forms:
        known = ", ".join("/".join(p).lower() for p in forms)
        raise ConvertError(f"quantized {node.op_type} with {pair[0]} input and {pair[1]} weights is not a form "
                           f"TFLite's kernels run ({known})")
    out = node.output_infos[0].type_name
    if out != x_info.type_name:
        raise ConvertError(f"quantized {node.op_type} with {x_info.type_name} input and {out} output is not "
                           "supported (TFLite requires the same type)")
    form = forms[pair]
    if form == "int16x8":
        for info in (x_info, node.output_infos[0]):
            if quant.zero_point(info) != 0:
                raise ConvertError(f"int16 tensor '{info.name}' has zero point {quant.zero_point(info)}; "
                                   "TFLite's int16x8 kernels require 0")
    return form


def activation(ctx: TfliteContext, key: str, info: TensorInfo) -> tuple:
    """An activation as a signed IR value and its zero point (uint8 becomes int8 minus 128, exactly)."""
    return signed_input(ctx, ctx.tensor(key), info)


def weights(ctx: TfliteContext, node: OpReader, i: int, form: str, channels: int, axis: int, keep_zp: bool = False) -> tuple:
    """Constant weights of input ``i`` in signed form, their zero point and one scale per channel.

    The int8 zero point is kept only when the kernel uses it (``keep_zp``: per-tensor FULLY_CONNECTED)."""
    info = node.input_infos[i]
    w = ctx.const(node.inputs[i])
    if w is None:
        raise ConvertError(f"quantized {node.op_type} needs constant weights; '{info.name}' is computed at "
                           "run time")
    p = quant.params(info, "weights")
    scales = np.asarray(p.scale, np.float32).reshape(-1)
    if scales.size not in (1, channels):
        raise ConvertError(f"weights '{info.name}' have {scales.size} scales for {channels} output channels")
    if scales.size > 1 and (form == "uint8" or p.axis != axis):
        raise ConvertError(f"weights '{info.name}' are quantized per channel along axis {p.axis}; TFLite's "
                           f"{node.op_type} kernel takes int8 per-channel weights along axis {axis} only")
    w = np.asarray(w)
    if form == "uint8":
        return (w.astype(np.int16) - 128).astype(np.int8), quant.zero_point(info) - 128, scales
    return w.astype(np.int8), quant.zero_point(info) if keep_zp and scales.size == 1 else 0, scales


def conv_reals(x_info: TensorInfo, w_scales: np.ndarray, out_info: TensorInfo) -> np.ndarray:
    """PopulateConvolutionQuantizationParams (kernel_util.cc): ``double(in) * double(w[c]) / double(out)``."""
    s_in, s_out = np.float64(quant.scale(x_info)), np.float64(quant.scale(out_info))
    return np.array([s_in * np.float64(s) / s_out for s in w_scales])


def legacy_real(x_info: TensorInfo, w_scale: float, out_info: TensorInfo) -> np.ndarray:
    """GetQuantizedConvolutionMultipler (kernel_util.cc): the scales' product in float, divided in double."""
    product = np.float32(quant.scale(x_info)) * np.float32(w_scale)
    return np.array([np.float64(product) / np.float64(quant.scale(out_info))])


def bias(ctx: TfliteContext, node: OpReader, i: int, channels: int, acc: DType) -> Value:
    """The bias constant (zeros when absent): int32 for INT32 accumulators, int48 for INT48."""
    key = node.input(i)
    b = np.zeros((channels,), np.int64) if key is None else ctx.const(key)
    if b is None:
        raise ConvertError(f"quantized {node.op_type} needs a constant bias")
    if not np.issubdtype(np.asarray(b).dtype, np.integer):   # a float bias (NaN included) is never cast
        raise ConvertError(f"quantized {node.op_type} bias is {np.asarray(b).dtype}; it must be int32 or int64")
    b = np.asarray(b).astype(np.int64).reshape(-1)
    if b.size != channels:
        raise ConvertError(f"{node.op_type} bias has {b.size} values for {channels} output channels")
    if acc == DType.INT32:
        return ctx.b.const(b.astype(np.int32))
    if key is not None and node.input_infos[i].type_name != "INT64":
        raise ConvertError(f"int16x8 {node.op_type} with an {node.input_infos[i].type_name.lower()} bias is not "
                           "supported: LiteRT's kernel reads the bias as int64, so its results are not meaningful; "
                           "re-export the model with an int64 bias")
    return ctx.b.emit(Op.CONST, attrs=A.ConstAttrs(b, int48=True))


def act_range(node: OpReader, info: TensorInfo, field: Optional[str] = "FusedActivationFunction") -> tuple:
    """CalculateActivationRangeQuantized (kernel_util.cc): bounds in the output's integer domain."""
    return activation_bounds(info, node.opt(field) if field else ACT.NONE)


def finish(ctx: TfliteContext, node: OpReader, acc: Value, q: QOperands, bounds: tuple) -> Value:
    """Scale the accumulator into the output tensor, clamp to ``bounds`` (output integer domain):
    MultiplyByQuantizedMultiplier on int32 accumulators (DOUBLE_ROUND), its int64 form on int48 ones."""
    info = node.output_infos[0]
    shift = 128 if quant.unsigned(info) else 0
    out_dtype = quant.QUANT_TYPES[info.type_name]
    if acc.type.dtype == DType.INT48:
        y = _rescale48(ctx, acc, q.reals, out_dtype)
    else:
        acc = fit_rescale_input(ctx, acc, q.reals)
        y = quant.rescale(ctx, acc, q.reals, out_dtype, output_zp=quant.zero_point(info) - shift)
    lo, hi = quant.value_range(info)
    if bounds != (lo, hi):
        y = ctx.b.emit(Op.CLAMP, y, attrs=A.ClampAttrs(bounds[0] - shift, bounds[1] - shift))
    return to_unsigned(ctx, y) if shift else y


def narrow48(ctx: TfliteContext, acc: Value) -> Value:
    """An int48 accumulator as int32 (exact: a 16-bit unit multiplier; TOSA requires it to fit)."""
    if acc.type.dtype != DType.INT48:
        return acc
    attrs = A.RescaleAttrs((1 << 14,), (14,), 0, 0, scale32=False, rounding_mode="SINGLE_ROUND",
                           output_dtype=DType.INT32)
    return ctx.b.emit(Op.RESCALE, acc, attrs=attrs)


def reduced_multiplier(real: float) -> tuple:
    """TFLite's int64 MultiplyByQuantizedMultiplier as RESCALE parameters: (16-bit multiplier, shift)."""
    m, exponent = quant.quantize_multiplier(real)
    reduced = (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF
    shift = 15 - exponent
    if not 2 <= shift <= 62:
        raise ConvertError(f"int16x8 requantization multiplier {real!r} is too large for TOSA's 16-bit RESCALE "
                           "(it must be below 2**13)")
    return reduced, shift


def _rescale48(ctx: TfliteContext, acc: Value, reals: np.ndarray, out_dtype: DType) -> Value:
    pairs = [reduced_multiplier(r) for r in np.reshape(reals, -1)]
    attrs = A.RescaleAttrs(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs), 0, 0, scale32=False,
                           rounding_mode="SINGLE_ROUND", per_channel=len(pairs) > 1, output_dtype=out_dtype)
    return ctx.b.emit(Op.RESCALE, acc, attrs=attrs)
