"""In-place graph rewriting shared by the passes.

``rewrite(graph, visit)`` walks the ops in order with operands already
remapped to their replacements. ``visit(op, b)`` may emit new ops through the
builder ``b`` (stamped with the op's location) and return replacement values
for the op's results, or return None to keep the op. Dead-code elimination is
a separate pass, so a visit never has to clean up after itself.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Optional

from ..ir.builder import Builder
from ..ir.graph import Graph, Operation, Value

# ``visit(op, b)``: replacement values for ``op``'s results, or None to keep the op
Visit = Callable[[Operation, Builder], Optional[Sequence[Value]]]


def rewrite(graph: Graph, visit: Visit) -> bool:
    """Apply ``visit`` to every op; True when anything was replaced."""
    old_ops, graph.ops = graph.ops, []
    b = Builder(graph)
    replaced: dict[int, Value] = {}
    keep = graph.ops.append     # (the builder appends its new ops to the same list)
    changed = False
    for op in old_ops:
        if replaced and not replaced.keys().isdisjoint(map(id, op.operands)):
            op.operands = [replaced.get(id(v), v) for v in op.operands]
        b.location = op.location     # what ``with b.at(op.location)`` does, without its cost on every op
        out = visit(op, b)
        if out is None:
            keep(op)
            continue
        changed = True
        for old, new in zip(op.results, out):
            replaced[id(old)] = new
    graph.outputs = [replaced.get(id(v), v) for v in graph.outputs]
    return changed
