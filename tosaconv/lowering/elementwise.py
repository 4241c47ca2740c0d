"""Elementwise compositions both importers share: binary operands, division,
square root, truncation, hard sigmoid, shape arithmetic.

TOSA has RSQRT but no SQRT (``sqrt = RECIPROCAL(RSQRT(x))``), and its CAST
from float to int rounds to nearest even where ONNX's Cast and TFLite's CAST
truncate toward zero (:func:`truncate` floors or ceils by sign first).
Arithmetic whose operands are shape tensors (``Shape -> Mul -> Reshape``,
TFLite's ``SHAPE -> MUL -> RESHAPE``) stays index arithmetic on Index values
(:func:`index_arith`), so RESHAPE downstream keeps symbolic dims.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Protocol, Sequence

from ..ir import attrs as A
from ..ir.ops import Op
from .context import ShapeTensor
from .dims import index_op
from .errors import ConvertError
from .typed import int32_op, mul

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..ir.ops import OpDef
    from .context import LoweringContext


class _HasInputs(Protocol):
    """A node of either importer: the names of its inputs."""

    @property
    def inputs(self) -> Sequence[str]: ...


def binary_operands(ctx: LoweringContext, node: _HasInputs) -> tuple:
    """The tensor values of a binary op's two inputs (``node.inputs[0]`` and ``[1]``)."""
    return ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1])


def divide(ctx: LoweringContext, a: Value, b: Value) -> Value:
    """``a / b``: float is MUL by RECIPROCAL (TOSA has no float DIV); integers are INTDIV (truncating)."""
    if a.type.dtype.is_float:
        return mul(ctx, a, ctx.b.emit(Op.RECIPROCAL, b))
    return int32_op(ctx, Op.INTDIV, a, b)


def sqrt(ctx: LoweringContext, x: Value) -> Value:
    return ctx.b.emit(Op.RECIPROCAL, ctx.b.emit(Op.RSQRT, x))


def truncate(ctx: LoweringContext, x: Value) -> Value:
    """Float->int casts of ONNX and TFLite truncate toward zero; TOSA CAST rounds to nearest even."""
    positive = ctx.b.emit(Op.GREATER_EQUAL, x, ctx.b.scalar_like(0, x.type))
    return ctx.b.emit(Op.SELECT, positive, ctx.b.emit(Op.FLOOR, x), ctx.b.emit(Op.CEIL, x))


def hard_sigmoid(ctx: LoweringContext, x: Value, alpha: float, beta: float) -> Value:
    """``max(0, min(1, alpha * x + beta))``."""
    scaled = mul(ctx, x, ctx.b.scalar_like(alpha, x.type))
    shifted = ctx.b.emit(Op.ADD, scaled, ctx.b.scalar_like(beta, x.type))
    return ctx.b.emit(Op.CLAMP, shifted, attrs=A.ClampAttrs(0.0, 1.0))


def index_arith(ctx: LoweringContext, a: str, b: str, index_op_def: OpDef) -> Optional[ShapeTensor]:
    """The values named ``a`` and ``b`` combined by ``index_op_def`` (an INDEX_* op) when either is a
    ShapeTensor and both are shape-like; None when this is tensor math."""
    if not any(isinstance(ctx.values.get(n), ShapeTensor) for n in (a, b)):
        return None
    sts = [ctx.shape_tensor(n) for n in (a, b)]
    return None if any(s is None for s in sts) else index_elementwise(ctx, index_op_def, *sts)


def index_elementwise(ctx: LoweringContext, op: OpDef, a: ShapeTensor, b: ShapeTensor) -> ShapeTensor:
    """``op`` per element of two shape tensors; a one-element operand broadcasts."""
    n = max(len(a.dims), len(b.dims))
    if len(a.dims) not in (1, n) or len(b.dims) not in (1, n):
        raise ConvertError("shape arithmetic on vectors of different lengths")
    pick = lambda st, i: st.dims[0] if len(st.dims) == 1 else st.dims[i]  # noqa: E731
    return ShapeTensor([index_op(ctx, op, pick(a, i), pick(b, i)) for i in range(n)],
                       scalar=a.scalar and b.scalar)
