"""Quantized RESIZE_BILINEAR on int8, bit-exact with reference_ops::ResizeBilinearInteger.

TFLite's integer kernel (resize_bilinear.h) works in 10-bit fixed point:
``scale_10 = ((1 << 10) * in + out / 2) / out`` (align_corners: ``in - 1`` over
``out - 1``), the source coordinate ``scaled = o * scale_10`` (half-pixel
centers: ``+ scale_10 / 2 - 512``), the taps ``lo = max(scaled / 1024, 0)`` and
``hi = min((scaled + 1023) / 1024, in - 1)`` (C division) weighted by ``1024 -
(scaled - 1024 * lo)`` and ``scaled - 1024 * lo``, an int64 sum ``output_20``
of ``value * w_y * w_x`` (20 fractional bits) and, built without
TFLITE_SINGLE_ROUNDING, ``(output_20 +- 2**19) / 2**20`` rounding half away
from zero. No quantization parameter enters (input and output share the stored
values).

The taps and weights depend only on the static sizes, so tosaconv computes
them per axis in numpy with exactly these integer formulas, and the sum is
separable: two GATHERs along W weighted by the x weights (int32 MUL, ADD),
then two along H weighted by the y weights. int32 holds every term (|value|
<= 255, |weight| <= 1536, sum < 2**28). The rounding is q_pool's
:func:`round_divide` by ``2**20``. (TOSA RESIZE computes a similar int32 sum;
the GATHER form is kept because its taps are TFLite's formulas by
construction.) Refused: int16 (an int64 sum in TFLite) and uint8, which
resize_bilinear.cc sends to the float template reference_ops::ResizeBilinear
(float32 weights and products, truncated; checked against LiteRT: the integer
kernel's results differ by one on some pixels), not reproducible with integer
ops.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.gather import take
from ....lowering.gemmlowp import c_div
from ....lowering.int32_ops import input_as_int32, int32_to_output
from ..qmath import same_types
from ..reader import ConvertError
from ..registry import converter
from .q_pool import round_divide

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..node import OpReader
    from ..context import TfliteContext

ONE = 1 << 10


def axis_taps(n_in: int, n_out: int, align: bool, half: bool) -> tuple:
    """ResizeBilinearInteger's ``(lo, hi, w_lo, w_hi)`` per output index along one axis."""
    if align and n_out > 1:
        d = (ONE * (n_in - 1) + (n_out - 1) // 2) // (n_out - 1)
    else:
        d = (ONE * n_in + n_out // 2) // n_out
    scaled = np.arange(n_out, dtype=np.int64) * d + ((d // 2 - ONE // 2) if half else 0)
    lo = np.maximum(c_div(scaled, ONE), 0)
    hi = np.minimum(c_div(scaled + ONE - 1, ONE), n_in - 1)
    frac = scaled - ONE * lo
    return lo, hi, ONE - frac, frac


def _weighted_taps(ctx: TfliteContext, v: Value, axis: int, taps: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> Value:
    """``v[lo] * w_lo + v[hi] * w_hi`` along ``axis`` (int32)."""
    lo, hi, w_lo, w_hi = taps
    shape = [1] * v.type.rank
    shape[axis] = lo.size
    total = None
    for idx, w in ((lo, w_lo), (hi, w_hi)):
        rows = take(ctx, v, axis, ctx.b.const(idx.astype(np.int32)))
        term = ctx.b.emit(Op.MUL, rows, ctx.b.const(w.astype(np.int32).reshape(shape)), attrs=A.MulAttrs(0))
        total = term if total is None else ctx.b.emit(Op.ADD, total, term)
    return total


@converter("RESIZE_BILINEAR", options="ResizeBilinearOptions", form="quantized")
def convert_q_resize_bilinear(ctx: TfliteContext, node: OpReader) -> Converted:
    if node.input_infos[0].type_name == "UINT8":
        raise ConvertError("quantized RESIZE_BILINEAR on UINT8 is not supported: LiteRT interpolates uint8 in "
                           "float32 (reference_ops::ResizeBilinear), which integer TOSA ops cannot reproduce "
                           "bit for bit; int8 models convert")
    kind = same_types(node, 1, types=("INT8",))
    x = ctx.tensor(node.inputs[0])
    align, half = bool(node.opt("AlignCorners")), bool(node.opt("HalfPixelCenters"))
    size = [d.type.value for d in ctx.dims(node.inputs[1]).dims]
    if x.type.rank != 4 or len(size) != 2:
        raise ConvertError("RESIZE_BILINEAR needs a rank-4 NHWC input and a (height, width) size")
    hw = list(x.type.shape[1:3])
    if not all(isinstance(v, int) for v in hw + size):
        raise ConvertError(f"quantized RESIZE_BILINEAR from {hw} to {size}: TFLite's fixed-point taps "
                           "depend on the sizes, which must be static; bind the symbols (--bind) first")
    v = input_as_int32(ctx, x, node.input_infos[0].type_name)
    v = _weighted_taps(ctx, v, 2, axis_taps(hw[1], size[1], align, half))
    v = _weighted_taps(ctx, v, 1, axis_taps(hw[0], size[0], align, half))
    return int32_to_output(ctx, round_divide(ctx, v, 1 << 20), kind)
