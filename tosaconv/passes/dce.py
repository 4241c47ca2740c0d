"""Dead-code elimination: drop pure ops whose results nobody uses.

Walks the ops backwards from the graph outputs, so chains of dead helper ops
(GET_DIM feeding an INDEX_MUL feeding nothing) disappear in one sweep. A value
an assumption reads (``graph.assumptions``) stays, so the numpy run can check it.
"""
from __future__ import annotations

from ..ir.graph import Graph, Operation
from ..ir.ops import Trait


def eliminate_dead_code(graph: Graph) -> bool:
    live = {id(v) for v in graph.outputs}
    checked = {a.data for a in graph.assumptions}
    kept: list[Operation] = []
    pure = Trait.PURE
    for op in reversed(graph.ops):
        results = op.results    # (one result, the common case: a set lookup, no map)
        if pure not in op.op.traits or (id(results[0]) in live if len(results) == 1 else
                                        not live.isdisjoint(map(id, results))) \
                or (checked and any(r.name in checked for r in results)):
            kept.append(op)
            live.update(map(id, op.operands))
    changed = len(kept) != len(graph.ops)
    graph.ops = kept[::-1]
    return changed
