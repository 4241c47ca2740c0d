"""Integer arithmetic helpers shared by the quantized TFLite converters (built on :mod:`.quant`).

TFLite's 8/16-bit kernels share a few patterns, each written once here:

- **Real multipliers as Prepare computes them.** Several Prepare functions
  divide two *float* scales in float32 before widening to double
  (``double m = input->params.scale / output->params.scale`` in
  activations.cc ``ReluPrepare``); others widen first. :func:`f32_ratio`
  and :func:`f64_ratio` say which, so each converter names the order it follows.
- **Offsets and left shifts.** ADD, SUB and the comparisons compute
  ``(q - zp) << left_shift`` in int32 before scaling: :func:`shifted_int32`
  is one exact RESCALE (multiplier ``2**30``, shift ``30 - left_shift``).
  A DOUBLE_ROUND RESCALE of that int32 by the input multiplier then equals
  ``MultiplyByQuantizedMultiplierSmallerThanOneExp`` (:func:`scale_int32`);
  folding the left shift into the RESCALE's shift would round once where
  TFLite rounds twice, so it is kept separate.
- **Raw values.** MAXIMUM, MINIMUM and SELECT move stored values without
  looking at scales; :func:`tosaconv.lowering.int32_ops.input_as_int32` reads a uint8/int8/int16
  tensor's values as int32 and :func:`tosaconv.lowering.int32_ops.int32_to_output` writes them
  back to the storage type.
- **Activation bounds.** :func:`activation_bounds` is kernel_util.cc's
  ``CalculateActivationRangeQuantized`` (``zp + TfLiteRound(f / scale)`` in
  float32, clipped to the type's range); :func:`requantize_out` scales an int32
  accumulator into the output storage and clamps to such bounds, in the
  signed domain for uint8 outputs (then one identity RESCALE to uint8).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from ...ir import attrs as A
from ...ir.dtypes import DType
from ...ir.ops import Op
from ...lowering.int32_ops import identity_rescale
from .quant import QUANT_TYPES, rescale, scale, tosa_multipliers, unsigned, value_range, zero_point
from .reader import ConvertError
from .schema import tflite

if TYPE_CHECKING:
    from ...ir.graph import Value
    from .context import TfliteContext
    from numpy.typing import ArrayLike
    from .node import OpReader
    from .reader import TensorInfo

F32 = np.float32
ACT = tflite.ActivationFunctionType


def f32_ratio(a: float, b: float) -> float:
    """``a / b`` divided in float32, then widened (C++ ``double m = float_a / float_b``)."""
    return float(F32(a) / F32(b))


def f64_ratio(a: float, b: float) -> float:
    """``a / b`` with both widened to double first."""
    return float(np.float64(F32(a)) / np.float64(F32(b)))


def round_away(x: ArrayLike) -> np.ndarray:
    """TfLiteRound / std::round: half away from zero (in float64, so that ``x + 0.5`` is exact)."""
    x = np.asarray(x, dtype=np.float64)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def signed_input(ctx: TfliteContext, x: Value, info: TensorInfo) -> tuple:
    """``(value, zero point)`` of quantized ``x`` in signed storage: uint8 becomes int8 ``q - 128``.

    TOSA lets only an int8/int16 RESCALE read unsigned data, so uint8 goes through int8 first."""
    if not unsigned(info):
        return x, zero_point(info)
    return identity_rescale(ctx, x, DType.INT8, input_zp=128, input_unsigned=True), zero_point(info) - 128


def to_unsigned(ctx: TfliteContext, y: Value) -> Value:
    """int8 ``y`` holding ``q - 128`` as uint8 ``q`` (its int8 storage bits)."""
    return identity_rescale(ctx, y, DType.INT8, output_zp=128, output_unsigned=True)


def shifted_int32(ctx: TfliteContext, x: Value, info: TensorInfo, left_shift: int = 0) -> Value:
    """``(q - zp) << left_shift`` of quantized ``x`` as int32 (exact)."""
    x, zp = signed_input(ctx, x, info)
    lo, hi = value_range(info)
    if max(hi - zp, zp - lo) < 1 << (29 - left_shift):      # apply_scale_32's value bound for shift 30 - n
        attrs = A.RescaleAttrs((1 << 30,), (30 - left_shift,), zp, 0, scale32=True,
                               rounding_mode="SINGLE_ROUND", output_dtype=DType.INT32)
        return ctx.b.emit(Op.RESCALE, x, attrs=attrs)
    v = identity_rescale(ctx, x, DType.INT32, input_zp=zp)
    if not left_shift:
        return v
    return ctx.b.emit(Op.MUL, v, ctx.b.scalar_like(1 << left_shift, v.type), attrs=A.MulAttrs(0))


def scale_int32(ctx: TfliteContext, acc: Value, real: float) -> Value:
    """int32 ``acc`` times ``real`` rounded as MultiplyByQuantizedMultiplier (DOUBLE_ROUND), int32 out."""
    return rescale(ctx, acc, real, DType.INT32)


def quantize_value(info: TensorInfo, f: float) -> int:
    """kernel_util.cc ``Quantize``: ``zp + TfLiteRound(f / scale)`` with the division in float32."""
    q = round_away(F32(f) / F32(scale(info)))
    if not np.isfinite(q) or abs(q) > 2 ** 31 - 1:
        raise ConvertError(f"activation bound {f} overflows int32 at scale {scale(info)!r} (TFLite refuses it too)")
    return zero_point(info) + int(q)


_ACT_RANGES = {ACT.NONE: (None, None), ACT.RELU: (0.0, None), ACT.RELU6: (0.0, 6.0),
               ACT.RELU_N1_TO_1: (-1.0, 1.0)}


def activation_bounds(info: TensorInfo, act: int) -> tuple:
    """CalculateActivationRangeQuantized: the (lo, hi) integer clamp of a fused activation on ``info``.

    TANH and SIGN_BIT have no bounds there (TFLite's quantized kernels apply nothing for them)."""
    lo, hi = value_range(info)
    fmin, fmax = _ACT_RANGES.get(act, (None, None))
    if fmin is not None:
        lo = max(lo, quantize_value(info, fmin))
    if fmax is not None:
        hi = min(hi, quantize_value(info, fmax))
    return lo, hi


def requantize_out(ctx: TfliteContext, acc: Value, real: Union[float, Sequence[float], np.ndarray], info: TensorInfo, bounds: Optional[tuple[int, int]] = None) -> Value:
    """``clamp(MultiplyByQuantizedMultiplier(acc, real) + zp, lo, hi)`` in output ``info``'s storage.

    ``bounds`` (lo, hi) are in the stored domain (0..255 for uint8); None means the type's range.
    A uint8 result is computed as int8 ``q - 128`` and reinterpreted (TOSA has no int32 -> uint8 RESCALE)."""
    full = value_range(info)
    lo, hi = bounds or full
    if lo > hi:
        raise ConvertError(f"activation range [{lo}, {hi}] of '{info.name}' is empty")
    shift = 128 if unsigned(info) else 0
    y = rescale(ctx, acc, real, QUANT_TYPES[info.type_name], output_zp=zero_point(info) - shift)
    if (lo, hi) != full:
        y = ctx.b.emit(Op.CLAMP, y, attrs=A.ClampAttrs(int(lo - shift), int(hi - shift)))
    return to_unsigned(ctx, y) if shift else y


def same_types(node: OpReader, n_inputs: int = 2, types: Sequence[str] = ("INT8", "UINT8", "INT16")) -> str:
    """The one storage type of a quantized op's first ``n_inputs`` inputs and output, or a ConvertError."""
    infos = list(node.input_infos[:n_inputs]) + [node.output_infos[0]]
    names = {i.type_name for i in infos if i is not None}
    if len(names) != 1:
        raise ConvertError(f"quantized {node.op_type} mixes {sorted(names)}; TFLite requires one type for its "
                           "inputs and output")
    name = names.pop()
    if name not in types:
        raise ConvertError(f"quantized {node.op_type} on {name} is not supported: TFLite's kernel takes "
                           f"{', '.join(t.lower() for t in types)} here")
    return name


def qtensor(ctx: TfliteContext, node: OpReader, i: int) -> Value:
    """Quantized input ``i`` as an IR value; a uint8 constant becomes int8 storage holding the same bits."""
    key = node.inputs[i]
    c = ctx.const(key)
    if c is not None and np.asarray(c).dtype == np.uint8 and key not in ctx.values:
        ctx.set_const(key, np.asarray(c).view(np.int8))
    return ctx.tensor(key)


def fit_rescale_input(ctx: TfliteContext, acc: Value, reals: Union[float, Sequence[float], np.ndarray], max_abs: int = (1 << 31) - 1) -> Value:
    """Clamp int32 ``acc`` (at most ``max_abs`` in magnitude) into apply_scale_32's bound for ``reals``
    (one multiplier, or one per channel along the last axis).

    For a multiplier above 1 TOSA requires ``|acc| < 2**(30 - exponent)``; any such value already
    saturates every 8/16-bit output, so the clamp changes no result where TFLite's own
    ``acc << exponent`` does not overflow int32."""
    shifts = np.array([shift for _, shift in tosa_multipliers(reals)])
    half = np.minimum(np.left_shift(np.int64(1), shifts - 1), 1 << 31)
    if max_abs < half.min():
        return acc
    shape = (1,) * (acc.type.rank - 1) + (half.size,)
    lo = ctx.b.const((-half).astype(np.int32).reshape(shape))
    hi = ctx.b.const((half - 1).astype(np.int32).reshape(shape))
    nan = A.NanModeAttrs()
    return ctx.b.emit(Op.MINIMUM, ctx.b.emit(Op.MAXIMUM, acc, lo, attrs=nan), hi, attrs=nan)
