"""Converters for onnxruntime's layer normalizations: com.microsoft SkipLayerNormalization and
SkipSimplifiedLayerNormalization, and its default-domain LayerNormalization (version 1) and
SimplifiedLayerNormalization.

From onnxruntime's schemas and CPU kernels:

* LayerNormalization 1 is ONNX's LayerNormalization 17 (same attributes and
  outputs), defined by onnxruntime for the opsets before 17; it uses the
  same converter.
* SimplifiedLayerNormalization (RMS normalization): ``Y = X * rsqrt(mean(X^2) + epsilon) * scale``
  over the axes from ``axis`` on, computed in float32 when ``stash_type`` is 1;
  output 1 is that ``rsqrt``.
* SkipLayerNormalization: ``S = input + skip (+ bias)``, then a layer
  normalization of S over the last axis with ``gamma`` and optional ``beta``
  (epsilon 1e-12 by default). Outputs: Y, the mean, the inverse standard
  deviation (both with the last axis kept as 1) and S itself
  (``input_skip_bias_sum``).
* SkipSimplifiedLayerNormalization: the same sum, RMS-normalized with gamma;
  outputs Y, (mean: not computed by onnxruntime, refused), inv_std_var and S.
* EmbedLayerNormalization (BERT's embeddings): ``E = word[input_ids] +
  position[position_ids] (+ segment[segment_ids])``, the position ids being
  ``0..S-1`` unless given (then the position rows are a SLICE of the table);
  outputs the layer normalization of E with gamma and beta, the mask index
  (the sum of each row of the 0/1 ``mask``, int32, as onnxruntime's kernel
  computes it) and E itself (``embedding_sum``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....lowering.dims import norm_axis, reshape, slice_
from ....lowering.gather import gather
from ....lowering.reduce import mean_over, reduce_chain
from ....symbolic.constraints import Kind
from ....lowering.typed import mul
from ....ir.ops import Op
from ..ms_domain import MS
from ..reader import ConvertError
from ..registry import converter
from .normalize import cast_to, convert_layer_normalization, stash_dtype, standardize

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader

converter("LayerNormalization", since=1)(convert_layer_normalization)


def rms_normalize(ctx: ImportContext, x: Value, axes: Sequence[int], epsilon: float) -> tuple[Value, Value]:
    """``(x * rsqrt(mean(x^2) + epsilon), that rsqrt)`` over ``axes`` (kept as 1s)."""
    mean_square = mean_over(ctx, mul(ctx, x, x), axes)
    inv = ctx.b.emit(Op.RSQRT, ctx.b.emit(Op.ADD, mean_square, ctx.b.scalar_like(epsilon, mean_square.type)))
    return mul(ctx, x, inv), inv


@converter("SimplifiedLayerNormalization", since=1)
def convert_simplified_layer_normalization(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    axes = list(range(norm_axis(node.attr("axis"), x.type.rank), x.type.rank))
    y, inv = rms_normalize(ctx, cast_to(ctx, x, stash_dtype(node, x)), axes, node.attr("epsilon"))
    return [mul(ctx, cast_to(ctx, y, x.type.dtype), ctx.tensor(node.inputs[1])), inv]


def _skip_sum(ctx: ImportContext, node: NodeReader, bias_index: int) -> Value:
    s = ctx.b.emit(Op.ADD, ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]))
    return ctx.b.emit(Op.ADD, s, ctx.tensor(node.input(bias_index))) if node.input(bias_index) else s


@converter("SkipLayerNormalization", since=1, domain=MS)
def convert_skip_layer_normalization(ctx: ImportContext, node: NodeReader) -> Converted:
    s = _skip_sum(ctx, node, 4)
    axes = [s.type.rank - 1]
    normalized, mean, inv_std = standardize(ctx, s, axes, node.attr("epsilon"))
    y = mul(ctx, normalized, ctx.tensor(node.inputs[2]))
    if node.input(3):
        y = ctx.b.emit(Op.ADD, y, ctx.tensor(node.input(3)))
    return [y, mean, inv_std, s]


@converter("SkipSimplifiedLayerNormalization", since=1, domain=MS)
def convert_skip_simplified_layer_normalization(ctx: ImportContext, node: NodeReader) -> Converted:
    if len(node.outputs) > 1 and node.outputs[1]:
        raise ConvertError("SkipSimplifiedLayerNormalization output 1 (mean) is not computed by an RMS "
                           "normalization; tosaconv converts the outputs output, inv_std_var and "
                           "input_skip_bias_sum")
    s = _skip_sum(ctx, node, 3)
    y, inv = rms_normalize(ctx, s, [s.type.rank - 1], node.attr("epsilon"))
    return [mul(ctx, y, ctx.tensor(node.inputs[2])), None, inv, s]


@converter("EmbedLayerNormalization", since=1, domain=MS)
def convert_embed_layer_normalization(ctx: ImportContext, node: NodeReader) -> Converted:
    ids = ctx.tensor(node.inputs[0])
    embedded = gather(ctx, node.inputs[2], node.inputs[0], 0)                  # [B, S, H]
    embedded = ctx.b.emit(Op.ADD, embedded, _positions(ctx, node, ids))
    if node.input(1) and node.input(4):
        embedded = ctx.b.emit(Op.ADD, embedded, gather(ctx, node.input(4), node.input(1), 0))
    normalized, _, _ = standardize(ctx, embedded, [2], node.attr("epsilon"))
    y = ctx.b.emit(Op.ADD, mul(ctx, normalized, ctx.tensor(node.inputs[5])), ctx.tensor(node.inputs[6]))
    return [y, _mask_index(ctx, node, ids), embedded]


def _positions(ctx: ImportContext, node: NodeReader, ids: Value) -> Value:
    """The position rows: gathered at position_ids, else the first S rows of the table ([S, H])."""
    if node.input(8):
        return gather(ctx, node.input(3), node.input(8), 0)
    table = ctx.tensor(node.inputs[3])
    seq, hidden = ids.type.shape[1], table.type.shape[1]
    ctx.require(Kind.GE, table.type.shape[0], seq, "EmbedLayerNormalization has a position row for every token")
    return slice_(ctx, table, [0, 0], [seq, hidden])


def _mask_index(ctx: ImportContext, node: NodeReader, ids: Value) -> Optional[Value]:
    """The sum of each mask row as int32 ``[B]``, or None without a mask."""
    if not node.input(7):
        return None
    mask = ctx.tensor(node.input(7))
    if mask.type.dtype is not DType.INT32:
        mask = ctx.b.emit(Op.CAST, mask, attrs=A.CastAttrs(DType.INT32))
    return reshape(ctx, reduce_chain(ctx, Op.REDUCE_SUM, mask, [1]), [ids.type.shape[0]])
