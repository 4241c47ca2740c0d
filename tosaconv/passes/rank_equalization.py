"""Rank equalization (seed 002): elementwise operands get equal ranks.

TOSA elementwise ops require every operand to have the result's rank. An
operand of lower rank is expanded with leading 1s by EXPAND_DIMS, which is
exact for any symbolic dims and decays to a static RESHAPE once bound (a static
operand gets the static RESHAPE at once). Only
a literal 1 then broadcasts; symbolic dims are checked by broadcast_check.
"""
from __future__ import annotations

from typing import Optional

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Graph, Operation, Value
from ..ir.ops import Op, Trait
from .rewrite import rewrite


def equalize_ranks(graph: Graph) -> bool:
    broadcastable = Trait.BROADCASTABLE    # (most programs have nothing to equalize: one look at each op)
    if not any(broadcastable in op.op.traits and _unequal(op) for op in graph.ops):
        return False
    return rewrite(graph, _visit)


def _unequal(op: Operation) -> bool:
    """Whether ``op``'s operands differ in rank."""
    ranks = [v.tensor_type.rank for v in op.operands]
    return bool(ranks) and min(ranks) != max(ranks)


def _visit(op: Operation, b: Builder) -> Optional[list[Value]]:
    if Trait.BROADCASTABLE not in op.op.traits or not _unequal(op):
        return None
    rank = max(v.tensor_type.rank for v in op.operands)
    operands = [_expand(b, v, rank) for v in op.operands]
    return b.create(op.op, operands, op.attrs).results


def _expand(b: Builder, v: Value, rank: int) -> Value:
    t = v.tensor_type
    extra = rank - t.rank
    if extra == 0:
        return v
    if t.is_static:
        return b.emit(Op.RESHAPE, v, attrs=A.ReshapeAttrs((1,) * extra + t.static_shape()))
    return b.emit(Op.EXPAND_DIMS, v, attrs=A.IndicesAttrs(tuple(range(extra))))
