"""numpy matmul semantics on IR values, as TOSA MATMUL (rank 3: [N,H,C] x [N,C,W]), for both importers.

A 1-D operand gains a unit M or N dim that the result drops again, and batch
dims broadcast. When B has no batch dims (a weight), A's batch folds into
rows: ``[1, batch*M, K] x [1, K, N]``. Otherwise both sides are brought to the
same batch dims (a literal 1 is tiled; two different sizes are recorded as
equal in the ledger) and flattened to one batch axis. The inner dims are
recorded as equal too. Results are reshaped back with symbolic dims spelled
out.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..ir import attrs as A
from ..ir.ops import Op
from ..symbolic.constraints import Kind
from ..symbolic.expr import product, same
from .dims import index_for, reshape

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..symbolic.expr import Dim
    from .context import LoweringContext


def matmul(ctx: LoweringContext, a: Value, b: Value) -> Value:
    """numpy matmul semantics on IR values."""
    a_vec, b_vec = a.type.rank == 1, b.type.rank == 1
    if a_vec:
        a = reshape(ctx, a, [1, a.type.shape[0]])
    if b_vec:
        b = reshape(ctx, b, [b.type.shape[0], 1])
    (*batch_a, m, k), (*batch_b, k2, n) = a.type.shape, b.type.shape
    ctx.require(Kind.EQ, k, k2, "MatMul inner dims")
    if not batch_b:
        y = fold_batch(ctx, a, b)
        batch = list(batch_a)
    else:
        batch = broadcast_batch(ctx, batch_a, batch_b)
        y = ctx.b.emit(Op.MATMUL, to_batch(ctx, a, batch), to_batch(ctx, b, batch))
    out = batch + ([] if a_vec else [m]) + ([] if b_vec else [n])
    return reshape(ctx, y, out)


def fold_batch(ctx: LoweringContext, a: Value, b: Value) -> Value:
    """B is a plain matrix: A's batch dims become rows of one [1, batch*M, K] product."""
    *batch, m, k = a.type.shape
    a3 = reshape(ctx, a, [1, product(batch + [m]), k])
    return ctx.b.emit(Op.MATMUL, a3, reshape(ctx, b, [1, *b.type.shape]))


def broadcast_batch(ctx: LoweringContext, batch_a: Sequence[Dim], batch_b: Sequence[Dim]) -> list:
    """numpy broadcasting of the batch dims; two non-1 sizes must be equal (ledger)."""
    rank = max(len(batch_a), len(batch_b))
    pa = [1] * (rank - len(batch_a)) + list(batch_a)
    pb = [1] * (rank - len(batch_b)) + list(batch_b)
    out = []
    for x, y in zip(pa, pb):
        if same(x, 1) or same(y, 1):
            out.append(y if same(x, 1) else x)
        else:
            ctx.require(Kind.EQ, x, y, "MatMul batch dims broadcast only from a literal 1")
            out.append(x)
    return out


def to_batch(ctx: LoweringContext, x: Value, batch: Sequence[Dim]) -> Value:
    """Reshape x's batch dims to the broadcast ``batch`` (tiling 1s) and flatten them into one axis."""
    *own, r, c = x.type.shape
    own = [1] * (len(batch) - len(own)) + list(own)
    x = reshape(ctx, x, own + [r, c])
    multiples = [t if same(d, 1) and not same(t, 1) else 1 for d, t in zip(own, batch)] + [1, 1]
    if any(not same(m, 1) for m in multiples):
        x = _tile(ctx, x, multiples)
    return reshape(ctx, x, [product(batch), r, c])


def _tile(ctx: LoweringContext, x: Value, multiples: Sequence[Dim]) -> Value:
    if all(isinstance(m, int) for m in multiples):
        return ctx.b.emit(Op.TILE, x, attrs=A.TileAttrs(tuple(multiples)))
    return ctx.b.emit(Op.DYN_TILE, x, *[index_for(ctx, m) for m in multiples])
