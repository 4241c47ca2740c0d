"""Float islands: the ops of a program that compute in float, grouped by source location, with why.

An op is float when none of its spec alternatives avoids a floating-point requirement (``PRO-FP`` or
an extension that only ``PRO-FP`` supports, such as ``EXT-BF16``): under ``--profile int`` it is
exactly what would have to go. The reason comes from the importer when it noted one with
:func:`note_float_reason` (for example, the ONNX QDQ folding saying why an op stayed between
DequantizeLinear and QuantizeLinear); otherwise it is ``"<source op> has no integer lowering in
tosaconv"`` when the program computes in integers elsewhere, and says that the model is a float model
when no op of the program is integer-only (``inspect`` of a float model should not suggest that
quantization was attempted). Notes live in ``Graph.float_reasons``, keyed by the location's text, which passes and
specialization keep (shells and regions share the dict).
"""
from __future__ import annotations

from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING

from ..ir.location import Location
from ..ir.types import TensorType
from .profiles import PRO_FP, PRO_INT, OpNeed, Requirements, allowed_by

if TYPE_CHECKING:
    from ..ir.graph import Graph, Operation


def note_float_reason(graph_or_ctx: object, location: Location, reason: str) -> None:
    """Record why the ops at ``location`` stay float (an importer calls this; a context with a
    ``graph`` attribute or the Graph itself will do). The first note for a location wins."""
    graph = getattr(graph_or_ctx, "graph", graph_or_ctx)
    graph.float_reasons.setdefault(str(location), reason)


def float_reason(graph: Graph, location: Location, float_model: bool = False) -> str:
    """The noted reason for ``location`` (or one of its fused parts), else the default."""
    for key in (location, *location.parts()):
        if str(key) in graph.float_reasons:
            return graph.float_reasons[str(key)]
    if location.source == "tosa":
        return "the .tosa file computes it in float (there is no source model to say why)"
    if float_model:
        return f"the model is a float model: {location.op_type} computes in float like the rest of it"
    return f"{location.op_type} has no integer lowering in tosaconv"


@dataclass(frozen=True)
class FloatIsland:
    """The float ops made from one source location."""

    location: Location
    ops: tuple          # TOSA op names, in program order, repeated as often as they occur
    dtypes: tuple       # the float element types they touch
    reason: str

    def to_json(self) -> dict:
        loc = self.location
        counts: dict = {}
        for name in self.ops:
            counts[name] = counts.get(name, 0) + 1
        return {"location": {"op_type": loc.op_type, "name": loc.name, "source": loc.source, "text": str(loc)},
                "ops": counts, "dtypes": list(self.dtypes), "reason": self.reason}

    def text(self) -> str:
        counts = self.to_json()["ops"]
        ops = ", ".join(f"{n}" if c == 1 else f"{n} x{c}" for n, c in counts.items())
        return f"{self.location}: {ops} ({', '.join(self.dtypes)})"


def is_float(need: OpNeed) -> bool:
    return bool(need.alternatives) and not any(allowed_by(PRO_INT, alt) for alt in need.alternatives)


def float_islands(graph: Graph, req: Requirements) -> list:
    """One FloatIsland per source location holding float ops, in program order."""
    groups: dict = {}
    for need in req.needs:
        if is_float(need):
            groups.setdefault(str(need.op.location), []).append(need.op)
    float_model = not any(_integer_only(need) for need in req.needs)
    return [_island(graph, ops, float_model) for ops in groups.values()]


def _integer_only(need: OpNeed) -> bool:
    """An op only PRO-INT has (an int8 CONV2D, a RESCALE): the program does compute in integers."""
    return bool(need.alternatives) and not any(allowed_by(PRO_FP, alt) for alt in need.alternatives)


def _island(graph: Graph, ops: list, float_model: bool) -> FloatIsland:
    location = ops[0].location
    dtypes = sorted({t.dtype.value for op in ops for t in _types(op) if t.dtype.is_float})
    return FloatIsland(location, tuple(op.op.name for op in ops), tuple(dtypes),
                       float_reason(graph, location, float_model))


def _types(op: Operation) -> list:
    """The tensor types an op touches: its values', and a VARIABLE's declared type."""
    types = [v.type for v in [*op.operands, *op.results] if isinstance(v.type, TensorType)]
    if getattr(op.attrs, "dtype", None) is not None and getattr(op.attrs, "shape", None) is not None:
        types.append(TensorType(op.attrs.dtype, tuple(op.attrs.shape)))
    return types
