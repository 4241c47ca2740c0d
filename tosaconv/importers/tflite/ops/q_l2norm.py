"""Quantized TFLite L2_NORMALIZATION in TOSA integer ops, bit-exact with LiteRT's reference kernels.

LiteRT's BUILTIN_REF L2_NORMALIZATION (l2norm.cc, ``Eval<kReference>``) runs
``reference_integer_ops::L2Normalization`` for int8 and
``reference_ops::L2Normalization`` for uint8. Per row of the last axis:

1. ``v = x - input_zp``; ``acc = sum(v * v)`` in int32.
2. ``GetInvSqrtQuantizedMultiplierExp(acc, -1)`` (tflite/kernels/internal/common.h):
   ``acc <= 1`` gives ``(INT32_MAX, 0)``, which is also what an all-zero row gets
   (the quantized kernel has no epsilon; the float kernel's 1e-6 does not
   apply). Otherwise ``acc`` is brought into ``[2**27, 2**29)`` by an even shift
   (one division by 4, or a left shift by ``2 * pairs``), five Newton-Raphson
   steps of ``x = 1.5 x - (input / 2) x**3`` run in Q3.28, the result is multiplied
   by ``sqrt(1/2)``, and a negative exponent is folded into the multiplier.
3. int8: ``MultiplyByQuantizedMultiplier(v, m, 7 - shift)``, clamped.
   uint8: ``128 + RoundingDivideByPOT(SRDHM(128 * v, m), shift)``, clamped.

**TOSA form.** Step 2 is per-row data-dependent arithmetic: CLZ gives the even
normalisation shift (``(clz - 1) & ~1``), LOGICAL_LEFT_SHIFT then
ARITHMETIC_RIGHT_SHIFT by 2 normalise ``acc`` (both cases at once), MUL with
shift 31 is SRDHM, and the step's saturating ``Rescale<3>`` doublings are spelled
with MINIMUM/MAXIMUM/SELECT. Step 3 uses per-row shift amounts (tensor operands
of LOGICAL_LEFT_SHIFT and ARITHMETIC_RIGHT_SHIFT) and the half-away-from-zero
division of :meth:`.q_logsoftmax.FixedPointOps.rdbpot_signed`. The output type's
saturation is the final RESCALE's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.int32_ops import input_as_int32, int32_to_output
from ..quant import scale, value_range, zero_point
from ..reader import ConvertError
from ..registry import converter
from .common import ACT
from .q_logsoftmax import I32_MAX, FixedPointOps, static_depth

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo

_OUT_ZP = {"INT8": 0, "UINT8": 128}
_HALF_THREE, _ONE_Q3, _SQRT_HALF = 3 << 27, 1 << 28, 1518500250
OUTPUT_SHIFT = 7                                      # kOutputScale: 1/128


class InvSqrtOps(FixedPointOps):
    def sat_shift_left(self, x: Value, exponent: int) -> Value:
        """gemmlowp ``SaturatingRoundingMultiplyByPOT<exponent>`` of any int32 ``x``."""
        limit = (1 << (31 - exponent)) - 1
        inside = self.maximum(self.minimum(x, limit), -(limit + 1))
        return self.select(self.greater(x, limit), I32_MAX, self.shift_left(inside, exponent))

    def inv_sqrt(self, acc: Value) -> tuple:
        """``GetInvSqrtQuantizedMultiplierExp(acc, -1)`` for ``acc >= 0``: (multiplier, right shift)."""
        x = self.maximum(acc, 2)
        even = self.bit_and(self.sub(self.clz(x), 1), -2)          # 2 * (pairs + 1), 0..30
        normalized = self.rdbpot_floor(self.shift_left(x, even), 2)   # acc / 4 or acc << 2 * pairs
        half_input = self.rdbpot(self.rdbpot_floor(normalized, 1), 1)
        y = self.const(_ONE_Q3)
        for _ in range(5):
            cube = self.sat_shift_left(self.srdhm(self.srdhm(y, y), y), 6)
            y = self.sat_shift_left(self.sub(self.srdhm(y, _HALF_THREE), self.srdhm(half_input, cube)), 3)
        y = self.srdhm(y, _SQRT_HALF)
        shift = self.sub(12, self.rdbpot_floor(even, 1))           # 11 - pairs, -2..12
        y = self.shift_left(y, self.maximum(self.sub(0, shift), 0))
        small = self.greater(2, acc)                               # acc <= 1
        return self.select(small, I32_MAX, y), self.select(small, 0, self.maximum(shift, 0))


def _check(node: OpReader) -> str:
    x, y = node.input_infos[0], node.output_infos[0]
    if x.type_name not in _OUT_ZP or y.type_name != x.type_name:
        raise ConvertError(f"quantized L2_NORMALIZATION from {x.type_name} to {y.type_name} is not supported: "
                           "LiteRT's kernel takes int8 or uint8 with the same output type")
    zp = _OUT_ZP[y.type_name]
    if scale(y) != 1.0 / 128 or zero_point(y) != zp:
        raise ConvertError(f"quantized L2_NORMALIZATION on {y.type_name} needs output scale 1/128 and zero point "
                           f"{zp} (TFLite refuses scale {scale(y)!r}, zero point {zero_point(y)}); "
                           "requantize the output")
    if node.opt("FusedActivationFunction") != ACT.NONE:
        raise ConvertError("quantized L2_NORMALIZATION with a fused activation is refused by TFLite's kernel")
    return y.type_name


def _max_depth(info: TensorInfo) -> int:
    lo, hi = value_range(info)
    biggest = max(hi - zero_point(info), zero_point(info) - lo)
    return (I32_MAX // (biggest * biggest)) if biggest else I32_MAX


@converter("L2_NORMALIZATION", options="L2NormOptions", form="quantized")
def convert_q_l2_normalization(ctx: TfliteContext, node: OpReader) -> Converted:
    type_name, x_info = _check(node), node.input_infos[0]
    x = ctx.tensor(node.inputs[0])
    if x.type.rank > 4:
        raise ConvertError(f"quantized L2_NORMALIZATION of rank {x.type.rank}: TFLite's kernel takes rank <= 4")
    static_depth(x, "L2_NORMALIZATION", _max_depth(x_info), "TFLite's int32 sum of squares could wrap")
    ops, axis = InvSqrtOps(ctx, x.type.rank), x.type.rank - 1
    v = input_as_int32(ctx, x, x_info.type_name, zero_point(x_info))
    multiplier, shift = ops.inv_sqrt(ops.reduce(Op.REDUCE_SUM, ops._bin(Op.MUL, v, v, A.MulAttrs(0)), axis))
    if type_name == "INT8":          # MultiplyByQuantizedMultiplier(v, m, 7 - shift)
        left = ops.maximum(ops.sub(OUTPUT_SHIFT, shift), 0)
        right = ops.maximum(ops.sub(shift, OUTPUT_SHIFT), 0)
        out = ops.rdbpot_signed(ops.srdhm(ops.shift_left(v, left), multiplier), right)
    else:                            # MultiplyByQuantizedMultiplierSmallerThanOneExp(128 * v, m, -shift)
        out = ops.rdbpot_signed(ops.srdhm(ops.shift_left(v, OUTPUT_SHIFT), multiplier), shift)
    return int32_to_output(ctx, out, type_name, _OUT_ZP[type_name])
