"""Converters for ONNX DepthToSpace and SpaceToDepth.

Both are RESHAPE -> TRANSPOSE -> RESHAPE on the NCHW tensor through a rank-6
view (TOSA's maximum rank), so no layout change to NHWC is needed. DepthToSpace
splits channels as ``[b, b, C/b²]`` (DCR, the default) or ``[C/b², b, b]``
(CRD); SpaceToDepth splits each spatial dim as ``[H/b, b]`` and moves the
block to the channels, DCR-ordered as ONNX defines it. A symbolic dim that
must split records a divisibility fact in the ledger.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ....lowering.dims import exact_quotient, reshape
from ....lowering.index_math import transpose
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader


def _nchw(ctx: ImportContext, node: NodeReader) -> tuple[Value, int]:
    x = ctx.tensor(node.inputs[0])
    if x.type.rank != 4:
        raise ConvertError(f"{node.op_type} needs a rank 4 (NCHW) input, got rank {x.type.rank}")
    b = node.attr("blocksize")
    if b < 1:
        raise ConvertError(f"{node.op_type} blocksize {b} must be >= 1")
    return x, b


@converter("DepthToSpace", since=1)
def convert_depth_to_space(ctx: ImportContext, node: NodeReader) -> Converted:
    x, b = _nchw(ctx, node)
    n, c, h, w = x.type.shape
    c_out = exact_quotient(ctx, c, b * b, "DepthToSpace channels")
    mode = node.attr("mode", "DCR")
    if mode == "DCR":
        view, perm = [n, b, b, c_out, h, w], (0, 3, 4, 1, 5, 2)
    elif mode == "CRD":
        view, perm = [n, c_out, b, b, h, w], (0, 1, 4, 2, 5, 3)
    else:
        raise ConvertError(f"DepthToSpace mode '{mode}' is not DCR or CRD")
    y = transpose(ctx, reshape(ctx, x, view), perm)
    return reshape(ctx, y, [n, c_out, h * b, w * b])


@converter("SpaceToDepth", since=1)
def convert_space_to_depth(ctx: ImportContext, node: NodeReader) -> Converted:
    x, b = _nchw(ctx, node)
    n, c, h, w = x.type.shape
    h_out = exact_quotient(ctx, h, b, "SpaceToDepth height")
    w_out = exact_quotient(ctx, w, b, "SpaceToDepth width")
    y = transpose(ctx, reshape(ctx, x, [n, c, h_out, b, w_out, b]), (0, 3, 5, 1, 2, 4))
    return reshape(ctx, y, [n, c * b * b, h_out, w_out])
