"""Broadcast checks (seed 002): record what each elementwise op assumes.

After rank equalization, each axis of a BROADCASTABLE op either matches
provably, or has a literal 1 (a static broadcast), or pairs dims that only a
binding can decide. For those, the ledger gets ``broadcastable(a, b)`` with
the op's location, checked when the symbols are bound: bound to 1 it
broadcasts, bound to the same size it does not, anything else is an error
naming this op.
"""
from __future__ import annotations

from ..ir.graph import Graph, Operation
from ..ir.ops import Trait
from ..ir.types import ValueType
from ..symbolic.constraints import Kind, Provenance
from ..symbolic.expr import Dim, same


def check_broadcasts(graph: Graph) -> bool:
    # Operand types (by identity) whose every axis holds on its face: an op on the same type objects
    # records nothing either (a chain of ADDs on [batch, 16] and one [1, 16] constant is looked at once).
    holds: dict[tuple[int, ...], list[ValueType]] = {}
    for op in graph.ops:
        if Trait.BROADCASTABLE in op.op.traits and len(op.operands) > 1:
            types = [v.type for v in op.operands]
            key = tuple(map(id, types))
            if key not in holds and not _record(graph, op):
                holds[key] = types      # (holding the types keeps their ids)
    return False


def _record(graph: Graph, op: Operation) -> bool:
    """Record the broadcasts of ``op`` that only a binding can decide; whether there was one."""
    shapes = [v.tensor_type.shape for v in op.operands]
    loc = op.location
    recorded = False
    for axis in range(len(shapes[0])):
        for i in range(len(shapes)):
            for j in range(i + 1, len(shapes)):
                a, b = shapes[i][axis], shapes[j][axis]
                if _holds(a, b):
                    continue
                reason = f"operands of {op.op.name} broadcast at axis {axis}"
                graph.ledger.require(Kind.BROADCASTABLE, a, b, Provenance(loc.op_type, loc.name, reason), graph.scope)
                recorded = True
    return recorded


def _holds(a: Dim, b: Dim) -> bool:
    """Whether ``broadcastable(a, b)`` holds on its face (equal dims, or a literal 1), as the ledger would
    decide it: then it records nothing, so there is no need to ask it."""
    return same(a, b) or same(a, 1) or same(b, 1)
