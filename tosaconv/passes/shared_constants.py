"""Equal small constants become one: the last step of specialization before its names are fixed.

Two CONSTs of a static program with the same type and bytes (and the same element-type tags) are one value
afterwards: later consumers read the first. The writer stores a constant once either way; doing it here as
well makes the program itself the same whether it came from the source model (whose lowering makes a
constant per use) or from reading back a ``.tosa`` (which stores each constant once), so both get the same
tensor names. Only constants of at most :data:`MAX_SHARED_BYTES` are compared (by their bytes); a graph
output keeps its own constant. Regions are handled each on its own (a region reads only its own values).
"""
from __future__ import annotations

from ..ir.graph import Graph, Operation, Value, op_regions, ops_with_regions
from ..ir.ops import Op
from ..ir.types import TensorType

MAX_SHARED_BYTES = 4096


def share_constants(graph: Graph) -> None:
    """Replace every use of a CONST equal to an earlier one by that one's value, in place (linear)."""
    outputs = {id(v) for v in graph.outputs}
    first: dict[tuple[object, ...], Value] = {}
    replaced: dict[int, Value] = {}
    kept: list[Operation] = []
    holders = set(map(id, ops_with_regions(graph.ops)))    # (most programs have none: no call per op)
    for op in graph.ops:
        if replaced and not replaced.keys().isdisjoint(map(id, op.operands)):
            op.operands = [replaced.get(id(v), v) for v in op.operands]
        if id(op) in holders:
            for _, region in op_regions(op):
                share_constants(region)
        key = _key(op) if op.op is Op.CONST else None
        if key is not None and id(op.result) not in outputs:
            same = first.setdefault(key, op.result)
            if same is not op.result:
                replaced[id(op.result)] = same
                continue
        kept.append(op)
    graph.ops = kept


def _key(op: Operation) -> tuple[object, ...] | None:
    if op.op is not Op.CONST or len(op.results) != 1:
        return None
    values = op.attrs.values if hasattr(op.attrs, "values") else None
    if values is None or values.nbytes > MAX_SHARED_BYTES:
        return None
    attrs = op.attrs
    t = op.result.type     # (a tensor type's dtype and dims say what its text says)
    return ((t.dtype, t.shape) if type(t) is TensorType else str(t), values.dtype.str, values.shape,
            values.tobytes(), getattr(attrs, "int48", False), getattr(attrs, "element_type", ""))
