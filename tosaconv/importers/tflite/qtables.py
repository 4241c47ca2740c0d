"""TABLE lookups computed at import time, exactly as TFLite's kernels fill and read their LUTs.

**Why a table is exact.** An int8/uint8 elementwise kernel maps each of the
256 input values to one output value, whatever arithmetic it uses inside (a
float LUT built in ``Prepare``, or gemmlowp fixed point per element). So the
converter evaluates that arithmetic once for the 256 values (``kernel_values``
callbacks receive the int32 *TFLite* values, 0..255 for uint8) and emits one
TOSA TABLE. tosaconv stores uint8 as int8 bits (see :mod:`.quant`), and TOSA's
int8 TABLE reads entry ``stored + 128``; :func:`emit_int8_table` orders the
entries accordingly and stores uint8 results by their bits, so no RESCALE is
needed around the lookup.

**Float LUTs** (``LUTPopulateInt8`` in tflite/kernels/internal/common.h):
``dequantized = input_scale * (val - zp)`` in float32, the transform in
float32, ``TfLiteRound(transformed * (1 / output_scale))``, ``+ zp`` in float,
a C cast to int32 and a clamp. LiteRT's transforms call glibc's ``expf``,
``tanhf``, ``expm1f``, ``erfcf`` and ``logf`` (its shared library imports
exactly these), so :func:`libm` calls the same functions of the C library
through ctypes instead of numpy's vectorised versions, which may differ in the
last bit. Out-of-range floats (exp overflowing to 1e30 or inf) come out of
LiteRT's cast-and-clamp as the type's maximum (checked empirically: the
compiled clamp saturates), so :func:`float_to_int32` saturates.

The TABLE ops themselves (:func:`~tosaconv.lowering.tables.int8_table`, and
:func:`~tosaconv.lowering.tables.int32_table` for int32 values, which the
integer SOFTMAX uses for exp of the scaled difference) are format-neutral
and live in :mod:`tosaconv.lowering.tables`.
"""
from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from ...lowering.errors import ConvertError
from ...lowering.tables import int8_table
from .quant import RANGES, unsigned

if TYPE_CHECKING:
    import ctypes
    from numpy.typing import ArrayLike
    from ...ir.graph import Value
    from .context import TfliteContext
    from .reader import TensorInfo

I32_MIN = -(1 << 31)


@functools.lru_cache(maxsize=None)
def _libm() -> Optional[ctypes.CDLL]:
    """The C math library, loaded on the first table that needs it. The process (CPython links
    libm) usually has it already; ``find_library`` spawns ``ldconfig``, so it is the last resort.
    ctypes itself is imported here too: a conversion without such a table never loads it (issue 13)."""
    import ctypes
    import ctypes.util
    for candidate in (None, "libm.so.6"):
        try:
            lib = ctypes.CDLL(candidate)
        except OSError:
            continue
        if hasattr(lib, "erfcf"):
            return lib
    name = ctypes.util.find_library("m")
    return ctypes.CDLL(name) if name else None


def libm(name: str, values: ArrayLike) -> np.ndarray:
    """The C library's float function ``name`` (``expf``, ``tanhf``...) of each float32 value."""
    lib = _libm()
    values = np.asarray(values, dtype=np.float32)
    if lib is None:   # no C math library to load: Python's (double) function, rounded to float32
        return np.vectorize(getattr(math, name[:-1]), otypes=[np.float32])(values)
    import ctypes
    fn = getattr(lib, name)
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return np.array([fn(float(v)) for v in values.reshape(-1)], dtype=np.float32).reshape(values.shape)


def round_half_away(x: ArrayLike) -> np.ndarray:
    """C's ``round``/``TfLiteRound`` of float32 values (halves away from zero), as float32."""
    x64 = np.asarray(x, dtype=np.float32).astype(np.float64)
    return (np.sign(x64) * np.floor(np.abs(x64) + 0.5)).astype(np.float32)


def float_to_int32(x: ArrayLike) -> np.ndarray:
    """``static_cast<int32_t>(float)`` followed by LiteRT's clamp: truncation, saturating out of range."""
    x64 = np.asarray(x, dtype=np.float32).astype(np.float64)
    if np.isnan(x64).any():   # C's cast of NaN is undefined: no integer table entry would be right
        raise ConvertError(f"{int(np.isnan(x64).sum())} of the {x64.size} table entries compute to NaN "
                           "(from the tensors' scales and zero points); an integer table cannot hold them: "
                           "check the quantization parameters of this op's input and output")
    return np.trunc(np.clip(x64, float(I32_MIN), -float(I32_MIN) - 1)).astype(np.int64)


def tflite_values(info: TensorInfo) -> np.ndarray:
    """The 256 TFLite values of an 8-bit tensor in TOSA TABLE order (storage -128..127)."""
    stored = np.arange(-128, 128, dtype=np.int64)
    return stored & 0xFF if unsigned(info) else stored


def lut_populate_int8(transform: Callable[[np.ndarray], ArrayLike], in_scale: float, in_zp: int, out_scale: float, out_zp: int, values: np.ndarray,
                      out_range: tuple) -> np.ndarray:
    """TFLite's ``LUTPopulateInt8`` for the TFLite input ``values``; returns the int output values."""
    dequantized = np.float32(in_scale) * (values - in_zp).astype(np.float32)
    transformed = np.asarray(transform(dequantized), dtype=np.float32)
    inverse_scale = np.float32(1) / np.float32(out_scale)
    rescaled = round_half_away(transformed * inverse_scale)
    quantized = float_to_int32(rescaled + np.float32(out_zp))
    return np.clip(quantized, *out_range)


def emit_int8_table(ctx: TfliteContext, x: Value, out_info: TensorInfo, entries: np.ndarray) -> Value:
    """One TOSA TABLE on int8 storage ``x``; ``entries`` are output values in TABLE order."""
    return int8_table(ctx, x, entries, RANGES[out_info.type_name])
