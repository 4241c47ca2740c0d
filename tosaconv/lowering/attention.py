"""Scaled dot-product attention on IR values, for fused attention ops of either importer.

Queries, keys and values come in per-head form: Q ``[B, N, S, h]``, K
transposed ``[B, N, h, T]``, V ``[B, N, T, hv]``. :func:`attend` computes
``softmax(scale * Q K + biases) V`` over the last axis with TOSA MATMUL (the
numpy-style :func:`.matmul.matmul`, which folds B and N into MATMUL's one
batch axis), the biases being additive ``[B|1, N|1, S|1, T]`` terms (masks
already turned into large negative values). The softmax is the numerically
stable one: subtract the row max, EXP, REDUCE_SUM, RECIPROCAL, MUL.
:func:`split_heads` and :func:`merge_heads` move between ``[B, L, N*h]`` and
the per-head layouts with RESHAPE and TRANSPOSE, spelling symbolic B and L out.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..ir import attrs as A
from ..ir.ops import Op
from ..symbolic.expr import floordiv
from .dims import reshape
from .errors import ConvertError
from .index_math import transpose
from .matmul import matmul
from .reduce import reduce_chain

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..symbolic.expr import Dim
    from .context import LoweringContext


def split_heads(ctx: LoweringContext, x: Value, heads: int, head_size: Dim) -> Value:
    """``[B, L, heads*head_size]`` as ``[B, heads, L, head_size]``."""
    b, length, _ = x.type.shape
    return transpose(ctx, reshape(ctx, x, [b, length, heads, head_size]), (0, 2, 1, 3))


def merge_heads(ctx: LoweringContext, y: Value) -> Value:
    """``[B, N, S, h]`` as ``[B, S, N*h]``."""
    b, n, s, h = y.type.shape
    return reshape(ctx, transpose(ctx, y, (0, 2, 1, 3)), [b, s, n * h])


def head_size(total: Dim, heads: int, what: str) -> Dim:
    """``total // heads`` for a static hidden size that must divide into the heads."""
    if not isinstance(total, int):
        return floordiv(total, heads)
    if total % heads:
        raise ConvertError(f"{what} {total} does not divide into {heads} heads")
    return total // heads


def softmax_last(ctx: LoweringContext, x: Value) -> Value:
    axis = [x.type.rank - 1]
    e = ctx.b.emit(Op.EXP, ctx.b.emit(Op.SUB, x, reduce_chain(ctx, Op.REDUCE_MAX, x, axis)))
    total = reduce_chain(ctx, Op.REDUCE_SUM, e, axis)
    return ctx.b.emit(Op.MUL, e, ctx.b.emit(Op.RECIPROCAL, total), attrs=A.MulAttrs(0))


def attend(ctx: LoweringContext, q: Value, k_t: Value, v: Value, scale: float, biases: Sequence[Value] = ()) -> Value:
    """``softmax(scale * q @ k_t + sum(biases)) @ v`` (see the module docstring for the layouts)."""
    scores = matmul(ctx, q, k_t)
    scores = ctx.b.emit(Op.MUL, scores, ctx.b.scalar_like(scale, scores.type), attrs=A.MulAttrs(0))
    for bias in biases:
        scores = ctx.b.emit(Op.ADD, scores, bias)
    return matmul(ctx, softmax_last(ctx, scores), v)
