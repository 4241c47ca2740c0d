"""Quantized TFLite tensors: their parameters, and RESCALEs that round exactly as TFLite's kernels do.

**Storage.** int8 and int16 TFLite tensors are INT8/INT16 IR tensors. A uint8
tensor is an INT8 IR tensor holding the *same bits* (200 is stored as -56),
the convention TOSA 1.0 uses (only RESCALE reads or writes int8 storage as
unsigned) and the ONNX importer shares. So a uint8 model input takes uint8
arrays unchanged (``tosaconv run`` keeps their bits) and a uint8 output holds
the LiteRT value's bits; a converter that reads uint8 data turns it into
signed form with a RESCALE (``input_unsigned``) first.

**Multipliers.** TFLite turns a real multiplier into a 32-bit fixed-point
multiplier and a power-of-two exponent with ``QuantizeMultiplier``
(tensorflow/lite/kernels/internal/quantization_util.cc): ``frexp``, then the
mantissa times ``2**31`` rounded half away from zero (``TfLiteRound``), a
mantissa that rounds up to ``2**31`` halved with the exponent raised, and an
exponent below -31 turned into multiplier 0 (everything would shift out).
:func:`quantize_multiplier` computes the same pair bit for bit.
:mod:`tosaconv.lowering.quant_scale` differs on purpose (ties to even, no
exponent floor): it serves importers with no reference rounding to match.

**Rounding.** TFLite's reference kernels scale an int32 with
``MultiplyByQuantizedMultiplier`` (quantization_util / common.h, built
without ``TFLITE_SINGLE_ROUNDING`` as LiteRT is): a left shift for positive
exponents, gemmlowp's ``SaturatingRoundingDoublingHighMul`` (``(a*b + 2**30)
>> 31``, i.e. round half up) and ``RoundingDivideByPOT`` by ``-exponent``
(round half away from zero). TOSA's ``apply_scale_32`` with
``DOUBLE_ROUND`` and ``shift = 31 - exponent`` computes exactly that:
for ``shift > 31`` it adds ``2**(shift-1) +- 2**30`` before one arithmetic
shift, which folds the two roundings into one (the sign test on the input
matches gemmlowp's test on the high product, because a product between
``-2**30`` and 0 gives 0 either way); for ``shift <= 31`` only the high
multiply rounds. :func:`rescale` therefore defaults to DOUBLE_ROUND with that
shift, and every converter that needs another rounding says so and names the
TFLite kernel it follows.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from ...ir import attrs as A
from ...ir.dtypes import DType
from ...ir.ops import Op
from .reader import ConvertError, QuantParams, TensorInfo

if TYPE_CHECKING:
    from ...ir.graph import Value
    from .context import TfliteContext

# TFLite storage types that carry a scale and zero point, and their IR element types.
QUANT_TYPES = {"INT8": DType.INT8, "UINT8": DType.INT8, "INT16": DType.INT16}
RANGES = {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767)}


def is_quantized(info: Optional[TensorInfo]) -> bool:
    """A tensor holding quantized values (int8, uint8 or int16 with a scale)."""
    return info is not None and info.quant is not None and info.type_name in QUANT_TYPES


def params(info: TensorInfo, what: str = "tensor") -> QuantParams:
    """The scale and zero point of quantized ``info``, or a ConvertError naming ``what``."""
    if not is_quantized(info):
        raise ConvertError(f"{what} '{info.name}' ({info.type_name}) has no quantization parameters; "
                           "a quantized op needs a scale and zero point on every int8/uint8/int16 operand")
    return info.quant


def zero_point(info: TensorInfo) -> int:
    """The one zero point of a per-tensor quantized tensor (TFLite requires one for activations)."""
    zps = np.asarray(params(info).zero_point).reshape(-1)
    if zps.size == 0 or (zps != zps[0]).any():   # (not np.unique: numpy 2.4 imports numpy.ma for it, ~8 ms)
        raise ConvertError(f"tensor '{info.name}' has per-channel zero points {sorted(set(zps.tolist()))}; "
                           "TFLite kernels take one zero point for activations")
    return int(zps[0])


def scale(info: TensorInfo) -> float:
    """The one scale of a per-tensor quantized tensor."""
    s = params(info).scale
    if s.size != 1:
        raise ConvertError(f"tensor '{info.name}' is quantized per channel ({s.size} scales) where TFLite "
                           "allows only one scale")
    return float(s.reshape(-1)[0])


def unsigned(info: TensorInfo) -> bool:
    return info.type_name == "UINT8"


def value_range(info: TensorInfo) -> tuple:
    """The (lo, hi) integer range of the tensor's storage type (0..255 for uint8)."""
    return RANGES[info.type_name]


def quantize_multiplier(real: float) -> tuple:
    """TFLite's ``QuantizeMultiplier``: ``(multiplier, exponent)`` with ``real ~ multiplier * 2**(exponent-31)``."""
    real = float(real)
    if real == 0.0:
        return 0, 0
    if not (math.isfinite(real) and real > 0.0):
        raise ConvertError(f"a requantization multiplier must be positive and finite, got {real!r}")
    q, exponent = math.frexp(real)
    fixed = math.floor(q * (1 << 31) + 0.5)        # q * 2**31 is exact; TfLiteRound rounds half away from 0
    if fixed == 1 << 31:
        fixed, exponent = fixed // 2, exponent + 1
    if exponent < -31:
        return 0, 0
    return int(fixed), int(exponent)


def tosa_multiplier(real: float) -> tuple:
    """``(multiplier, shift)`` for a DOUBLE_ROUND RESCALE that equals ``MultiplyByQuantizedMultiplier``."""
    multiplier, exponent = quantize_multiplier(real)
    shift = 31 - exponent
    if shift < 2:
        raise ConvertError(f"requantization multiplier {real!r} is too large for TOSA's RESCALE "
                           "(it must be below 2**29)")
    return multiplier, shift


def tosa_multipliers(reals: Union[float, Sequence[float], np.ndarray]) -> list:
    """``[tosa_multiplier(r) for r in reals]`` (as float64), computed at once with numpy's ``frexp`` (the same
    exact steps) for the usual many positive finite reals of a per-channel weight; one by one otherwise, so
    a bad multiplier raises as there."""
    reals = np.asarray(reals, dtype=np.float64).reshape(-1)
    # (below ~40 reals the Python steps cost less than numpy's calls; a NaN fails both tests)
    if reals.size < 40 or not (reals.min() > 0.0 and math.isfinite(reals.max())):
        return [tosa_multiplier(r) for r in reals]
    q, exponent = np.frexp(reals)
    fixed = np.floor(q * (1 << 31) + 0.5).astype(np.int64)   # exact, as in quantize_multiplier
    carry = fixed == 1 << 31
    fixed, exponent = np.where(carry, fixed // 2, fixed), exponent + carry
    if exponent.min() < -31 or exponent.max() > 29:          # (a 0 multiplier, or a shift below 2)
        return [tosa_multiplier(r) for r in reals]
    return list(zip(fixed.tolist(), (31 - exponent).tolist()))


def rescale(ctx: TfliteContext, x: Value, reals: Union[float, Sequence[float], np.ndarray], out_dtype: DType, *, input_zp: int = 0, output_zp: int = 0,
            input_unsigned: bool = False, output_unsigned: bool = False, rounding: str = "DOUBLE_ROUND") -> Value:
    """One RESCALE of ``x`` by ``reals`` (a real multiplier, or one per channel on the last axis).

    It computes ``clamp(MultiplyByQuantizedMultiplier(x - input_zp) + output_zp)`` to the output
    type's range, as TFLite's kernels do after their accumulation."""
    pairs = tosa_multipliers(reals)
    attrs = A.RescaleAttrs(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs), int(input_zp), int(output_zp),
                           scale32=True, rounding_mode=rounding, per_channel=len(pairs) > 1,
                           input_unsigned=input_unsigned, output_unsigned=output_unsigned, output_dtype=out_dtype)
    return ctx.b.emit(Op.RESCALE, x, attrs=attrs)
