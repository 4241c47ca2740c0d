"""Refine symbols: after the ledger learns ``a == b``, the program's types use one symbol for both.

This is the shape dialect's ``meet`` (seed 004): a MatMul that records
``k == j`` makes ``j`` an alias of ``k`` (the earlier-declared symbol) in the
ledger, and this pass rewrites every type of the program (inputs, results and
the regions of control-flow ops) with the ledger's aliases, in one sweep.
The entry ``k == j`` stays in the ledger: binding both symbols checks it,
and binding only ``j`` binds ``k`` too (:meth:`~tosaconv.symbolic.constraints.Ledger.with_representatives`).
Only the top graph's facts rewrite types; a region's own facts hold only
when it runs, so they inform its proofs but not the shared types.
"""
from __future__ import annotations

from ..ir.graph import Graph, op_regions
from ..ir.structural import shared_type
from ..symbolic.expr import Dim


def refine_symbols(graph: Graph) -> bool:
    """Rewrite every type of ``graph`` (and its regions) with its ledger's aliases; True when any apply."""
    aliases = graph.ledger.aliases
    if not aliases:
        return False
    _substitute(graph, aliases)
    return True


def _substitute(graph: Graph, aliases: dict[str, Dim]) -> None:
    """(Each new type is the one object of its normal form, as the builder's are: see ir.structural.)"""
    for v in graph.inputs:
        v.type = shared_type(v.type.subs(aliases))
    for op in graph.ops:
        for r in op.results:
            r.type = shared_type(r.type.subs(aliases))
        for _, region in op_regions(op):
            _substitute(region, aliases)
