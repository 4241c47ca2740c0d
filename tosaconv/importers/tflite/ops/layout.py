"""Converters for TFLite's layout ops: MIRROR_PAD (REFLECT, SYMMETRIC),
DEPTH_TO_SPACE, SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND and
REVERSE_V2 (one TOSA REVERSE per listed axis; reverse.cc copies stored values
whatever the scales, so its int8 form is the same copy).

MIRROR_PAD is the shared reflect or symmetric padding (:func:`tosaconv.lowering.pad.pad_by`: a CONCAT of
REVERSEd rows per axis; SYMMETRIC repeats the edge row too, so its mirrored
rows start at the edge), or DYN_PAD when the paddings are computed from shapes. The NHWC block ops are RESHAPE -> TRANSPOSE
-> RESHAPE through a rank-6 view using the shared helpers (TFLite
orders a pixel's block as ``(i * b + j) * C + c``, ONNX's DCR order). A
symbolic dim that must split records a divisibility fact in the ledger.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.dims import exact_quotient, reshape, slice_
from ....lowering.index_math import transpose
from ....lowering.pad import pad_by, paddings_pairs
from ....symbolic.expr import mul, product, sub
from ..qhelpers_data import keeps_quant
from ..reader import ConvertError
from ..registry import converter
from ..schema import tflite

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..node import OpReader
    from ..context import TfliteContext


def _ints(ctx: TfliteContext, key: str, what: str) -> list:
    c = ctx.const(key)
    if c is None:
        raise ConvertError(f"{what} must be a constant")
    return [int(v) for v in np.asarray(c).reshape(-1)]


@converter("MIRROR_PAD", options="MirrorPadOptions", form="any")
@keeps_quant
def convert_mirror_pad(ctx: TfliteContext, node: OpReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    mode = node.opt("Mode")
    if mode not in (tflite.MirrorPadMode.REFLECT, tflite.MirrorPadMode.SYMMETRIC):
        raise ConvertError(f"MIRROR_PAD mode {mode} is neither REFLECT nor SYMMETRIC")
    before, after = paddings_pairs(ctx, node.inputs[1], x.type.rank, "MIRROR_PAD paddings")
    return pad_by(ctx, x, before, after, "reflect" if mode == tflite.MirrorPadMode.REFLECT else "symmetric")


def _nhwc(ctx: TfliteContext, node: OpReader) -> tuple[Value, int]:
    x = ctx.tensor(node.inputs[0])
    if x.type.rank != 4:
        raise ConvertError(f"{node.op_type} needs a rank 4 (NHWC) input, got rank {x.type.rank}")
    b = node.opt("BlockSize")
    if b < 1:
        raise ConvertError(f"{node.op_type} block size {b} must be >= 1")
    return x, b


@converter("REVERSE_V2", form="any")
def convert_reverse_v2(ctx: TfliteContext, node: OpReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    axes = [a + x.type.rank if a < 0 else a for a in _ints(ctx, node.inputs[1], "REVERSE_V2 axis")]
    bad = [a for a in axes if not 0 <= a < x.type.rank]
    if bad or len(set(axes)) != len(axes):
        raise ConvertError(f"REVERSE_V2 axes {axes} must be distinct axes of the rank-{x.type.rank} input")
    for a in axes:
        x = ctx.b.emit(Op.REVERSE, x, attrs=A.AxisAttrs(a))
    return x


@converter("DEPTH_TO_SPACE", options="DepthToSpaceOptions", form="any")
def convert_depth_to_space(ctx: TfliteContext, node: OpReader) -> Converted:
    x, b = _nhwc(ctx, node)
    n, h, w, c = x.type.shape
    c_out = exact_quotient(ctx, c, b * b, "DEPTH_TO_SPACE channels")
    y = transpose(ctx, reshape(ctx, x, [n, h, w, b, b, c_out]), (0, 1, 3, 2, 4, 5))
    return reshape(ctx, y, [n, mul(h, b), mul(w, b), c_out])


@converter("SPACE_TO_DEPTH", options="SpaceToDepthOptions", form="any")
def convert_space_to_depth(ctx: TfliteContext, node: OpReader) -> Converted:
    x, b = _nhwc(ctx, node)
    n, h, w, c = x.type.shape
    h_out, w_out = exact_quotient(ctx, h, b, "SPACE_TO_DEPTH height"), exact_quotient(ctx, w, b, "SPACE_TO_DEPTH width")
    y = transpose(ctx, reshape(ctx, x, [n, h_out, b, w_out, b, c]), (0, 1, 3, 2, 4, 5))
    return reshape(ctx, y, [n, h_out, w_out, mul(c, b * b)])


def _block(ctx: TfliteContext, node: OpReader, x: Value, what: str) -> tuple[list, list]:
    block = _ints(ctx, node.inputs[1], f"{what} block_shape")
    m = len(block)
    if m < 1 or 1 + m > x.type.rank or min(block) < 1:
        raise ConvertError(f"{what} block_shape {block} does not fit a rank-{x.type.rank} input")
    rest = list(x.type.shape[1 + m:])
    if 1 + 2 * m + (1 if rest else 0) > 6:
        raise ConvertError(f"{what} with {m} block dims needs a rank above 6 (TOSA's maximum)")
    return block, rest


@converter("SPACE_TO_BATCH_ND")
def convert_space_to_batch_nd(ctx: TfliteContext, node: OpReader) -> Converted:
    return space_to_batch(ctx, node, 0.0)


def space_to_batch(ctx: TfliteContext, node: OpReader, pad_value: float) -> Value:
    """SPACE_TO_BATCH_ND with its pads filled with ``pad_value`` (quantized: the zero point's stored value)."""
    x = ctx.tensor(node.inputs[0])
    block, rest = _block(ctx, node, x, "SPACE_TO_BATCH_ND")
    m = len(block)
    pads = _ints(ctx, node.inputs[2], "SPACE_TO_BATCH_ND paddings")
    if len(pads) != 2 * m or min(pads) < 0:
        raise ConvertError(f"SPACE_TO_BATCH_ND needs {m} non-negative (before, after) pairs, got {pads}")
    if any(pads):
        x = ctx.b.emit(Op.PAD, x, attrs=A.PadAttrs(tuple([0, 0] + pads + [0, 0] * len(rest)), pad_value))
    batch, spatial = x.type.shape[0], list(x.type.shape[1:1 + m])
    outs = [exact_quotient(ctx, d, bs, f"SPACE_TO_BATCH_ND padded dim {i + 1}") for i, (d, bs) in
            enumerate(zip(spatial, block))]
    rest_flat = [product(rest)] if rest else []
    view = [batch] + [v for o, bs in zip(outs, block) for v in (o, bs)] + rest_flat
    perm = tuple(2 + 2 * i for i in range(m)) + (0,) + tuple(1 + 2 * i for i in range(m)) + \
        ((2 * m + 1,) if rest else ())
    y = transpose(ctx, reshape(ctx, x, view), perm)
    return reshape(ctx, y, [mul(batch, product(block))] + outs + rest)


@converter("BATCH_TO_SPACE_ND", form="any")
@keeps_quant
def convert_batch_to_space_nd(ctx: TfliteContext, node: OpReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    block, rest = _block(ctx, node, x, "BATCH_TO_SPACE_ND")
    m = len(block)
    crops = _ints(ctx, node.inputs[2], "BATCH_TO_SPACE_ND crops")
    if len(crops) != 2 * m or min(crops) < 0:
        raise ConvertError(f"BATCH_TO_SPACE_ND needs {m} non-negative (start, end) crop pairs, got {crops}")
    batch = exact_quotient(ctx, x.type.shape[0], product(block), "BATCH_TO_SPACE_ND batch")
    spatial = list(x.type.shape[1:1 + m])
    rest_flat = [product(rest)] if rest else []
    view = list(block) + [batch] + spatial + rest_flat
    perm = (m,) + tuple(v for i in range(m) for v in (m + 1 + i, i)) + ((2 * m + 1,) if rest else ())
    full = [mul(d, bs) for d, bs in zip(spatial, block)]
    y = reshape(ctx, transpose(ctx, reshape(ctx, x, view), perm), [batch] + full + rest)
    if not any(crops):
        return y
    starts = [0] + [crops[2 * i] for i in range(m)] + [0] * len(rest)
    sizes = [batch] + [sub(d, crops[2 * i] + crops[2 * i + 1]) for i, d in enumerate(full)] + rest
    return slice_(ctx, y, starts, sizes)
