"""Layout cleanup: sink TRANSPOSEs through elementwise ops and cancel pairs.

Converters for NCHW ops (Conv, pools, Resize) wrap each TOSA NHWC op in a
transpose pair, locally. This pass composes back-to-back transposes (a pair
that cancels disappears) and moves a transpose below an elementwise op whose
other operands are the same transpose or constants (constants are permuted
at compile time; per-channel RESCALE is axis-dependent and stays put), so ``conv -> relu -> conv`` keeps no transposes between the
convolutions.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Graph, Operation, Value
from ..ir.ops import Op, Trait
from .dce import eliminate_dead_code
from .rewrite import rewrite

MAX_ROUNDS = 32


def cancel_transposes(graph: Graph) -> bool:
    if all(op.op is not Op.TRANSPOSE for op in graph.ops):
        return False      # both rewrites start from a TRANSPOSE: without one, a walk would change nothing
    changed = False
    for _ in range(MAX_ROUNDS):
        if not rewrite(graph, _visit):
            break
        changed = True
        eliminate_dead_code(graph)
    return changed


def _perm_of(v: Value) -> Optional[tuple[int, ...]]:
    p = v.producer
    return p.attrs_as(A.TransposeAttrs).perms if p is not None and p.op is Op.TRANSPOSE else None


def _visit(op: Operation, b: Builder) -> Optional[list[Value]]:
    if op.op is Op.TRANSPOSE:
        return _compose(op, b)
    traits = op.op.traits
    if Trait.ELEMENTWISE in traits and Trait.BROADCASTABLE in traits and not _axis_dependent(op) \
            and any(v.producer is not None and v.producer.op is Op.TRANSPOSE for v in op.operands):
        return _sink(op, b)      # (an op that reads no transpose has none to sink: _sink would say so)
    return None


def _axis_dependent(op: Operation) -> bool:
    """A per-channel RESCALE applies its i-th multiplier along the last axis: moving a
    transpose across it would pair values with the wrong channel's scale."""
    return bool(getattr(op.attrs, "per_channel", False))


def _compose(op: Operation, b: Builder) -> Optional[list[Value]]:
    inner, producer = _perm_of(op.operands[0]), op.operands[0].producer
    if inner is None or producer is None:
        return None
    perm = tuple(inner[p] for p in op.attrs_as(A.TransposeAttrs).perms)
    src = producer.operands[0]
    if perm == tuple(range(len(perm))):
        return [src]
    return [b.emit(Op.TRANSPOSE, src, attrs=A.TransposeAttrs(perm))]


def _sink(op: Operation, b: Builder) -> Optional[list[Value]]:
    transposes = {_transpose_attrs(v) for v in op.operands if v.producer is None or v.producer.op is not Op.CONST}
    if len(transposes) != 1 or None in transposes:
        return None
    attrs = transposes.pop()
    assert attrs is not None   # None was refused above
    inverse = _inverse(attrs.perms)
    operands = [_undo(b, v, inverse) for v in op.operands]
    inner = b.create(op.op, operands, op.attrs).result
    return [b.emit(Op.TRANSPOSE, inner, attrs=attrs)]


def _transpose_attrs(v: Value) -> Optional[A.TransposeAttrs]:
    """The attributes of the TRANSPOSE that makes ``v`` (None if another op makes it): the builder interns
    them, so equal permutations are one object, and the sunk transpose is made with the very object."""
    p = v.producer
    return p.attrs_as(A.TransposeAttrs) if p is not None and p.op is Op.TRANSPOSE else None


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation that undoes ``perm`` (numpy's argsort of it, without numpy's per-call cost)."""
    known = _INVERSES.get(perm)
    if known is None:
        inverse = [0] * len(perm)
        for i, p in enumerate(perm):
            inverse[p] = i
        if len(_INVERSES) > 1000:
            _INVERSES.clear()
        known = _INVERSES[perm] = tuple(inverse)
    return known


_INVERSES: dict[tuple[int, ...], tuple[int, ...]] = {}   # the inverses of the permutations seen


def _undo(b: Builder, v: Value, inverse: tuple[int, ...]) -> Value:
    p = v.producer
    assert p is not None   # a transpose or a constant, as _sink checked
    if p.op is Op.CONST:
        return b.const(np.ascontiguousarray(np.transpose(p.attrs_as(A.ConstAttrs).values, inverse)))
    return p.operands[0]
