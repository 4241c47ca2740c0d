"""Quantized int16 LOGISTIC and TANH, bit-exact with LiteRT's reference kernels, in TOSA integer ops.

For int16 data LiteRT (activations.cc ``SigmoidPrepare`` / ``TanhPrepare``,
BUILTIN_REF) runs ``reference_integer_ops::Logistic`` / ``Tanh``
(reference/integer_ops/logistic.h, tanh.h) with the 256-entry
``sigmoid_table_uint16`` (sigmoid(i/24) in Q0.16, internal/common.h):

1. ``v = (x * input_multiplier + round) >> input_left_shift``, ``round`` being
   half the divisor. Prepare picks ``multiplier = 3 << left_shift, shift 0`` for
   a power-of-two input scale whose ``(15 - 3) + log2(scale)`` is 0 (LOGISTIC)
   or 0 or 1 (TANH), otherwise ``scale * 4096 * 3`` doubled (and the shift
   raised) until above 32767 / 2, then truncated to int32.
2. ``a = |v|``, ``uh = a >> k`` (k = 9 for LOGISTIC, 8 for TANH), ``ut = a & (2**k - 1)``;
   ``r = (T[uh] << k) + ut * (T[uh + 1] - T[uh])``, or a saturation constant when ``uh >= 255``.
3. LOGISTIC: ``(v >= 0 ? r + 2**9 : 2**25 - r + 2**9 - 1) >> 10``;
   TANH: ``(v >= 0 ? r - 2**23 + 2**7 : 2**23 - r + 2**7 - 1) >> 8``.

**TOSA form.** TOSA's int16 TABLE interpolates over 512 segments of 128 input
steps, which does not line up with TFLite's 256 segments of ``2**k`` steps of
``v``, so one TABLE cannot be exact. Instead step 1 is one int32 MUL (its
shift rounds exactly as ``+ round >> shift``); step 2 looks up
``A[min(uh, 255)] = T[uh] << k`` (the saturation constant at 255) and
``D[min(uh, 255)] = T[uh + 1] - T[uh]`` (0 at 255) through an int8 index with
:func:`tosaconv.lowering.tables.int32_table`, then ABS, BITWISE_AND, MUL and ADD; step 3 is
SELECT on ``v >= 0`` and ARITHMETIC_RIGHT_SHIFT (the operands are
non-negative for LOGISTIC, and both kernels' results lie in int16, so the final
RESCALE never saturates). Every value stays far inside int32.

Refused as LiteRT refuses them: non-zero zero points, and an output scale other
than 2**-15 (exactly, for LOGISTIC). Also refused: input scales above about 5.3,
where ``x * multiplier`` overflows int32 in TFLite's kernel.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.int32_ops import Int32Ops, identity_rescale, input_as_int32
from ....lowering.tables import int32_table
from ..qtables import libm, round_half_away
from ..quant import scale, zero_point
from ..reader import ConvertError

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo

F = np.float32

SIGMOID_TABLE_UINT16 = (   # tflite/kernels/internal/common.h sigmoid_table_uint16
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
)
# Per op: (fraction bits k, the saturated r, LOGISTIC/TANH's POT left shifts, (c_pos, c_neg, final shift)).
_KERNELS = {
    "LOGISTIC": (9, 0x7FFF << 10, (0,), ((1 << 9), (1 << 25) + (1 << 9) - 1, 10)),
    "TANH": (8, 0xFFFF << 8, (0, 1), ((1 << 7) - (1 << 23), (1 << 23) + (1 << 7) - 1, 8)),
}


def checked_log2(x: float) -> tuple:
    """quantization_util.cc ``CheckedLog2``: (is a power of two within 1e-3 in log2, rounded log2), in float32."""
    x_log2 = libm("logf", F(x)) * (F(1) / libm("logf", F(2)))
    rounded = round_half_away(x_log2)
    return bool(abs(F(x_log2 - rounded)) < F(1e-3)), int(rounded)


def input_scaling(op_type: str, in_scale: float) -> tuple:
    """(multiplier, left shift) as TanhPrepare / SigmoidPrepare and the kernel's POT branch set them."""
    pot, log2 = checked_log2(in_scale)
    left_shift = (15 - 3) + log2
    if pot and left_shift in _KERNELS[op_type][2]:
        return 3 << left_shift, 0          # the kernel's input_multiplier == 0 case
    multiplier, left_shift = float(np.float64(F(in_scale))) * 4096.0 * 3.0, 0
    while multiplier <= 32767.0 / 2.0 and left_shift <= 30:
        left_shift, multiplier = left_shift + 1, multiplier * 2.0
    return int(multiplier), left_shift


def lookup_entries(op_type: str) -> tuple:
    """The A and D tables over ``min(uh, 255)`` (256 entries each, TABLE order of the index ``uh - 128``)."""
    bits, saturated = _KERNELS[op_type][:2]
    t = np.array(SIGMOID_TABLE_UINT16, dtype=np.int64)
    a = np.append(t[:255] << bits, saturated)
    d = np.append(t[1:] - t[:255], 0)
    return a, d


def _check(node: OpReader) -> TensorInfo:
    x, y = node.input_infos[0], node.output_infos[0]
    if y.type_name != "INT16":
        raise ConvertError(f"quantized {node.op_type} with int16 input needs an int16 output, not {y.type_name}")
    if zero_point(x) or zero_point(y):
        raise ConvertError(f"quantized int16 {node.op_type} needs zero points 0 (TFLite's Prepare refuses "
                           f"{zero_point(x)} and {zero_point(y)})")
    pot, log2 = checked_log2(scale(y))
    exact = node.op_type != "LOGISTIC" or F(scale(y)) == F(1.0 / 32768)
    if not (pot and log2 == -15 and exact):
        raise ConvertError(f"quantized int16 {node.op_type} needs output scale 1/32768 (TFLite's kernel refuses "
                           f"{scale(y)!r}); requantize the output")
    return x


def convert_int16(ctx: TfliteContext, node: OpReader) -> Value:
    """The int16 form of LOGISTIC or TANH (called by the quantized converters in :mod:`.q_lut`)."""
    info = _check(node)
    multiplier, left_shift = input_scaling(node.op_type, scale(info))
    if multiplier * 32768 > (1 << 31) - 1:
        raise ConvertError(f"quantized int16 {node.op_type} with input scale {scale(info)!r}: TFLite's "
                           f"x * {multiplier} overflows int32 (scales up to about 5.3 work)")
    bits, _, _, (c_pos, c_neg, out_shift) = _KERNELS[node.op_type]
    x = ctx.tensor(node.inputs[0])
    ops = Int32Ops(ctx, x.type.rank)
    v = ctx.b.emit(Op.MUL, input_as_int32(ctx, x, info.type_name), ops.const(multiplier), attrs=A.MulAttrs(left_shift))
    magnitude = ctx.b.emit(Op.ABS, v)
    uh = ops.minimum(ops.rdbpot_floor(magnitude, bits), 255)
    index = identity_rescale(ctx, uh, DType.INT8, output_zp=-128)
    base, slope = (int32_table(ctx, index, e) for e in lookup_entries(node.op_type))
    ut = ops.bit_and(magnitude, (1 << bits) - 1)
    r = ops.add(base, ctx.b.emit(Op.MUL, ut, slope, attrs=A.MulAttrs(0)))
    positive = ctx.b.emit(Op.GREATER_EQUAL, v, ops.const(0))
    chosen = ctx.b.emit(Op.SELECT, positive, ops.add(r, c_pos), ops.sub(c_neg, r))
    return identity_rescale(ctx, ops.rdbpot_floor(chosen, out_shift), DType.INT16)
