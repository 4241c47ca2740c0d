"""Reductions both importers share: one-axis TOSA reductions chained over several axes, means, arg max/min.

A TOSA reduction reduces one axis and keeps it as 1, so a reduction over
several axes is a chain of them (axes that are a literal 1 need none). Bool
data takes TOSA's logical reductions (REDUCE_ANY for a max, REDUCE_ALL for a
min). A mean is REDUCE_SUM times 1/count: a constant when the reduced dims
are static, and otherwise the count's Index value turned into a tensor, so a
mean over a dynamic axis divides by the size the symbol is bound to; integer
sums are divided with INTDIV.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.ops import Op
from ..symbolic.expr import product, same, sub
from .dims import index_for, reshape
from .errors import ConvertError
from .typed import compare

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..ir.ops import OpDef
    from ..ir.types import TensorType
    from ..symbolic.expr import Dim
    from .context import LoweringContext

# Bool reductions (ONNX ReduceMax/ReduceMin accept bool from opset 20) are TOSA's logical ones.
_BOOL_OPS = {Op.REDUCE_MAX: Op.REDUCE_ANY, Op.REDUCE_MIN: Op.REDUCE_ALL}


def reduce_chain(ctx: LoweringContext, op: OpDef, x: Value, axes: Sequence[int]) -> Value:
    """Reduce ``x`` over each of ``axes`` with the one-axis TOSA op ``op``, keeping them as 1.

    Axes that are a literal 1 already need no op: every reduction of one element is that element.
    """
    if x.type.dtype is DType.BOOL:
        op = _BOOL_OPS.get(op, op)
    for axis in (a for a in axes if not same(x.type.shape[a], 1)):
        attrs = A.AxisNanAttrs(axis) if op in (Op.REDUCE_MAX, Op.REDUCE_MIN) else A.AxisAttrs(axis)
        x = ctx.b.emit(op, x, attrs=attrs)
    return x


def mean_over(ctx: LoweringContext, x: Value, axes: Sequence[int], divisor: Optional[Value] = None) -> Value:
    """The mean of ``x`` over ``axes``, which stay as 1s: REDUCE_SUM, then times 1/count.

    ``divisor`` is a value from :func:`mean_divisor` for the same dims, so that
    several means over one block (LayerNormalization) share one count.
    """
    total = reduce_chain(ctx, Op.REDUCE_SUM, x, axes)
    if divisor is None:
        divisor = mean_divisor(ctx, x, axes)
    if x.type.dtype.is_float:
        return ctx.b.emit(Op.MUL, total, divisor, attrs=A.MulAttrs(0))
    return ctx.b.emit(Op.INTDIV, total, divisor)


def mean_divisor(ctx: LoweringContext, x: Value, axes: Sequence[int]) -> Value:
    """What a sum over ``axes`` of x is scaled by: 1/count for floats, count for integers (INTDIV)."""
    count = product(x.type.shape[a] for a in axes)
    like = x.type
    if not like.dtype.is_float:
        return count_tensor(ctx, count, like)
    if isinstance(count, int):
        return ctx.b.scalar_like(1.0 / count, like)
    return ctx.b.emit(Op.RECIPROCAL, count_tensor(ctx, count, like))


def count_tensor(ctx: LoweringContext, count: Dim, like: TensorType) -> Value:
    """``count`` (a dim expression) as a tensor of ``like``'s dtype with every dim 1."""
    if isinstance(count, int):
        return ctx.b.scalar_like(count, like)
    t = ctx.b.dims_to_tensor([index_for(ctx, count)])
    if like.dtype is not DType.INT32:
        t = ctx.b.emit(Op.CAST, t, attrs=A.CastAttrs(like.dtype))
    return reshape(ctx, t, [1] * like.rank)


def arg_extreme(ctx: LoweringContext, x: Value, axis: int, find_min: bool, last: bool = False) -> Value:
    """INT32 indices of the first (or last) max (or min) of ``x`` along ``axis``, which is dropped.

    TOSA ARGMAX returns the first index of the maximum (the first NaN, as numpy does) of int8, int16,
    fp16 and fp32 data. It is given x for a max; for a min ``-x`` (floats, exact) or ``~x = -x - 1``
    (int8/int16: no overflow at the most negative value); int32 data becomes the int8 mask
    ``x == max(x)`` (or min). ``last`` reverses the axis and maps index i back to ``n - 1 - i``."""
    if x.type.rank == 0:
        raise ConvertError("ArgMax/ArgMin of a scalar: the input needs at least one axis")
    if last:
        x = ctx.b.emit(Op.REVERSE, x, attrs=A.AxisAttrs(axis))
    index = ctx.b.emit(Op.ARGMAX, _maximand(ctx, x, axis, find_min), attrs=A.AxisNanAttrs(axis))
    if not last:
        return index
    return ctx.b.emit(Op.SUB, count_tensor(ctx, sub(x.type.shape[axis], 1), index.type), index)


def _maximand(ctx: LoweringContext, x: Value, axis: int, find_min: bool) -> Value:
    """What ARGMAX finds the first maximum of (see :func:`arg_extreme`)."""
    dtype = x.type.dtype
    if dtype.is_float:
        return ctx.b.emit(Op.NEGATE, x, attrs=A.NegateAttrs(0, 0)) if find_min else x
    if dtype in (DType.INT8, DType.INT16):
        return ctx.b.emit(Op.BITWISE_NOT, x) if find_min else x
    if dtype is DType.INT32:
        extreme = reduce_chain(ctx, Op.REDUCE_MIN if find_min else Op.REDUCE_MAX, x, [axis])
        return ctx.b.emit(Op.CAST, compare(ctx, Op.EQUAL, x, extreme), attrs=A.CastAttrs(DType.INT8))
    raise ConvertError(f"ArgMax/ArgMin of {dtype.value} data: ONNX defines them for numbers only")
