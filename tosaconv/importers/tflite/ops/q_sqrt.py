"""Quantized TFLite SQRT (int8, int16), bit-exact with LiteRT 2.3's elementwise.cc kernel, as exact lookups.

LiteRT 2.3's SQRT on quantized data (established against BUILTIN_REF, as
the source we could read only has the float kernel) computes per element, in
float32: ``dequantized = s_in * float(q - zp_in)``, ``sqrtf``, ``/ s_out``
(a float division: multiplying by ``1 / s_out`` differs in ~1 of 200 values),
a truncating cast to int32 (huge quotients saturate), ``+ zp_out`` and a clamp
to the type's range. So it truncates where LUT-based kernels round. Prepare
refuses uint8 and int16 zero points other than 0; Eval refuses any
``q < zp_in`` ("Sqrt is only defined for non-negative values").

**TOSA form.** The result is a function of the stored input alone, evaluated
at import with the C library's ``sqrtf`` (:func:`..qtables.libm`):

- int8: one TOSA TABLE of the 256 values.
- int16: TOSA's int16 TABLE interpolates linearly between 513 samples, which
  cannot follow a truncated square root, so the 32768 results for
  ``q = 0..32767`` are a constant that one GATHER reads at ``max(q, 0)``
  (exact; the input is flattened to ``[1, N]`` for it).

Inputs below the zero point, where LiteRT stops with an error, get the
result of the zero point (sqrt(0)), so the program stays defined.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import reshape
from ....lowering.int32_ops import Int32Ops, identity_rescale
from ....symbolic.expr import product
from ..qmath import same_types
from ..qtables import emit_int8_table, float_to_int32, libm, tflite_values
from ..quant import RANGES, scale, zero_point
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo

F = np.float32


def sqrt_values(q: np.ndarray, in_scale: float, in_zp: int, out_scale: float, out_zp: int, type_name: str) -> np.ndarray:
    """LiteRT's quantized SQRT of the stored values ``q`` (``q < in_zp`` taken as ``in_zp``)."""
    offsets = np.maximum(np.asarray(q, dtype=np.int64) - in_zp, 0)
    dequantized = F(in_scale) * offsets.astype(F)
    quotient = libm("sqrtf", dequantized) / F(out_scale)      # float32 division, as the kernel divides
    return np.clip(float_to_int32(quotient) + out_zp, *RANGES[type_name])


def _check_int16(x_info: TensorInfo, y_info: TensorInfo) -> None:
    for info in (x_info, y_info):
        if zero_point(info) != 0:
            raise ConvertError(f"int16 SQRT needs zero point 0 on '{info.name}', got {zero_point(info)} "
                               "(LiteRT's elementwise.cc Prepare refuses it); requantize to a symmetric int16")


def _int16_lookup(ctx: TfliteContext, x: Value, entries: np.ndarray) -> Value:
    """``entries[max(x, 0)]`` for int16 ``x``: one exact GATHER from a [1, 32768, 1] int16 constant."""
    ops = Int32Ops(ctx, x.type.rank)
    index = ops.maximum(identity_rescale(ctx, x, DType.INT32), 0)
    shape = list(x.type.shape)
    flat = reshape(ctx, index, [1, product(shape)])
    table = ctx.b.const(entries.astype(np.int16).reshape(1, -1, 1))
    return reshape(ctx, ctx.b.emit(Op.GATHER, table, flat), shape)


@converter("SQRT", form="quantized")
def convert_q_sqrt(ctx: TfliteContext, node: OpReader) -> Converted:
    dtype = same_types(node, 1, ("INT8", "INT16"))
    x_info, y_info = node.input_infos[0], node.output_infos[0]
    x = ctx.tensor(node.inputs[0])
    params = (scale(x_info), zero_point(x_info), scale(y_info), zero_point(y_info), dtype)
    if dtype == "INT8":
        return emit_int8_table(ctx, x, y_info, sqrt_values(tflite_values(x_info), *params))
    _check_int16(x_info, y_info)
    return _int16_lookup(ctx, x, sqrt_values(np.arange(32768), *params))
