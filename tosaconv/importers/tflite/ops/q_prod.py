"""Quantized REDUCE_PROD (int8, int16), bit-exact with reduce.cc ``EvalQuantizedProd``.

TFLite folds the product one element at a time and requantizes after every
multiply (reference_ops::QuantizedReduceProd): the first element of a reduced
row gives ``acc = q - in_zp``; each next one
``acc = MultiplyByQuantizedMultiplier(int64(acc) * (q - in_zp), m, e)``, and the
row's result is ``clamp(MultiplyByQuantizedMultiplier(int64(acc), m, e) + out_zp)``.
``(m, e)`` is ``QuantizeMultiplier(in_scale / pow(out_scale, 1 / n))``
(``GetQuantProdScaling``, in double) for the reduced element count ``n``.

That is the **int64** overload of MultiplyByQuantizedMultiplier (common.cc, the
same with or without TFLITE_SINGLE_ROUNDING): the multiplier is first cut to
15 bits, ``m16 = (m + 2**15) >> 16`` (``0x7FFF`` from ``0x7FFF0000`` up), then
``(x * m16 + 2**(S-1)) >> S`` with ``S = 15 - e``, one rounding, half up.
TOSA's int32 MUL with ``shift = S`` computes exactly ``(a * b + 2**(S-1)) >> S``
in 64 bits, so with ``b = (q - in_zp) * m16`` (below 2**30, an exact int32 MUL)
every step is one MUL. The elements are folded in TFLite's order, row-major
over the reduced axes, by slicing them out one by one (``n`` MULs).

Refused: uint8 (LiteRT has no quantized uint8 REDUCE_PROD), a symbolic reduced
size (the multiplier depends on ``n``), an empty reduction, exponents outside
the kernel's documented -31..7, and scales for which an intermediate could leave
int32 for some input: TFLite then wraps the value silently (``static_cast``)
while TOSA's MUL requires it in range, so no exact TOSA form exists; the check
is a worst-case bound computed at import, which well-calibrated models pass
(their running product stays near the output range).
"""
from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Iterator, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.dims import slice_
from ....lowering.int32_ops import Int32Ops, input_as_int32, int32_to_output
from ....lowering.typed import clamp
from ..qmath import same_types
from ..quant import quantize_multiplier, scale, value_range, zero_point
from ..reader import ConvertError
from ..registry import converter
from .q_reduce import _axes, _finish

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..node import OpReader
    from ..context import TfliteContext

F32 = np.float32
I32_MAX = (1 << 31) - 1


def prod_multiplier(in_scale: float, out_scale: float, n: int) -> tuple:
    """(m16, S): PrepareProd's QuantizeMultiplier(GetQuantProdScaling(...)) as the int64 MBQM uses it."""
    scaling = float(np.float64(F32(in_scale))) / math.pow(float(np.float64(F32(out_scale))), 1.0 / n)
    m, e = quantize_multiplier(scaling)
    m16 = (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF
    return m16, 15 - e


def _step_bound(bound: int, factor: int, shift: int) -> int:
    """A bound on ``|(c * f + 2**(S-1)) >> S|`` for ``|c| <= bound``, ``|f| <= factor``."""
    return ((bound * factor + (1 << (shift - 1))) >> shift) + 1


def check_no_wrap(node: OpReader, n: int, max_diff: int, m16: int, shift: int, out_zp: int) -> None:
    """Refuse when some input could push an intermediate of TFLite's fold past int32."""
    bound = max_diff
    for step in range(1, n + 1):
        bound = _step_bound(bound, max_diff * m16 if step < n else m16, shift)
        if bound + abs(out_zp) > I32_MAX:
            raise ConvertError(
                f"quantized REDUCE_PROD '{node.name}': with input scale {scale(node.input_infos[0])!r}, output "
                f"scale {scale(node.output_infos[0])!r} and {n} elements per product, step {step} of TFLite's "
                "requantized product can exceed int32, where its kernel wraps silently and TOSA's MUL has no "
                "exact equivalent; use a larger output scale (or fewer reduced elements)")


def _elements(ctx: TfliteContext, value: Value, axes: Sequence[int]) -> Iterator[Value]:
    """The slices of ``value`` holding each element of the reduced axes, in row-major order."""
    shape = list(value.type.shape)
    for index in itertools.product(*(range(shape[a]) for a in axes)):
        starts, sizes = [0] * len(shape), list(shape)
        for a, i in zip(axes, index):
            starts[a], sizes[a] = i, 1
        yield slice_(ctx, value, starts, sizes)


@converter("REDUCE_PROD", options="ReducerOptions", form="quantized")
def convert_q_reduce_prod(ctx: TfliteContext, node: OpReader) -> Converted:
    type_name = same_types(node, 1, types=("INT8", "INT16"))
    info, out = node.input_infos[0], node.output_infos[0]
    in_zp, out_zp = zero_point(info), zero_point(out)
    if type_name == "INT16" and (in_zp or out_zp):
        raise ConvertError(f"quantized int16 REDUCE_PROD '{node.name}' needs zero points 0 (TFLite's PrepareProd "
                           f"refuses {in_zp} and {out_zp})")
    x = ctx.tensor(node.inputs[0])
    axes, n = _axes(ctx, node, x)
    if not isinstance(n, int):
        raise ConvertError(f"quantized REDUCE_PROD '{node.name}' over symbolic axes (size {n}): TFLite multiplies "
                           "one element at a time with a count-dependent scale, which needs a static count; "
                           "re-export the model with a static shape on the reduced axes")
    if n < 1:
        raise ConvertError(f"quantized REDUCE_PROD '{node.name}' over an empty axis: TFLite leaves the output unset")
    m16, shift = prod_multiplier(scale(info), scale(out), n)
    if not 8 <= shift <= 46:
        raise ConvertError(f"quantized REDUCE_PROD '{node.name}': the per-step scale needs exponent {15 - shift}, "
                           "outside the -31..7 that TFLite's MultiplyByQuantizedMultiplier accepts")
    lo, hi = value_range(info)
    check_no_wrap(node, n, max(hi - in_zp, in_zp - lo), m16, shift, out_zp)
    ops = Int32Ops(ctx, x.type.rank)
    diff = input_as_int32(ctx, x, info.type_name, in_zp)
    factor = ctx.b.emit(Op.MUL, diff, ops.const(m16), attrs=A.MulAttrs(0))
    acc = next(_elements(ctx, diff, axes))
    for f in itertools.islice(_elements(ctx, factor, axes), 1, None):
        acc = ctx.b.emit(Op.MUL, acc, f, attrs=A.MulAttrs(shift))
    acc = ctx.b.emit(Op.MUL, acc, ops.const(m16), attrs=A.MulAttrs(shift))
    lo_out, hi_out = value_range(out)
    acc = clamp(ctx, acc, lo_out - out_zp, hi_out - out_zp)
    return _finish(ctx, node, int32_to_output(ctx, acc, type_name, out_zp), axes)
