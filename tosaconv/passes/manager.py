"""The pass manager and the default pipeline, as one visible list.

Each pass is a function ``graph -> bool`` (True when it changed something).
The manager runs them in order and verifies the IR after every pass, so a
pass that breaks an invariant is caught at that pass, by name. Each pass also
runs inside every region of a control-flow op (:func:`run_everywhere`), unless
it walks the regions itself (``recurses``).

Each pass states the extent guarantee it needs (``needs``, seed 003) of the
ops it ``selects``; the manager checks them before the pass runs, so a pass
never reads an upper bound as a true size (:mod:`.contracts`).
"""
from __future__ import annotations

import operator

from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import Callable, Optional

from ..gc_tuning import fewer_collections
from ..ir.graph import Graph, Operation, op_regions, ops_with_regions
from ..ir.verifier import VerifyMemo, VerifyVerdicts, rank_problems, verify
from ..ir.ops import Trait
from ..ir.types import ValueType
from ..symbolic.scope import ExtentKind
from .broadcast_check import check_broadcasts
from .constant_fold import fold_constants
from .contracts import require_extents
from .dce import eliminate_dead_code
from .rank_equalization import equalize_ranks
from .refine_symbols import refine_symbols
from .transpose_cancel import cancel_transposes


class PassError(Exception):
    """A pass left the IR invalid: an internal bug, reported with the pass name."""


@dataclass(frozen=True)
class Pass:
    name: str
    run: Callable[[Graph], bool]
    equal_ranks_after: bool = False
    symbolic_only: bool = False   # nothing to do on a static program: specialization skips it
    needs: ExtentKind = ExtentKind.UNKNOWN   # the extent guarantee it needs of the ops it selects
    selects: Optional[Callable[[Operation], bool]] = None       # op -> bool: the ops whose dims it reads (None: every op)
    recurses: bool = False                   # it walks the regions itself (run once, on the top graph)


def _broadcasting(op: Operation) -> bool:
    return op.op.has(Trait.BROADCASTABLE) and len(op.operands) > 1


DEFAULT_PIPELINE = [
    Pass("refine-symbols", refine_symbols, symbolic_only=True, recurses=True),
    Pass("rank-equalization", equalize_ranks, equal_ranks_after=True),
    Pass("broadcast-check", check_broadcasts, equal_ranks_after=True, symbolic_only=True,
         needs=ExtentKind.EXACT, selects=_broadcasting),   # a broadcast target is never an upper bound
    Pass("constant-fold", fold_constants, equal_ranks_after=True),
    Pass("transpose-cancel", cancel_transposes, equal_ranks_after=True),
    Pass("dead-code", eliminate_dead_code, equal_ranks_after=True),
]


@fewer_collections
def run_pipeline(graph: Graph, pipeline: Optional[list[Pass]] = None, *, require_static: bool = False,
                 settled: frozenset[str] = frozenset()) -> Graph:
    """Run the passes, verifying the IR after the first and after each one that changed it (a pass that
    reports no change and left every op list and the outputs as they were has nothing new to check,
    unless it asks for more than the checks before it: equal ranks, then checked alone).

    ``settled``: names of passes the caller knows have nothing to do on ``graph`` as given (one it just
    ran, say); they are not run until a pass changes the graph."""
    memo: VerifyMemo = {}    # ops already verified and unchanged since are not re-checked (see ir/verifier.py)
    verdicts: VerifyVerdicts = {}   # nor are new ops structurally equal to ones that passed (a pass's rebuilt ops)
    checked_ranks = None
    for p in pipeline or DEFAULT_PIPELINE:
        check_contract(p, graph)
        before = _fingerprint(graph)
        if p.name in settled:
            changed = False
        else:
            changed = p.run(graph) if p.recurses else run_everywhere(p.run, graph)
        same = not changed and _same(before, _fingerprint(graph))
        if not same:
            settled = frozenset()
        unchanged = checked_ranks is not None and same
        if unchanged and (checked_ranks or not p.equal_ranks_after):
            continue
        if unchanged:
            problems = rank_problems(graph)
        else:
            problems = verify(graph, require_equal_ranks=p.equal_ranks_after, require_static=require_static,
                              memo=memo, verdicts=verdicts)
        if problems:
            raise PassError(f"IR invalid after pass '{p.name}': " + "; ".join(problems[:5]))
        checked_ranks = p.equal_ranks_after
    return graph


def check_contract(p: Pass, graph: Graph, fine: Optional[dict[int, ValueType]] = None) -> None:
    """Raise a ShapeError (E-EXTENT) when an op ``p`` selects, here or in a region, has a dim weaker than it needs.

    An op's verdict depends only on its operand and result types (and the scope), so an op whose types
    are all types of ops that passed (``fine``, by identity: the graph holds them while it is checked)
    passes too; a chain of ops on one type is checked once."""
    if p.needs is ExtentKind.UNKNOWN:
        return
    fine = {} if fine is None else fine
    holders = set(map(id, ops_with_regions(graph.ops)))
    for op in graph.ops:
        if id(op) in holders:
            for _, region in op_regions(op):
                check_contract(p, region, fine)
        if (p.selects is None or p.selects(op)) and not _known_fine(op, fine):
            require_extents(op, p.needs, graph.scope, f"pass '{p.name}'")
            fine.update((id(v.type), v.type) for v in (*op.operands, *op.results))


def _known_fine(op: Operation, fine: dict[int, ValueType]) -> bool:
    return all(id(v.type) in fine for v in op.operands) and all(id(r.type) in fine for r in op.results)


def _fingerprint(graph: Graph) -> list[object]:
    """The outputs and ops of ``graph``, then those of each region, by identity (the list holds them, so no
    id is reused while it lives)."""
    items: list[object] = [*graph.outputs, *graph.ops]
    for op in ops_with_regions(graph.ops):
        for _, region in op_regions(op):
            items += _fingerprint(region)
    return items


def _same(before: list[object], after: list[object]) -> bool:
    return len(before) == len(after) and all(map(operator.is_, before, after))   # (no Python call per item)


def run_everywhere(run: Callable[[Graph], bool], graph: Graph) -> bool:
    """Run a pass on every region (innermost first), then on ``graph`` itself.

    Regions are isolated from above, so each is a graph of its own to every pass: rank equalization
    and constant folding work inside a branch or loop body as they do outside, and the broadcast
    checks of a region go to the region's own ledger (they hold only when it runs).
    """
    changed = False
    for op in ops_with_regions(graph.ops):
        for _, region in op_regions(op):
            changed |= bool(run_everywhere(run, region))
    return bool(run(graph)) or changed
