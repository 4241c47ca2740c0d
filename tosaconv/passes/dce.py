"""Dead-code elimination: drop pure ops whose results nobody uses.

Walks the ops backwards from the graph outputs, so chains of dead helper ops
(GET_DIM feeding an INDEX_MUL feeding nothing) disappear in one sweep.
"""
from __future__ import annotations

from ..ir.ops import Trait


def eliminate_dead_code(graph) -> bool:
    live = {id(v) for v in graph.outputs}
    kept = []
    for op in reversed(graph.ops):
        if not op.op.has(Trait.PURE) or any(id(r) in live for r in op.results):
            kept.append(op)
            live.update(id(v) for v in op.operands)
    changed = len(kept) != len(graph.ops)
    graph.ops = kept[::-1]
    return changed
