"""Constant folding: ops whose operands are all constants become constants.

Tensor ops over CONST operands are evaluated with the interpreter's own
kernels (so folding can never disagree with a run) and replaced by a CONST;
shape helper ops whose Index value is already a plain int become
INDEX_CONST. Results larger than ``MAX_FOLD_ELEMENTS`` are left alone so a
TILE of a small constant does not bloat the file. An EXTRACT_DIM of a
constant is left to specialization, whose decay rule binds the symbol it
defines (a RANGE limit computed from constant tensors sizes later types).
A CAST that widens an fp16 or int8 weight to float stays a run-time CAST
(:mod:`tosaconv.lowering.weight_casts`; ``--fp32-weights`` folds it), and a
layout op on such a weight (TRANSPOSE, RESHAPE, SLICE, REVERSE, CONCAT) folds
on the narrow constant, with the CAST moved after it.
"""
from __future__ import annotations

import math

from typing import Optional

import numpy as np

from ..interpreter.registry import KernelContext, KernelValue, kernel_for
from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Graph, Operation, Value
from ..ir.ops import Op, Trait
from ..ir.types import IndexType, TensorType
from ..lowering.weight_casts import compressed, keeps_cast
from .rewrite import rewrite

MAX_FOLD_ELEMENTS = 1 << 22
# layout ops that move a compressed weight's elements without growing it: they fold on the narrow constant
_THROUGH_CAST = frozenset({Op.TRANSPOSE, Op.RESHAPE, Op.SLICE, Op.REVERSE, Op.CONCAT, Op.IDENTITY})


def fold_constants(graph: Graph) -> bool:
    return rewrite(graph, fold_op)


def fold_op(op: Operation, b: Builder) -> Optional[list[Value]]:
    """Replacement constants for ``op`` when it folds, else None (also used op by op by specialize)."""
    traits = op.op.traits   # (read directly: this runs for every op, several times)
    if Trait.CONSTANT in traits or Trait.PURE not in traits or (op.op is Op.CAST and keeps_cast(op)):
        return None
    if op.op in _THROUGH_CAST and op.operands and not _is_const(op.operands[0]):
        return _fold_through_cast(op, b)
    results = op.results
    if len(results) != 1 or type(results[0].type) is not TensorType:   # (one tensor, the common case: neither)
        t = results[0].type if len(results) == 1 else None
        if isinstance(t, IndexType) and isinstance(t.value, int):
            return [b.index(t.value)]
        if any(isinstance(r.type, IndexType) for r in results):
            return None   # an EXTRACT_DIM of folded data: its symbol is in other values' types; decay binds it
    if not op.operands or not all(map(_is_const, op.operands)):
        return None
    if any(isinstance(r.type, TensorType) and not _small(r.type) for r in op.results):
        return None
    kernel = kernel_for(op.op)
    if kernel is None:
        return None
    args = [_const_value(v) for v in op.operands]
    with np.errstate(all="ignore"):   # folding computes what the interpreter would: IEEE floats, no warnings
        out = kernel(op, args, KernelContext())
        return [_as_const(b, r, value) for r, value in zip(op.results, out)]


def _is_const(v: Value) -> bool:
    return v.producer is not None and v.producer.op.has(Trait.CONSTANT)


def _const_value(v: Value) -> KernelValue:
    assert v.producer is not None   # _is_const(v)
    if v.producer.op is Op.CONST:
        return v.producer.attrs_as(A.ConstAttrs).values
    return v.producer.attrs_as(A.IndexConstAttrs).value


def _small(t: TensorType) -> bool:
    # math.prod: exact, where an int64 product of huge dims could wrap round to a small number
    return t.is_static and math.prod(t.static_shape()) <= MAX_FOLD_ELEMENTS


def _as_const(b: Builder, result: Value, value: KernelValue) -> Value:
    t = result.type
    if isinstance(t, IndexType):
        return b.index(int(value))
    arr = np.asarray(value, dtype=t.dtype.numpy).reshape(t.static_shape())
    return b.emit(Op.CONST, attrs=A.ConstAttrs(arr), name=result.name)


def _fold_through_cast(op: Operation, b: Builder) -> Optional[list[Value]]:
    """A layout op on compressed weights (each operand a kept CAST of a narrow CONST of one type), folded on
    the narrow constants: ``CAST(layout(narrow))``, so the weight stays narrow in the file. Else None."""
    found = [compressed(v.producer) if v.producer is not None else None for v in op.operands]
    narrow = [n for n in found if n is not None]
    if not narrow or len(narrow) < len(found) or len({n.tensor_type.dtype for n in narrow}) != 1:
        return None
    kernel = kernel_for(op.op)
    if kernel is None or len(op.results) != 1 or not _small(op.result.tensor_type):
        return None
    with np.errstate(all="ignore"):
        (out,) = kernel(op, [_const_value(n) for n in narrow], KernelContext())
    arr = np.asarray(out, dtype=narrow[0].tensor_type.dtype.numpy).reshape(op.result.tensor_type.static_shape())
    c = b.emit(Op.CONST, attrs=A.ConstAttrs(arr))
    return [b.emit(Op.CAST, c, attrs=A.CastAttrs(op.result.type.dtype), name=op.result.name)]
