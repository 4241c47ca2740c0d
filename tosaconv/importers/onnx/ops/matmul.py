"""Converters for ONNX MatMul and Gemm to TOSA MATMUL (rank 3: [N,H,C] x [N,C,W]).

MatMul follows numpy: a 1-D operand gains a unit M or N dim that the result
drops again, and batch dims broadcast. When B has no batch dims (a weight),
A's batch folds into rows: ``[1, batch*M, K] x [1, K, N]``. Otherwise both
sides are brought to the same batch dims (a literal 1 is tiled; two different
sizes are recorded as equal in the ledger) and flattened to one batch axis.
The inner dims are recorded as equal too. Results are reshaped back with
symbolic dims spelled out. Gemm is MATMUL on the (transposed) operands, then
``alpha`` and ``beta * C``, folded into constants where they are known.
"""
from __future__ import annotations

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....symbolic.constraints import Kind
from ....symbolic.expr import product, same
from ..reader import ConvertError
from ..registry import converter
from ....lowering.dims import index_for, reshape


def _check_float(*values):
    for v in values:
        if not v.type.dtype.is_float:
            raise ConvertError(f"MatMul on {v.type.dtype.value} data is not supported: TOSA MATMUL takes "
                               "int8/int16 (quantized) or float operands")


@converter("MatMul", since=1)
def convert_matmul(ctx, node):
    a, b = ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1])
    _check_float(a, b)
    return matmul(ctx, a, b)


def matmul(ctx, a, b):
    """numpy matmul semantics on IR values."""
    a_vec, b_vec = a.type.rank == 1, b.type.rank == 1
    if a_vec:
        a = reshape(ctx, a, [1, a.type.shape[0]])
    if b_vec:
        b = reshape(ctx, b, [b.type.shape[0], 1])
    (*batch_a, m, k), (*batch_b, k2, n) = a.type.shape, b.type.shape
    ctx.require(Kind.EQ, k, k2, "MatMul inner dims")
    if not batch_b:
        y = _fold_batch(ctx, a, b)
        batch = list(batch_a)
    else:
        batch = _broadcast_batch(ctx, batch_a, batch_b)
        y = ctx.b.emit(Op.MATMUL, _to_batch(ctx, a, batch), _to_batch(ctx, b, batch))
    out = batch + ([] if a_vec else [m]) + ([] if b_vec else [n])
    return reshape(ctx, y, out)


def _fold_batch(ctx, a, b):
    """B is a plain matrix: A's batch dims become rows of one [1, batch*M, K] product."""
    *batch, m, k = a.type.shape
    a3 = reshape(ctx, a, [1, product(batch + [m]), k])
    return ctx.b.emit(Op.MATMUL, a3, reshape(ctx, b, [1, *b.type.shape]))


def _broadcast_batch(ctx, batch_a, batch_b) -> list:
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


def _to_batch(ctx, x, batch):
    """Reshape x's batch dims to the broadcast ``batch`` (tiling 1s) and flatten them into one axis."""
    *own, r, c = x.type.shape
    own = [1] * (len(batch) - len(own)) + list(own)
    x = reshape(ctx, x, own + [r, c])
    multiples = [t if same(d, 1) and not same(t, 1) else 1 for d, t in zip(own, batch)] + [1, 1]
    if any(not same(m, 1) for m in multiples):
        x = _tile(ctx, x, multiples)
    return reshape(ctx, x, [product(batch), r, c])


def _tile(ctx, x, multiples):
    if all(isinstance(m, int) for m in multiples):
        return ctx.b.emit(Op.TILE, x, attrs=A.TileAttrs(tuple(multiples)))
    return ctx.b.emit(Op.DYN_TILE, x, *[index_for(ctx, m) for m in multiples])


# -- Gemm ------------------------------------------------------------------------------

@converter("Gemm", since=1)
def convert_gemm(ctx, node):
    alpha = node.attr("alpha")
    a = _operand(ctx, node.inputs[0], node.attr("transA"))
    b = _operand(ctx, node.inputs[1], node.attr("transB"), scale=alpha)
    _check_float(a, b)
    ctx.require(Kind.EQ, a.type.shape[1], b.type.shape[0], "Gemm inner dims")
    y = ctx.b.emit(Op.MATMUL, reshape(ctx, a, [1, *a.type.shape]), reshape(ctx, b, [1, *b.type.shape]))
    y = reshape(ctx, y, list(y.type.shape[1:]))
    if alpha != 1.0 and ctx.const(node.inputs[1]) is None:
        y = _scale(ctx, y, alpha)
    c = _bias(ctx, node, y)
    return y if c is None else ctx.b.emit(Op.ADD, y, c)


def _operand(ctx, name, transpose: int, scale: float = 1.0):
    """A Gemm operand, transposed if asked; a constant is transposed and scaled in numpy."""
    c = ctx.const(name)
    if c is not None:
        c = c.astype(np.float32) if c.dtype == np.float64 else c
        return ctx.b.const(np.ascontiguousarray((c.T if transpose else c) * np.asarray(scale, dtype=c.dtype)))
    v = ctx.tensor(name)
    return ctx.b.emit(Op.TRANSPOSE, v, attrs=A.TransposeAttrs((1, 0))) if transpose else v


def _scale(ctx, y, factor: float):
    k = ctx.b.const(np.full((1, 1), factor, dtype=y.type.dtype.numpy))
    return ctx.b.emit(Op.MUL, y, k, attrs=A.MulAttrs(0))


def _bias(ctx, node, y):
    """beta * C with C brought to rank 2 (it broadcasts to [M, N]); None when C is absent."""
    name, beta = node.input(2), node.attr("beta")
    if name is None or beta == 0.0:
        return None
    c = ctx.const(name)
    if c is not None:
        c = (c.astype(y.type.dtype.numpy) * np.asarray(beta, dtype=y.type.dtype.numpy))
        return ctx.b.const(c.reshape((1,) * (2 - c.ndim) + c.shape))
    v = ctx.tensor(name)
    v = reshape(ctx, v, [1] * (2 - v.type.rank) + list(v.type.shape))
    return v if beta == 1.0 else _scale(ctx, v, beta)
