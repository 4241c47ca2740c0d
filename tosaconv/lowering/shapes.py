"""Tensors computed from shapes, for both importers: reshapes with a -1, broadcasts to a shape, ranges.

The target shapes are lists of Index values (a :class:`~.context.ShapeTensor`'s
dims), so an entry computed from symbols stays exact: a ``-1`` entry is
resolved here by exact division (recorded in the ledger), never left for the
backend to infer; a broadcast tiles the 1s by Index values; and a range whose
bounds come from shapes is an IOTA of the count's Index value.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.ops import Op
from ..symbolic.constraints import Kind
from ..symbolic.expr import dmax, floordiv, product, same, sub
from .dims import expand_leading, index_for, reshape
from .errors import ConvertError
from .index_elements import cast_int_elements, traced_shape_tensor
from .limits import must_be_known

if TYPE_CHECKING:
    from ..ir.graph import Value
    from .context import LoweringContext

# Range's element count is (limit - start) / delta: a delta only known at run time leaves it unknown.
RANGE_DELTA = must_be_known("delta-from-data", "delta",
                            "the number of elements is (limit - start) / delta, which needs delta at import")


def reshape_with_hole(ctx: LoweringContext, x: Value, dims: list, op_name: str) -> Value:
    """RESHAPE ``x`` to Index values ``dims``, one of which may be -1 (inferred from the element count)."""
    holes = [i for i, e in enumerate(dims) if same(e.type.value, -1)]
    if len(holes) > 1:
        raise ConvertError(f"{op_name} target has more than one -1 entry")
    if holes:
        dims = list(dims)
        dims[holes[0]] = _inferred_dim(ctx, x, [d for i, d in enumerate(dims) if i != holes[0]])
    return reshape(ctx, x, dims)


def _inferred_dim(ctx: LoweringContext, x: Value, others: Sequence[Value]) -> Value:
    """The -1 entry: elements of x divided by the product of the other entries."""
    total, rest = product(x.type.shape), product(d.type.value for d in others)
    ctx.require(Kind.DIVISIBLE, total, rest, "Reshape infers a -1 entry by exact division")
    return index_for(ctx, floordiv(total, rest))


def expand(ctx: LoweringContext, x: Value, target: list) -> Value:
    """Broadcast ``x`` to the Index values ``target`` (numpy rules, leading 1s added): TILE or DYN_TILE of
    the 1s, or ``x`` op zeros(target) where a symbolic dim meets another size (broadcast checks)."""
    _check_target(target)
    rank = max(x.type.rank, len(target))
    x = expand_leading(ctx, x, rank)
    target = [ctx.b.index(1)] * (rank - len(target)) + list(target)
    pairs = list(zip(x.type.shape, target))
    if not all(same(d, 1) or same(t.type.value, 1) or same(d, t.type.value) for d, t in pairs):
        return _expand_by_broadcast(ctx, x, target)
    multiples = [t if same(d, 1) else ctx.b.index(1) for d, t in pairs]
    if all(isinstance(m.type.value, int) for m in multiples):
        reps = tuple(m.type.value for m in multiples)
        return x if all(r == 1 for r in reps) else ctx.b.emit(Op.TILE, x, attrs=A.TileAttrs(reps))
    return ctx.b.emit(Op.DYN_TILE, x, *multiples)


def _check_target(target: list) -> None:
    """Refuse a broadcast target with a static entry below 1: negative is no size, and 0 is an empty
    tensor, which TOSA cannot hold (every dim is >= 1)."""
    dims = [t.type.value for t in target]
    bad = [d for d in dims if isinstance(d, int) and d < 1]
    if bad:
        shown = [d if isinstance(d, int) else str(d) for d in dims]
        why = "a negative entry is not a size" if min(bad) < 0 else "a 0 entry makes an empty tensor, which TOSA cannot hold"
        raise ConvertError(f"broadcast target shape {shown}: {why}; give a shape whose entries are all >= 1")


def _expand_by_broadcast(ctx: LoweringContext, x: Value, target: Sequence[Value]) -> Value:
    """Expand where a symbolic dim meets another size: x op zeros(target), with broadcast checks."""
    zero = np.zeros((1,) * len(target), dtype=x.type.dtype.numpy)
    zeros = ctx.b.emit(Op.DYN_TILE, ctx.b.const(zero), *target)
    op = Op.LOGICAL_OR if x.type.dtype is DType.BOOL else Op.ADD
    return ctx.b.emit(op, x, zeros)


def arange_of(ctx: LoweringContext, start: str, limit: str, delta: str) -> Value:
    """Range of the values named ``start``, ``limit`` and ``delta``: a constant when all three are, else an
    IOTA of the count's Index value, scaled and offset (delta a constant). A start or limit computed from
    shapes is an Index value already; one computed from int tensor data (a counter carried through a Loop
    body, a Loop's final state) is read with EXTRACT_DIM, which decays when that data folds to a constant
    once the symbols are bound (the loop unrolled), and is refused at specialization otherwise. A float
    Range (delta a float constant) is the int Range of its integral bounds, CAST: its start and limit must
    be integral constants or dims cast to float (:func:`_float_bound`)."""
    names = (start, limit, delta)
    consts = [ctx.const(n) for n in names]
    if all(c is not None for c in consts):
        lo, hi, step = (c.item() for c in consts)
        return ctx.b.const(to_ir(np.arange(lo, hi, step, dtype=consts[0].dtype)))
    if consts[2] is None:
        raise RANGE_DELTA.refuse(f"Range delta '{delta}'")
    if consts[2].dtype.kind == "f":
        step = _integral(consts[2], "delta", delta)
        first, last = _float_bound(ctx, start, "start"), _float_bound(ctx, limit, "limit")
        ints = _iota_range(ctx, first, last, step)
        dtype = DType.FP16 if consts[2].dtype == np.float16 else DType.FP32
        return ctx.b.emit(Op.CAST, ints, attrs=A.CastAttrs(dtype))
    first, last = _range_bound(ctx, start, "start"), _range_bound(ctx, limit, "limit")
    return _iota_range(ctx, first, last, int(consts[2].item()))


def _iota_range(ctx: LoweringContext, first: Value, last: Value, step: int) -> Value:
    """The int32 vector ``first, first + step, ...`` below ``last`` (Index values)."""
    span = sub(last.type.value, first.type.value)
    if step == 0:
        raise ConvertError("Range with delta 0 never ends")
    n = dmax(floordiv(span + step - 1, step) if step > 0 else floordiv(-span - step - 1, -step), 0)
    iota = ctx.b.emit(Op.IOTA, index_for(ctx, n), attrs=A.IotaAttrs(DType.INT32))
    scaled = iota if step == 1 else ctx.b.emit(Op.MUL, iota, ctx.b.const(np.array([step], np.int32)),
                                                attrs=A.MulAttrs(0))
    offset = ctx.b.dims_to_tensor([first], DType.INT32)
    return ctx.b.emit(Op.ADD, scaled, offset)


def _integral(c: np.ndarray, what: str, name: str) -> int:
    """A float Range's constant ``start``/``limit``/``delta`` as an int, refused unless it holds one whole
    number (the count of a float Range over a symbolic bound is exact only for whole numbers)."""
    if c.size != 1:
        raise ConvertError(f"Range {what} '{name}' must hold one element, it holds {c.size}")
    x = float(c.reshape(-1)[0])
    if not np.isfinite(x) or x != int(x):
        raise ConvertError(f"Range {what} '{name}' is {x}: a float Range whose length depends on shapes needs "
                           "whole-number constants for start and delta, so that its length is exact")
    return int(x)


def _float_bound(ctx: LoweringContext, name: str, what: str) -> Value:
    """A float Range's ``start`` or ``limit`` as one Index value: a whole-number constant, or dims and
    constants CAST to float."""
    c = ctx.const(name)
    if c is not None:
        return ctx.index(_integral(c, what, name))
    elems = cast_int_elements(ctx, ctx.tensor(name))
    if elems is None:
        raise ConvertError(f"Range {what} '{name}' is float data computed when the model runs; tosaconv sizes "
                           "a float Range only from constants and tensor dims cast to float")
    if len(elems) != 1:
        raise ConvertError(f"Range {what} '{name}' must hold one element, it holds {len(elems)}")
    return elems[0]


def _range_bound(ctx: LoweringContext, name: str, what: str) -> Value:
    """Range's ``start`` or ``limit`` as one Index value (from shapes, or read from int data)."""
    st = ctx.shape_tensor(name) or traced_shape_tensor(ctx, name)
    if st is None:
        t = ctx.tensor(name)
        if not t.type.dtype.is_int:
            raise ConvertError(f"Range {what} '{name}' is {t.type.dtype.name} data computed when the model runs; "
                               "tosaconv needs an int start and limit to size the result")
        st = ctx.dims(name)
    if len(st.dims) != 1:
        raise ConvertError(f"Range {what} '{name}' must hold one element, it holds {len(st.dims)}")
    return st.dims[0]


def to_ir(arr: np.ndarray) -> np.ndarray:
    """int64 and float64 arrays in the types TOSA has (int32, float32)."""
    if arr.dtype == np.int64:
        return arr.astype(np.int32)
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    return arr
