"""Converters for ONNX MatMul and Gemm to TOSA MATMUL (rank 3: [N,H,C] x [N,C,W]).

MatMul follows numpy (:func:`tosaconv.lowering.matmul.matmul`): a 1-D operand gains a unit M or N dim that the result
drops again, and batch dims broadcast. When B has no batch dims (a weight),
A's batch folds into rows: ``[1, batch*M, K] x [1, K, N]``. Otherwise both
sides are brought to the same batch dims (a literal 1 is tiled; two different
sizes are recorded as equal in the ledger) and flattened to one batch axis.
The inner dims are recorded as equal too. Results are reshaped back with
symbolic dims spelled out. Gemm is MATMUL on the (transposed) operands, then
``alpha`` and ``beta * C``, folded into constants where they are known.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.dims import reshape
from ....lowering.matmul import matmul
from ....symbolic.constraints import Kind
from ....lowering.limits import Limit, LimitKind
from ..registry import converter, publish

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader


# TOSA MATMUL multiplies int8/int16 (with zero points: MatMulInteger, QLinearMatMul) or float operands.
INT_MATMUL = Limit("int-data", LimitKind.DTYPE, "A and B", ("an integer type",),
                   "TOSA MATMUL takes int8/int16 (quantized) or float operands",
                   "compute in float, or quantize to 8 bits (MatMulInteger)")
publish("MatMul", INT_MATMUL)
publish("Gemm", INT_MATMUL)


def _check_float(*values) -> None:
    for v in values:
        if not v.type.dtype.is_float:
            raise INT_MATMUL.refuse(f"operand of type {v.type.dtype.value}")


@converter("MatMul", since=1)
def convert_matmul(ctx: ImportContext, node: NodeReader) -> Converted:
    a, b = ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1])
    _check_float(a, b)
    return matmul(ctx, a, b)


# -- Gemm ------------------------------------------------------------------------------

@converter("Gemm", since=1)
def convert_gemm(ctx: ImportContext, node: NodeReader) -> Converted:
    alpha = node.attr("alpha")
    a = _operand(ctx, node.inputs[0], node.attr("transA"))
    b = _operand(ctx, node.inputs[1], node.attr("transB"), scale=alpha)
    _check_float(a, b)
    ctx.require(Kind.EQ, a.type.shape[-1], b.type.shape[-2], "Gemm inner dims")
    y = ctx.b.emit(Op.MATMUL, _batched(ctx, a), _batched(ctx, b))
    y = reshape(ctx, y, list(y.type.shape[1:]))
    if alpha != 1.0 and ctx.const(node.inputs[1]) is None:
        y = _scale(ctx, y, alpha)
    c = _bias(ctx, node, y)
    return y if c is None else ctx.b.emit(Op.ADD, y, c)


def _operand(ctx: ImportContext, name: str, transpose: int, scale: float = 1.0) -> Value:
    """A Gemm operand, transposed if asked; a constant is transposed, scaled and given MATMUL's batch dim in
    numpy, once for every Gemm that reads it (a RESHAPE per use would fold into a copy per use)."""
    c = ctx.const(name)
    if c is not None:
        c = c.astype(np.float32) if c.dtype == np.float64 else c
        def make() -> np.ndarray:
            t = (c.T if transpose else c)[None]   # a view: the emitter writes it in C order, copying once
            return t if scale == 1.0 else np.ascontiguousarray(t * np.asarray(scale, dtype=c.dtype))
        return ctx.derived_const(("Gemm operand", name, bool(transpose), float(scale)), make)
    v = ctx.tensor(name)
    return ctx.b.emit(Op.TRANSPOSE, v, attrs=A.TransposeAttrs((1, 0))) if transpose else v


def _batched(ctx: ImportContext, v: Value) -> Value:
    """A 2-D Gemm operand as MATMUL's [1, rows, cols] (constants come that way already)."""
    return v if v.type.rank == 3 else reshape(ctx, v, [1, *v.type.shape])


def _scale(ctx: ImportContext, y: Value, factor: float) -> Value:
    k = ctx.b.const(np.full((1, 1), factor, dtype=y.type.dtype.numpy))
    return ctx.b.emit(Op.MUL, y, k, attrs=A.MulAttrs(0))


def _bias(ctx: ImportContext, node: NodeReader, y: Value) -> Optional[Value]:
    """beta * C with C brought to rank 2 (it broadcasts to [M, N]); None when C is absent."""
    name, beta = node.input(2), node.attr("beta")
    if name is None or beta == 0.0:
        return None
    c = ctx.const(name)
    if c is not None:
        dtype = y.type.dtype.numpy
        return ctx.derived_const(("Gemm bias", name, float(beta), np.dtype(dtype).str), lambda: (
            c.astype(dtype) * np.asarray(beta, dtype=dtype)).reshape((1,) * (2 - c.ndim) + c.shape))
    v = ctx.tensor(name)
    v = reshape(ctx, v, [1] * (2 - v.type.rank) + list(v.type.shape))
    return v if beta == 1.0 else _scale(ctx, v, beta)
