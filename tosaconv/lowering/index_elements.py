"""Int tensors whose every element is computed from shapes: recovered as Index values.

The context keeps 0-D and 1-D shape arithmetic as ShapeTensors, but exporters
also move shape-derived vectors through tensor layout ops. torch.onnx writes
``F.pad``'s amounts as ``Concat -> Reshape [-1, 2] -> Slice (step -1) ->
Transpose -> Reshape [-1] -> Cast``: the values are still dims and constants,
only rearranged. :func:`traced_shape_tensor` walks the producers of such a
tensor in the IR (CONST, DIMS_TO_TENSOR, RESHAPE, EXPAND_DIMS, COLLAPSE_DIMS,
IDENTITY, int CAST, TRANSPOSE, REVERSE, SLICE, CONCAT, TILE, GATHER with
constant indices: a reversed Slice), rearranging a
numpy object array of Index values exactly as each op rearranges data, and
returns the elements as a ShapeTensor. Anything else (an input, arithmetic
on tensor data) means the values are data, and it returns None. Tensors
larger than :data:`MAX_ELEMENTS` are data too.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

import numpy as np

from ..ir.graph import Value
from ..ir.ops import Op
from ..ir.types import IndexType
from .context import ShapeTensor

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .context import LoweringContext

MAX_ELEMENTS = 64


def traced_shape_tensor(ctx: LoweringContext, name: str) -> Optional[ShapeTensor]:
    """The tensor ``name`` as a ShapeTensor when its elements trace back to dims and constants (else None)."""
    if ctx.tensor(name).type.rank > 1:
        return None
    elems = traced_elements(ctx, name)
    return None if elems is None else ShapeTensor(elems, scalar=ctx.tensor(name).type.rank == 0)


def traced_elements(ctx: LoweringContext, name: str) -> Optional[list]:
    """The elements of the int tensor ``name`` (any rank, row-major) as Index values, when every one
    traces back to dims and constants; None when some come from tensor data."""
    elems = _elements(ctx, ctx.tensor(name), 0)
    return None if elems is None else list(elems.reshape(-1))


def cast_int_elements(ctx: LoweringContext, v: Value) -> Optional[list]:
    """The elements of the float tensor ``v`` as Index values when it is an int CAST of dims and constants
    (torch's ``arange(float(w))`` casts a dim to float before a Range); None otherwise."""
    p = v.producer
    if p is None or p.op is not Op.CAST or not p.operands[0].type.dtype.is_int:
        return None
    elems = _elements(ctx, p.operands[0], 0)
    return None if elems is None else list(elems.reshape(-1))


def _elements(ctx: LoweringContext, v: Value, depth: int) -> Optional[np.ndarray]:
    """``v``'s elements as an object array of Index values shaped like ``v``, or None."""
    t = v.type
    if depth > 32 or not t.is_static or not t.dtype.is_int or int(np.prod(t.static_shape())) > MAX_ELEMENTS:
        return None
    p = v.producer
    if p is None:
        return None
    rule = _RULES.get(p.op.name)
    if rule is None:
        return None
    ins = []
    for operand in p.operands:
        if isinstance(operand.type, IndexType):
            ins.append(operand)
            continue
        e = _elements(ctx, operand, depth + 1)
        if e is None:
            return None
        ins.append(e)
    out = rule(ctx, p, ins)
    return None if out is None else np.asarray(out, dtype=object).reshape(t.static_shape())


def _const(ctx: LoweringContext, p: Operation, ins: list[Union[Value, np.ndarray]]) -> np.ndarray:
    return np.vectorize(lambda x: ctx.index(int(x)), otypes=[object])(np.asarray(p.attrs.values))


def _dims(ctx: LoweringContext, p: Operation, ins: list[Union[Value, np.ndarray]]) -> np.ndarray:
    out = np.empty(len(ins), dtype=object)
    out[:] = ins
    return out


def _same(ctx: LoweringContext, p: Operation, ins: list[Union[Value, np.ndarray]]) -> Union[Value, np.ndarray]:
    return ins[0]


def _transpose(ctx: LoweringContext, p: Operation, ins: list[Union[Value, np.ndarray]]) -> np.ndarray:
    return np.transpose(ins[0], p.attrs.perms)


def _reverse(ctx: LoweringContext, p: Operation, ins: list[Union[Value, np.ndarray]]) -> np.ndarray:
    return np.flip(ins[0], p.attrs.axis)


def _slice(ctx: LoweringContext, p: Operation, ins: list[Union[Value, np.ndarray]]) -> np.ndarray:
    a = p.attrs
    return ins[0][tuple(slice(s, s + n) for s, n in zip(a.start, a.size))]


def _concat(ctx: LoweringContext, p: Operation, ins: list[Union[Value, np.ndarray]]) -> np.ndarray:
    return np.concatenate(ins, axis=p.attrs.axis)


def _tile(ctx: LoweringContext, p: Operation, ins: list[Union[Value, np.ndarray]]) -> np.ndarray:
    return np.tile(ins[0], p.attrs.multiples)


def _gather(ctx: LoweringContext, p: Operation, ins: list[Union[Value, np.ndarray]]) -> Optional[np.ndarray]:
    """TOSA GATHER with constant indices (a reversed or strided Slice): out[n, w, c] = values[n, idx[n, w], c]."""
    src = p.operands[1].producer
    if src is None or src.op is not Op.CONST:
        return None
    idx = np.asarray(src.attrs.values).astype(np.int64)
    values = ins[0]
    if idx.min(initial=0) < 0 or idx.max(initial=0) >= values.shape[1]:
        return None
    return np.stack([values[n][idx[n]] for n in range(values.shape[0])])


def _reshape(ctx: LoweringContext, p: Operation,
             ins: list[Union[Value, np.ndarray]]) -> Optional[Union[Value, np.ndarray]]:
    return ins[0] if len(p.operands) == 1 else None   # shape_symbols: the result shape is not static


_RULES = {"CONST": _const, "DIMS_TO_TENSOR": _dims, "RESHAPE": _reshape, "EXPAND_DIMS": _same,
          "COLLAPSE_DIMS": _same, "IDENTITY": _same, "CAST": _same, "TRANSPOSE": _transpose,
          "REVERSE": _reverse, "SLICE": _slice, "CONCAT": _concat, "TILE": _tile, "GATHER": _gather}
