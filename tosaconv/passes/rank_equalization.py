"""Rank equalization (seed 002): elementwise operands get equal ranks.

TOSA elementwise ops require every operand to have the result's rank. An
operand of lower rank is expanded with leading 1s by EXPAND_DIMS, which is
exact for any symbolic dims and decays to a static RESHAPE once bound (a static
operand gets the static RESHAPE at once). Only
a literal 1 then broadcasts; symbolic dims are checked by broadcast_check.
"""
from __future__ import annotations

from ..ir import attrs as A
from ..ir.ops import Op, Trait
from .rewrite import rewrite


def equalize_ranks(graph) -> bool:
    return rewrite(graph, _visit)


def _visit(op, b):
    if not op.op.has(Trait.BROADCASTABLE):
        return None
    rank = max(v.type.rank for v in op.operands)
    if all(v.type.rank == rank for v in op.operands):
        return None
    operands = [_expand(b, v, rank) for v in op.operands]
    return b.create(op.op, operands, op.attrs).results


def _expand(b, v, rank):
    extra = rank - v.type.rank
    if extra == 0:
        return v
    if v.type.is_static:
        return b.emit(Op.RESHAPE, v, attrs=A.ReshapeAttrs((1,) * extra + tuple(v.type.shape)))
    return b.emit(Op.EXPAND_DIMS, v, attrs=A.IndicesAttrs(tuple(range(extra))))
