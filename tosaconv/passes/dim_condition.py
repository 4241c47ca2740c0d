"""An IF whose Index condition is computed from open dims, for ``--keep-symbols``: a COND_IF.

An ONNX If on ``Shape(x)[0] > Shape(x)[1]`` imports as IF with the Index
condition ``min(max(N - M, 0), 1)``: the INDEX ops between GET_DIMs. EXT-SHAPE
has no shape → tensor operator, but each dim is turned into an int32 tensor
exactly by DIMS_TO_TENSOR (the symbolic writer counts it with TILE and
REDUCE_SUM). The INDEX ops are then repeated as int32 tensor arithmetic (ADD,
SUB, MUL, MINIMUM, MAXIMUM), the condition is ``c > 0``, and the IF becomes a
COND_IF whose branches keep their symbols. Refused, naming IF: branches that
return different types (TOSA COND_IF cannot merge them), or a condition built
with an Index op that has no exact int32 tensor form here (floordiv, mod).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Graph, Operation, Value
from ..ir.ops import Op
from ..ir.region_rules import outputs_of, same_type
from ..ir.types import IndexType
from .decay import DataDependentDim
from .while_lowering import TENSOR_OPS


def if_on_dims(op: Operation, b: Builder, operands: list[Value],
               kept_region: Callable[[Graph], Graph]) -> list[Value]:
    """IF ``op`` on an open Index condition as a COND_IF on an int32 tensor computed from the dims."""
    a = op.attrs_as(A.CondIfAttrs)
    then_t, else_t = outputs_of(a.then_graph), outputs_of(a.else_graph)
    if not all(same_type(x, y) for x, y in zip(then_t, else_t)):
        raise DataDependentDim(op, f"IF at {op.location} decides between branches that return different "
                                   f"types on an open condition ({operands[0].type}), which a TOSA COND_IF "
                                   "cannot merge")
    value = _as_tensor(op, b, operands[0], {})
    cond = b.emit(Op.GREATER, value, b.const(np.zeros(1, np.int32)))
    cond = b.emit(Op.RESHAPE, cond, attrs=A.ReshapeAttrs(()))
    then_g, else_g = kept_region(a.then_graph), kept_region(a.else_graph)
    return b.create(Op.COND_IF, [cond] + list(operands[1:]), A.CondIfAttrs(then_g, else_g)).results


def _as_tensor(op: Operation, b: Builder, v: Value, memo: dict[int, Value]) -> Value:
    """An int32 [1] tensor holding the Index value ``v`` (its INDEX ops repeated on tensors)."""
    if id(v) in memo:
        return memo[id(v)]
    p = v.producer
    if not isinstance(v.type, IndexType) or p is None:
        raise DataDependentDim(op, f"IF at {op.location}: its condition {v.type} is not computed from dims")
    if p.op in (Op.GET_DIM, Op.INDEX_CONST):
        out = b.dims_to_tensor([v]) if p.op is Op.GET_DIM else b.const(np.array([p.attrs_as(A.IndexConstAttrs).value], np.int32))
    elif p.op in TENSOR_OPS:
        tensor_op, attrs = TENSOR_OPS[p.op]
        out = b.emit(tensor_op, *[_as_tensor(op, b, x, memo) for x in p.operands], attrs=attrs)
    else:
        raise DataDependentDim(op, f"IF at {op.location}: its condition {v.type} uses {p.op.name}, which has no "
                                   "exact int32 tensor form here")
    memo[id(v)] = out
    return out
