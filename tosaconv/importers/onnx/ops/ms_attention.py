"""Converters for onnxruntime's com.microsoft Attention and MultiHeadAttention.

From onnxruntime's schemas and CPU kernels:

* Attention: ``input [B, S, H_in]`` times the packed ``weights [H_in, Hq + Hk + Hv]``
  plus ``bias`` gives Q, K and V (``qkv_hidden_sizes``, else three equal
  parts), split into ``num_heads`` heads; the result is
  ``softmax(scale Q K^T + mask + attention_bias) V`` merged back to ``[B, S, Hv]``.
* MultiHeadAttention: Q, K, V come as ``query [B, S, D]``, ``key [B, L, D]``,
  ``value [B, L, Dv]`` with an optional packed ``bias [D + D + Dv]``, or K and
  V already per head (``[B, N, L, h]``, no bias on them). ``present_key`` and
  ``present_value`` are then K and V per head.

``scale`` defaults to ``1/sqrt(head size)``. Masks add ``mask_filter_value``
(default -10000) where a key is masked: a 2-D ``[B, T]`` or 3-D ``[B, S, T]``
0/1 mask (0 masks), a ``[B]`` vector of key lengths (right padding), or the
dummy ``[B|1, 1]`` (no mask). A key/value cache is concatenated in front of
the new keys and values (Attention's ``past [2, B, N, P, h]``, MultiHeadAttention's
``past_key``/``past_value [B, N, P, h]``), and the ``present`` outputs are
the concatenations. ``unidirectional`` masks key ``j > i + P`` for query ``i``.
Refused, each with a message naming it: rotary embedding (``do_rotary``),
shared past/present buffers (``past_present_share_buffer``,
``past_sequence_length``), the left-padding ``[2B]`` and Megatron
``[B, 1, M, M]`` masks, MultiHeadAttention's packed QKV/KV inputs (which
onnxruntime's CPU kernels do not run either) and its ``qk`` output.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.attention import attend, head_size, merge_heads, split_heads
from ....lowering.dims import reshape, split_along
from ....lowering.index_math import arange, dim_tensor, transpose
from ....lowering.matmul import matmul
from ....symbolic.constraints import Kind
from ....symbolic.expr import same
from ..ms_domain import MS
from ..reader import ConvertError
from ....lowering.limits import Limit, LimitKind
from ..registry import converter, publish

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader

DEFAULT_MASK_FILTER = -10000.0


_GIVEN = ("given (a shared, fixed-size past/present buffer)",)
_GROWING_CACHE = "tosaconv converts a key/value cache given as past inputs that grow, not a shared fixed-size buffer"
SHARED_BUFFER = Limit("shared-buffer", LimitKind.INPUT, "past_sequence_length", _GIVEN, _GROWING_CACHE,
                      "export the cache as growing past/present inputs and outputs")
MASK_FORM = Limit("mask-form", LimitKind.INPUT, "mask", ("of shape [2*batch] (left padding) or 4-D (Megatron)",),
                  "tosaconv converts [batch] key lengths, [batch, keys] and [batch, queries, keys] 0/1 masks",
                  "give the mask in one of those forms")
ATT_ROTARY, ATT_SHARE = publish(
    "Attention", SHARED_BUFFER, MASK_FORM,
    Limit("rotary", LimitKind.ATTRIBUTE, "do_rotary", (1,), "rotary embeddings inside Attention are not lowered",
          "apply the rotary embedding before the Attention node"),
    Limit("share-buffer", LimitKind.ATTRIBUTE, "past_present_share_buffer", (1,), _GROWING_CACHE,
          "export the cache as growing past/present inputs and outputs"), domain=MS)[2:]
MHA_CACHE_INDIRECTION, MHA_QK, MHA_PACKED_QKV, MHA_PACKED_KV = publish(
    "MultiHeadAttention", SHARED_BUFFER, MASK_FORM,
    Limit("cache-indirection", LimitKind.INPUT, "cache_indirection", ("given (beam search)",), _GROWING_CACHE,
          "export without beam-search cache indirection"),
    Limit("qk-output", LimitKind.OUTPUT, "qk", (), "tosaconv does not return the attention scores",
          "leave output 3 unused"),
    Limit("packed-qkv", LimitKind.INPUT, "query", ("with packed Q, K and V (no key and value inputs)",),
          "tosaconv reads query, key and value as separate inputs", "give query, key and value separately"),
    Limit("packed-kv", LimitKind.INPUT, "key and value", ("of different ranks (packed KV)",),
          "tosaconv reads key and value both as [B, L, D] or both per head [B, N, L, h]",
          "give key and value in one of those forms"), domain=MS)[2:]


def _refuse_inputs(node: NodeReader, indices: dict) -> None:
    for i, limit in indices.items():
        if node.input(i):
            raise limit.refuse(f"{node.op_type} input {i} '{node.input(i)}'")


def _refuse_outputs(node: NodeReader, indices: dict) -> None:
    for i, limit in indices.items():
        if i < len(node.outputs) and node.outputs[i]:
            raise limit.refuse(f"{node.op_type} output {i} '{node.outputs[i]}'")


@converter("Attention", since=1, domain=MS)
def convert_attention(ctx: ImportContext, node: NodeReader) -> Converted:
    _refuse_inputs(node, {6: SHARED_BUFFER})
    for attr, limit in (("do_rotary", ATT_ROTARY), ("past_present_share_buffer", ATT_SHARE)):
        if node.attr(attr):
            raise limit.refuse(f"Attention with {attr}=1")
    x, heads = ctx.tensor(node.inputs[0]), node.attr("num_heads")
    qkv = matmul(ctx, x, ctx.tensor(node.inputs[1]))
    if node.input(2):
        qkv = ctx.b.emit(Op.ADD, qkv, ctx.tensor(node.input(2)))
    sizes = _qkv_sizes(node, qkv.type.shape[2])
    q, k, v = split_along(ctx, qkv, 2, sizes)
    hq, hv = head_size(sizes[0], heads, "Q hidden size"), head_size(sizes[2], heads, "V hidden size")
    if sizes[0] != sizes[1]:
        raise ConvertError(f"Attention Q and K hidden sizes differ ({sizes[0]} and {sizes[1]})")
    q, k, v = (split_heads(ctx, t, heads, h) for t, h in ((q, hq), (k, hq), (v, hv)))
    past = _attention_past(ctx, node)
    k, v = (k, v) if past is None else (_concat_seq(ctx, past[0], k), _concat_seq(ctx, past[1], v))
    k_t = transpose(ctx, k, (0, 1, 3, 2))
    biases = _biases(ctx, node, q, k_t, mask_index=3, bias_index=5, past=past)
    y = merge_heads(ctx, attend(ctx, q, k_t, v, _scale(node, hq), biases))
    present = None
    if len(node.outputs) > 1 and node.outputs[1]:
        present = ctx.b.emit(Op.CONCAT, _lead(ctx, k), _lead(ctx, v), attrs=A.AxisAttrs(0))
    return [y, present]


def _attention_past(ctx: ImportContext, node: NodeReader) -> Optional[tuple[Value, ...]]:
    """Attention's ``past [2, B, N, P, h]`` as (past keys, past values) ``[B, N, P, h]``, or None."""
    if not node.input(4):
        return None
    past = ctx.tensor(node.input(4))
    if past.type.rank != 5:
        raise ConvertError(f"Attention past must be [2, batch, heads, past_length, head_size], got {past.type}")
    _, b, n, p, h = past.type.shape
    return tuple(reshape(ctx, part, [b, n, p, h]) for part in split_along(ctx, past, 0, [1, 1]))


def _concat_seq(ctx: ImportContext, past: Value, new: Value) -> Value:
    return ctx.b.emit(Op.CONCAT, past, new, attrs=A.AxisAttrs(2))


def _lead(ctx: ImportContext, x: Value) -> Value:
    return reshape(ctx, x, [1] + list(x.type.shape))


def _qkv_sizes(node: NodeReader, total: Dim) -> list:
    sizes = node.attr("qkv_hidden_sizes")
    if sizes:
        if len(sizes) != 3 or sum(sizes) != total:
            raise ConvertError(f"Attention qkv_hidden_sizes {list(sizes)} do not add up to the weights' {total} "
                               "columns")
        return list(sizes)
    if not isinstance(total, int) or total % 3:
        raise ConvertError(f"Attention weights have {total} columns, which do not split into three equal parts "
                           "(set qkv_hidden_sizes)")
    return [total // 3] * 3


def _scale(node: NodeReader, size: Dim) -> float:
    scale = node.attr("scale")
    if scale is not None and scale != 0.0:
        return scale
    if not isinstance(size, int):
        raise ConvertError("the attention head size is symbolic; the default scale 1/sqrt(head size) needs it")
    return 1.0 / math.sqrt(size)


def _biases(ctx: ImportContext, node: NodeReader, q: Value, k_t: Value, mask_index: int, bias_index: int, past: Optional[tuple[Value, ...]] = None) -> list:
    """The additive terms of the scores ``[B, N, S, T]``: key mask, causal mask (query i sees keys up to
    ``i + P`` with P past keys), attention_bias."""
    (b, _, s, _), t = q.type.shape, k_t.type.shape[3]
    fill = node.attr("mask_filter_value")
    fill = DEFAULT_MASK_FILTER if fill is None else fill
    terms = []
    if node.input(mask_index):
        mask = _key_mask(ctx, node, ctx.tensor(node.input(mask_index)), b, s, t)
        if mask is not None:
            terms.append(_fill_where(ctx, mask, fill, q))
    if node.attr("unidirectional"):
        last = arange(ctx, s, 4, 2)
        if past is not None:
            last = ctx.b.emit(Op.ADD, last, dim_tensor(ctx, past[0].type.shape[2], 4))
        later = ctx.b.emit(Op.GREATER, arange(ctx, t, 4, 3), last)
        terms.append(_fill_where(ctx, later, fill, q))
    if node.input(bias_index):
        terms.append(ctx.tensor(node.input(bias_index)))
    return terms


def _key_mask(ctx: ImportContext, node: NodeReader, mask: Value, b: Dim, s: Dim, t: Dim) -> Optional[Value]:
    """A bool tensor, true where a key is masked, broadcastable to ``[B, N, S, T]`` (None: no mask)."""
    shape = mask.type.shape
    if mask.type.rank == 2 and same(shape[1], 1):
        return None                                   # onnxruntime's dummy mask
    if mask.type.rank in (2, 3):
        ctx.require(Kind.EQ, shape[-1], t, f"{node.op_type} mask covers every key")
        dims = [shape[0], 1, 1, t] if mask.type.rank == 2 else [shape[0], 1, shape[1], t]
        return ctx.b.emit(Op.EQUAL, reshape(ctx, _int32(ctx, mask), dims), _zero(ctx, 4))
    if mask.type.rank == 1 and not (isinstance(shape[0], int) and isinstance(b, int) and shape[0] != b):
        ctx.require(Kind.EQ, shape[0], b, f"{node.op_type} 1-D mask has one key length per batch entry "
                    "(the [2*batch] left-padding form is not supported)")
        lengths = reshape(ctx, _int32(ctx, mask), [b, 1, 1, 1])
        return ctx.b.emit(Op.GREATER_EQUAL, arange(ctx, t, 4, 3), lengths)
    raise MASK_FORM.refuse(f"{node.op_type} mask of shape {list(shape)}")


def _int32(ctx: ImportContext, v: Value) -> Value:
    return v if v.type.dtype is DType.INT32 else ctx.b.emit(Op.CAST, v, attrs=A.CastAttrs(DType.INT32))


def _zero(ctx: ImportContext, rank: int) -> Value:
    return ctx.b.const(np.zeros((1,) * rank, np.int32))


def _fill_where(ctx: ImportContext, masked: Value, value: float, like: Value) -> Value:
    dtype = like.type.dtype.numpy
    return ctx.b.emit(Op.SELECT, masked, ctx.b.const(np.full((1,) * 4, value, dtype)),
                      ctx.b.const(np.zeros((1,) * 4, dtype)))


# -- MultiHeadAttention --------------------------------------------------------------------

@converter("MultiHeadAttention", since=1, domain=MS)
def convert_multi_head_attention(ctx: ImportContext, node: NodeReader) -> Converted:
    _refuse_inputs(node, {8: SHARED_BUFFER, 9: MHA_CACHE_INDIRECTION})
    _refuse_outputs(node, {3: MHA_QK})
    heads = node.attr("num_heads")
    query = ctx.tensor(node.inputs[0])
    if query.type.rank != 3 or not node.input(1) or not node.input(2):
        raise MHA_PACKED_QKV.refuse("MultiHeadAttention without key and value inputs")
    key, value = ctx.tensor(node.input(1)), ctx.tensor(node.input(2))
    q_bias, k_bias, v_bias = _mha_bias(ctx, node, query, value)
    hq = head_size(query.type.shape[2], heads, "query hidden size")
    q = split_heads(ctx, _add(ctx, query, q_bias), heads, hq)
    if key.type.rank == 4 and value.type.rank == 4:      # already per head: [B, N, L, h]
        k_heads, v_heads = key, value
    elif key.type.rank == 3 and value.type.rank == 3:
        hv = head_size(value.type.shape[2], heads, "value hidden size")
        k_heads = split_heads(ctx, _add(ctx, key, k_bias), heads, hq)
        v_heads = split_heads(ctx, _add(ctx, value, v_bias), heads, hv)
    else:
        raise MHA_PACKED_KV.refuse(f"MultiHeadAttention key of rank {key.type.rank} and value of rank "
                                   f"{value.type.rank}")
    past = _mha_past(ctx, node)
    if past is not None:
        k_heads, v_heads = _concat_seq(ctx, past[0], k_heads), _concat_seq(ctx, past[1], v_heads)
    k_t = transpose(ctx, k_heads, (0, 1, 3, 2))
    biases = _biases(ctx, node, q, k_t, mask_index=4, bias_index=5, past=past)
    y = merge_heads(ctx, attend(ctx, q, k_t, v_heads, _scale(node, hq), biases))
    return [y, k_heads, v_heads]


def _mha_past(ctx: ImportContext, node: NodeReader) -> Optional[tuple[Value, Value]]:
    """``(past_key, past_value)`` ``[B, N, P, h]``, or None; one without the other is refused."""
    if not node.input(6) and not node.input(7):
        return None
    if not (node.input(6) and node.input(7)):
        raise ConvertError("MultiHeadAttention needs both past_key and past_value, or neither")
    return ctx.tensor(node.input(6)), ctx.tensor(node.input(7))


def _mha_bias(ctx: ImportContext, node: NodeReader, query: Value, value: Value) -> tuple[Optional[Value], ...]:
    """The packed bias split into the Q, K and V parts (None when absent)."""
    if not node.input(3):
        return None, None, None
    d, dv = query.type.shape[2], value.type.shape[-1] if value.type.rank == 3 else None
    bias = ctx.tensor(node.input(3))
    if dv is None:
        return split_along(ctx, bias, 0, [d])[0], None, None
    return tuple(split_along(ctx, bias, 0, [d, d, dv]))


def _add(ctx: ImportContext, x: Value, bias: Optional[Value]) -> Value:
    return x if bias is None else ctx.b.emit(Op.ADD, x, bias)
