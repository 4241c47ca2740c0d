"""The int16 forms of quantized EXP, LOG, RSQRT, GELU, LEAKY_RELU and PRELU, bit-exact with LiteRT 2.3.

**LUT kernels** (exp.cc ``Prepare``, elementwise.cc ``GenericPrepare`` /
``LogLUTPrepare``, activations.cc ``GeluPrepare``): ``Prepare`` fills a
513-entry int16 LUT with ``LUTPopulate<int16_t>``, i.e. common.h
``LUTPopulateInt16<float>`` (float32 arithmetic: 512 samples over the input
range, each biased by half its midpoint interpolation error, plus a last
entry; the output range only sets the scale, so an output zero point is *not*
added), and ``reference_integer_ops::LookupTable`` reads it with ``LUTLookup``:
``lut[256 + (x >> 7)] + ((slope * (x & 127) + 64) >> 7)``. TOSA's int16 TABLE
reads the same entry and slope and returns ``(base << 7) + slope * frac``, so
TFLite's lookup is one TABLE and a rounding ARITHMETIC_RIGHT_SHIFT by 7 (as in
:mod:`.q_softmax16`). LiteRT's ``LUTLookup`` keeps the slope in an int16, so a
jump of more than 32767 between two entries (an EXP whose float overflows to
inf, for instance) wraps around there; TOSA's int32 slope does not, and
tosaconv refuses such tables.

**LEAKY_RELU** (``reference_ops::QuantizeLeakyRelu<int16_t>``, multipliers from
``LeakyReluPrepare`` in float32) and **PRELU** (``reference_ops::Prelu`` /
``BroadcastPrelu4DSlow``, multipliers as in ``PreluPrepare``) scale each
branch with ``MultiplyByQuantizedMultiplier``: a DOUBLE_ROUND RESCALE (see
:mod:`..quant`). LiteRT 2.3 rounds a negative LEAKY_RELU alpha branch as the
negation of the positive multiplier's result (``-MBQM(x, |m|)``: at ties such
as ``x = -1``, ``alpha = -0.5`` it gives 0 where ``MBQM(x, -m)`` would give 1),
so tosaconv negates after the RESCALE.
LiteRT 2.3's int16 PRELU reads its alpha tensor as int8 (the 16x8 form: int16
activations, int8 alpha); an int16 alpha would be read byte by byte, so
tosaconv converts int8 alphas only.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.int32_ops import Int32Ops, identity_rescale, input_as_int32, int32_to_output
from ..qmath import f32_ratio, fit_rescale_input
from ..qtables import libm, round_half_away
from ..quant import rescale, scale, zero_point
from ..reader import ConvertError

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo

F = np.float32
LUT16_OPS = ("EXP", "LOG", "GELU", "RSQRT")
_ZERO_POINTS_FREE = ("GELU",)      # GeluPrepare has no zero-point check; the others ENSURE zp == 0


def no_int16_kernel(node: OpReader) -> ConvertError:
    """The error for an op that LiteRT 2.3 has no int16 kernel for (ELU, HARD_SWISH, ...)."""
    return ConvertError(f"quantized int16 {node.op_type} is not supported: TFLite has no int16 kernel for "
                        f"{node.op_type} (LiteRT refuses int16 tensors there); quantize it to int8 instead")


def lut_populate_int16(transform: Callable[[np.ndarray], np.ndarray], x_info: TensorInfo, y_info: TensorInfo) -> np.ndarray:
    """common.h ``LUTPopulateInt16<float>``: the 513 entries, every step in float32 with C's ``roundf``."""
    s_in, s_out = F(scale(x_info)), F(scale(y_info))
    input_min, input_max = s_in * F(-32768 - zero_point(x_info)), s_in * F(32767 - zero_point(x_info))
    output_range = s_out * F(32767 - zero_point(y_info)) - s_out * F(-32768 - zero_point(y_info))
    step = (input_max - input_min) / F(512)
    inverse = F(65536) / output_range
    at = input_min + np.arange(513).astype(F) * step       # input_min + i * step, i = 0..512
    with np.errstate(all="ignore"):
        val, mid = transform(at[:512]), transform(at[:512] + step / F(2))
        nxt = transform(at[1:])
        sample = round_half_away(val * inverse)
        interpolated = round_half_away((nxt * inverse + sample) / F(2))
        bias = round_half_away((interpolated - round_half_away(mid * inverse)) / F(2))
        last = round_half_away(transform(np.array([input_max], dtype=F)) * inverse)
        entries = np.append(sample - bias, last)
    if np.isnan(entries).any():
        raise ConvertError("the int16 LUT has undefined entries (the function overflows float32 on both sides "
                           "of a segment); use a smaller input scale")
    return np.clip(entries, -32768, 32767).astype(np.int16)


def _check_zero_points(node: OpReader) -> None:
    if node.op_type in _ZERO_POINTS_FREE:
        return
    for info in (node.input_infos[0], node.output_infos[0]):
        if zero_point(info) != 0:
            raise ConvertError(f"int16 {node.op_type} needs zero point 0 on '{info.name}' (TFLite's Prepare "
                               f"requires it), got {zero_point(info)}")


def _int16_io(node: OpReader) -> tuple[TensorInfo, TensorInfo]:
    x, y = node.input_infos[0], node.output_infos[0]
    if y.type_name != "INT16":
        raise ConvertError(f"quantized {node.op_type} with int16 input needs an int16 output, not {y.type_name}")
    _check_zero_points(node)
    return x, y


def _check_slopes(node: OpReader, lut: np.ndarray) -> None:
    """LUTLookup's int16 slope wraps where neighbours differ by more than 32767; TOSA's does not."""
    jumps = np.abs(np.diff(lut.astype(np.int64)))
    if jumps.max() > 32767:
        segment = int(np.argmax(jumps > 32767))
        raise ConvertError(f"int16 {node.op_type}: TFLite's LUT jumps by {int(jumps[segment])} in segment "
                           f"{segment} (inputs {(segment - 256) * 128}..{(segment - 256) * 128 + 127}), where "
                           "its int16 slope wraps around; tosaconv does not reproduce that. Choose scales "
                           "whose outputs do not overflow (e.g. a smaller EXP input scale)")


def emit_lut16(ctx: TfliteContext, x: Value, lut: np.ndarray) -> Value:
    """TFLite's ``LUTLookup``: TOSA TABLE, then the ``+ 64 >> 7`` rounding, back to int16."""
    ops = Int32Ops(ctx, x.type.rank)
    looked_up = ctx.b.emit(Op.TABLE, x, attrs=A.TableAttrs(lut))
    return identity_rescale(ctx, ops.rdbpot(looked_up, 7), DType.INT16)


def convert_lut16(ctx: TfliteContext, node: OpReader, transform: Callable[[np.ndarray], np.ndarray]) -> Value:
    """EXP, LOG, GELU (and RSQRT) on int16: the LUT ``Prepare`` fills with ``transform`` (float32)."""
    x_info, y_info = _int16_io(node)
    lut = lut_populate_int16(transform, x_info, y_info)
    _check_slopes(node, lut)
    return emit_lut16(ctx, ctx.tensor(node.inputs[0]), lut)


def convert_rsqrt16(ctx: TfliteContext, node: OpReader) -> Value:
    """elementwise.cc's int16 RSQRT LUT: ``1 / sqrtf(v)``, and ``32767 * output_scale`` for ``v <= 0``."""
    top = F(F(32767) * F(scale(node.output_infos[0])))
    return convert_lut16(ctx, node, lambda v: np.where(v <= 0, top, F(1) / libm("sqrtf", np.maximum(v, F(1e-30)))))


def _branch(ctx: TfliteContext, values: Value, real: float, max_abs: int, out_dtype: DType = DType.INT16) -> Value:
    """``MultiplyByQuantizedMultiplier(values, real)`` saturated into ``out_dtype`` (DOUBLE_ROUND RESCALE)."""
    return rescale(ctx, fit_rescale_input(ctx, values, real, max_abs), real, out_dtype)


def convert_leaky_relu16(ctx: TfliteContext, node: OpReader, alpha: float) -> Value:
    """``QuantizeLeakyRelu<int16_t>``: identity or alpha multiplier by the sign of the input."""
    x_info, y_info = _int16_io(node)
    identity = f32_ratio(scale(x_info), scale(y_info))
    alpha_real = float(F(scale(x_info)) * F(alpha) / F(scale(y_info)))
    x = ctx.tensor(node.inputs[0])
    ops = Int32Ops(ctx, x.type.rank)
    values = identity_rescale(ctx, x, DType.INT32)
    if alpha_real < 0:   # LiteRT 2.3 rounds -alpha * x as -(|alpha| * x) (checked at ties: x = -1, alpha = -0.5)
        # alpha_real is a float32 value, so QuantizeMultiplier's mantissa never rounds up to 2**31 here.
        scaled = _branch(ctx, values, -alpha_real, 32768, DType.INT32)
        negative = identity_rescale(ctx, ctx.b.emit(Op.NEGATE, scaled, attrs=A.NegateAttrs(0, 0)), DType.INT16)
    else:
        negative = _branch(ctx, values, alpha_real, 32768)
    positive = _branch(ctx, values, identity, 32768)
    return ctx.b.emit(Op.SELECT, ctx.b.emit(Op.GREATER_EQUAL, values, ops.const(0)), positive, negative)


def _prelu_alpha(ctx: TfliteContext, node: OpReader, rank: int) -> Value:
    info = node.input_infos[1]
    alpha = ctx.const(node.inputs[1])
    if alpha is None:
        raise ConvertError("quantized int16 PRELU with a non-constant alpha is not supported: tosaconv needs the "
                           "alpha values at import time; make alpha a constant tensor")
    if info.type_name != "INT8":
        raise ConvertError(f"quantized int16 PRELU with {info.type_name.lower()} alpha is not supported: LiteRT's "
                           "int16 PRELU kernel reads alpha as int8 (16x8 quantization), so an int16 alpha gives "
                           "results from its bytes; quantize alpha to int8")
    values = np.asarray(alpha).astype(np.int64) - zero_point(info)
    if values.ndim > rank:
        raise ConvertError(f"PRELU alpha of rank {values.ndim} does not broadcast to an input of rank {rank}")
    return ctx.b.const(values.reshape((1,) * (rank - values.ndim) + values.shape).astype(np.int32))


def convert_prelu16(ctx: TfliteContext, node: OpReader) -> Value:
    """``reference_ops::Prelu`` on int16 input with an int8 alpha (zero points allowed, as LiteRT allows)."""
    x_info, y_info = node.input_infos[0], node.output_infos[0]
    if y_info.type_name != "INT16":
        raise ConvertError(f"quantized PRELU with int16 input needs an int16 output, not {y_info.type_name}")
    x = ctx.tensor(node.inputs[0])
    ops = Int32Ops(ctx, x.type.rank)
    alpha = _prelu_alpha(ctx, node, x.type.rank)
    xi = input_as_int32(ctx, x, x_info.type_name, zero_point(x_info))
    real_1 = f32_ratio(scale(x_info), scale(y_info))
    real_2 = float(F(scale(x_info)) * F(scale(node.input_infos[1])) / F(scale(y_info)))
    positive = _branch(ctx, xi, real_1, 1 << 16, DType.INT32)
    product = ctx.b.emit(Op.MUL, xi, alpha, attrs=A.MulAttrs(0))
    negative = _branch(ctx, product, real_2, 1 << 24, DType.INT32)
    chosen = ctx.b.emit(Op.SELECT, ctx.b.emit(Op.GREATER_EQUAL, xi, ops.const(0)), positive, negative)
    return int32_to_output(ctx, chosen, "INT16", zero_point(y_info))
