"""Rebuilding ops under bindings: the engine of specialization, shared with the region rules.

:func:`rebuild_ops` re-creates a graph's ops, in order, through a builder with
the symbols of ``env`` substituted: each op's result types are recomputed from
its new operands, constants fold as they appear (so helper ops collapse), and
an op with a decay rule (:mod:`.decay`) goes through it. The control-flow rules
call it again to inline a region into the enclosing graph, to unroll a loop
body once per iteration, or to rebuild a region as a static region.
"""
from __future__ import annotations

from ..diagnostics import Diagnostic, ShapeError
from collections.abc import Callable
from typing import Optional

from ..ir.builder import Builder
from ..ir.graph import Graph, Operation, Value
from ..ir.location import Location
from ..ir.shape_rules import ShapeRuleError
from ..lowering.limits import limit_note
from . import constant_fold
from .contracts import require_extents
from .decay import DataDependentDim, rule_for


# ``rebuild(op, operands, b, env)``: the values that replace ``op``'s results
Rebuild = Callable[[Operation, list[Value], Builder, dict[str, int]], list[Value]]


def rebuild_ops(graph: Graph, b: Builder, env: dict[str, int], mapping: dict[int, Value],
                rebuild: Optional[Rebuild] = None) -> None:
    """Re-create ``graph``'s ops through ``b``; ``mapping`` (id of old value -> new value) must hold
    the inputs and receives every result. ``rebuild(op, operands, b, env)`` makes each op's results
    (:func:`rebuild_op` unless given: keeping symbols open uses its own)."""
    rebuild = rebuild or rebuild_op
    saved = b.location     # each op is made at its own location (``with b.at(...)``, without its cost per op)
    try:
        for op in graph.ops:
            operands = [mapping[id(v)] for v in op.operands]
            b.location = op.location
            results = rebuild(op, operands, b, env)
            for old, r in zip(op.results, results):
                mapping[id(old)] = r
    finally:
        b.location = saved


def rebuild_op(op: Operation, operands: list[Value], b: Builder, env: dict[str, int],
               declined: Optional[set[int]] = None) -> list[Value]:
    """The values that replace ``op``'s results: the op made again (or decayed by its rule), folded when its
    operands are constants. ``declined`` (optional) receives the id of each op made here that constant
    folding was offered and left as it is (:func:`.specialize.specialize` then knows the constant-folding
    pass has nothing to do)."""
    rule = rule_for(op.op)
    try:
        if rule is not None:
            require_extents(op, rule.needs, b.graph.scope, f"the decay rule of {op.op.name}")
            results = rule(op, operands, b, env)
            last = b.graph.ops[-1] if b.graph.ops else None
            if len(results) == 1 and last is not None and results[0].producer is last:
                return _fold_last(b, declined) or results   # a decayed op on constants is a constant (a loop's condition)
            return results
        b.create(op.op, operands, op.attrs)
    except DataDependentDim as e:
        raise ShapeError.one("E-DATA-DEPENDENT", str(e), op.location, notes=(limit_note(e.limit),) if e.limit else (),
                             hint="this dim depends on tensor values; tosaconv cannot make it static") from None
    except ShapeRuleError as e:
        raise ShapeError.one("E-SHAPE", f"shape error at {op.location} after binding: {e}", op.location) from None
    return _fold_last(b, declined) or b.graph.ops[-1].results


def _fold_last(b: Builder, declined: Optional[set[int]] = None) -> Optional[list[Value]]:
    """Replace the op just built by its constant value when it folds; the replacement, or None (then the
    op's id goes to ``declined``, when given)."""
    position = len(b.graph.ops) - 1
    last = b.graph.ops[position]
    folded = constant_fold.fold_op(last, b)
    if folded is not None:
        del b.graph.ops[position]
    elif declined is not None:
        declined.add(id(last))
    return folded


def check_ledger(graph: Graph, env: dict[str, int], what: str = "") -> None:
    """Raise a ShapeError listing every constraint of ``graph``'s ledger that ``env`` violates."""
    violations = graph.ledger.check(env)
    if violations:
        raise ShapeError([Diagnostic(
            "E-CONSTRAINT", what + v.message(),
            Location(v.constraint.provenance.op_type, v.constraint.provenance.node, "ledger"),
            notes=(f"recorded by {v.constraint.provenance.where()}: {v.constraint.provenance.reason}",),
            hint="choose bindings that satisfy the constraint") for v in violations])
