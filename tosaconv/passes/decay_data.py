"""Decay rules of data-dependent ops whose result *size* comes from tensor data.

NONZERO's column count is a symbol that is Exact (the true count) and
data-dependent, bounded by the input's size. Binding the input symbols makes
it static when the input itself became a constant (computed from shapes and
folded during specialization); the rule then computes the coordinates, binds
the count symbol and leaves a CONST. A user may also bind the count as an
*assumption* (``--bind nz.1=K``): the rule then computes the coordinates of
the first K non-zeros with static TOSA ops (a prefix count, a one-hot by rank,
ARGMAX, and INTDIV for the coordinates) and records the assumption on the
static program, so the numpy run checks it (E-ASSUMPTION, exit 4); the
static ``.tosa`` itself cannot check it. Otherwise the count is only known
when the model runs, and specialization fails with that reason.
"""
from __future__ import annotations

import numpy as np

from ..diagnostics.assumption import assumption_error
from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.builder import Builder
from ..ir.graph import Assumption, Operation, Value, describe_value
from ..ir.ops import Op
from ..lowering.limits import SIZE_FROM_DATA
from .decay import ANY, DataDependentDim, decays


@decays(Op.NONZERO, needs=ANY)   # the count is what it produces; its input is static by now
def decay_nonzero(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    src, count = operands[0], op.attrs_as(A.NonZeroAttrs).count
    if src.producer is None or src.producer.op is not Op.CONST:
        if count in env:
            return [_assumed_nonzero(op, src, env[count], b)]
        raise DataDependentDim(op, f"{op.location}: the count of non-zeros ('{count}') is only known "
                                   f"when the model runs, because its input ({describe_value(src)}) depends on tensor data; "
                                   f"the output size cannot be made static unless you assume it (--bind {count}=K, "
                                   "checked when tosaconv runs the program)", SIZE_FROM_DATA)
    coords = np.array(np.nonzero(np.asarray(src.producer.attrs_as(A.ConstAttrs).values)), dtype=np.int32)
    if coords.shape[1] == 0:
        raise DataDependentDim(op, f"{op.location}: NonZero finds no non-zero elements after binding; its "
                                   "output would have an empty dim, which TOSA does not allow")
    if count in env and env[count] != coords.shape[1]:
        raise assumption_error(count, env[count], coords.shape[1], op.location, describe_value(src))
    env[count] = int(coords.shape[1])
    return [b.const(coords)]


def _assumed_nonzero(op: Operation, src: Value, k: int, b: Builder) -> Value:
    """The [rank, k] int32 coordinates of the first ``k`` non-zeros of static ``src``, in static TOSA."""
    shape = list(src.tensor_type.static_shape())
    n = int(np.prod(shape))
    mask = b.emit(Op.CAST, _nonzero_mask(src, b), attrs=A.CastAttrs(DType.INT32))
    counts = _prefix_sum(b.emit(Op.RESHAPE, mask, attrs=A.ReshapeAttrs((1, n))), n, b)
    ranks = b.const(np.arange(1, k + 1, dtype=np.int32).reshape(k, 1))
    one_hot = b.emit(Op.CAST, b.emit(Op.EQUAL, counts, ranks), attrs=A.CastAttrs(DType.INT8))
    flat = b.emit(Op.ARGMAX, one_hot, attrs=A.AxisNanAttrs(1))      # first position of rank j+1: the j-th non-zero
    coords = b.emit(Op.CONCAT, *_unravel(b.emit(Op.RESHAPE, flat, attrs=A.ReshapeAttrs((1, k))), shape, b),
                    attrs=A.AxisAttrs(0)) if len(shape) > 1 else b.emit(Op.RESHAPE, flat, attrs=A.ReshapeAttrs((1, k)))
    b.graph.assumptions.append(Assumption(op.attrs_as(A.NonZeroAttrs).count, k, src.name, op.location,
                                          shown=describe_value(src)))
    return coords


def _nonzero_mask(src: Value, b: Builder) -> Value:
    """BOOL ``src != 0`` (``src`` itself when it is BOOL)."""
    if src.tensor_type.dtype is DType.BOOL:
        return src
    zero = b.scalar_like(0, src.tensor_type)
    return b.emit(Op.LOGICAL_NOT, b.emit(Op.EQUAL, src, zero))


def _prefix_sum(x: Value, n: int, b: Builder) -> Value:
    """Inclusive prefix sums along axis 1 of int32 ``x`` [1, n]: log2(n) shifted adds (Hillis-Steele)."""
    step = 1
    while step < n:
        head = b.const(np.zeros((1, step), dtype=np.int32))
        tail = b.emit(Op.SLICE, x, attrs=A.SliceAttrs((0, 0), (1, n - step)))
        x = b.emit(Op.ADD, x, b.emit(Op.CONCAT, head, tail, attrs=A.AxisAttrs(1)))
        step *= 2
    return x


def _unravel(flat: Value, shape: list[int], b: Builder) -> list[Value]:
    """One [1, k] int32 row per axis: the coordinates of row-major flat positions ``flat`` [1, k]."""
    rows = []
    for axis, size in enumerate(shape):
        stride = int(np.prod(shape[axis + 1:]))
        q = flat if stride == 1 else b.emit(Op.INTDIV, flat, _i32(stride, b))
        if axis > 0:
            wraps = b.emit(Op.MUL, b.emit(Op.INTDIV, q, _i32(size, b)), _i32(size, b), attrs=A.MulAttrs(0))
            q = b.emit(Op.SUB, q, wraps)
        rows.append(q)
    return rows


def _i32(value: int, b: Builder) -> Value:
    return b.const(np.full((1, 1), value, dtype=np.int32))
