"""Specialization: fix every symbol from bindings and decay to static TOSA.

Steps: every input symbol must be bound (each missing one is reported with
its origin and the ``--bind`` to add); every ledger constraint is checked
against the bindings (each violation reports the constraint, the values and
the op that recorded it); then the program is rebuilt op by op with
substituted types, folding constants as it goes, so helper ops collapse to
constants and each data-dependent op decays through its rule in
:mod:`~tosaconv.passes.decay` (:mod:`.rebuild` does the op-by-op work, which
the control-flow rules reuse for regions). The result is verified to be static.
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from ..diagnostics import Diagnostic, ShapeError
from ..gc_tuning import fewer_collections
from ..ir.builder import Builder
from ..ir.graph import Graph, Value, ops_with_regions
from .budget import check_budget
from .canonical_names import canonical_names
from .shared_constants import share_constants
from .dce import eliminate_dead_code
from .manager import DEFAULT_PIPELINE, run_pipeline
from .rebuild import check_ledger, rebuild_op, rebuild_ops


@fewer_collections
def specialize(graph: Graph, bindings: Mapping[str, int]) -> Graph:
    env = graph.ledger.with_representatives({k: int(v) for k, v in bindings.items()})
    _check_bound(graph, env)
    check_ledger(graph, env)
    check_budget(graph, env)
    declined: set[int] = set()
    static = _rebuild(graph, env, declined)
    check_ledger(graph, env)
    # Dead INDEX_CONSTs must go before the pipeline: its verifier demands a static program after every pass.
    eliminate_dead_code(static)
    static = run_pipeline(static, [p for p in DEFAULT_PIPELINE if not p.symbolic_only], require_static=True,
                          settled=_settled(static, declined))
    share_constants(static)   # one CONST per value, as a .tosa read back has it
    canonical_names(static)   # the same static program has the same tensor names, however it was reached
    return static


def needed_symbols(graph: Graph) -> list[str]:
    """Symbols the inputs' shapes mention (the ones a user must bind)."""
    out: list[str] = []
    for v in graph.inputs:
        for s in sorted(v.type.symbols()):
            if s not in out:
                out.append(s)
    return out


def _check_bound(graph: Graph, env: dict[str, int]) -> None:
    diags: list[Diagnostic] = []
    for name in needed_symbols(graph):
        if name in env:
            continue
        info = graph.scope.symbols.get(name)
        origin = info.origin if info else "the program"
        diags.append(Diagnostic("E-UNBOUND-SYMBOL", f"symbol '{name}' is not bound (from {origin})",
                                hint=f"add --bind {name}=N"))
    if diags:
        raise ShapeError(diags)


def _settled(static: Graph, declined: set[int]) -> frozenset[str]:
    """The pipeline passes with nothing to do on the rebuilt program as it is (see ``run_pipeline``):
    dead-code elimination, which just ran, and constant folding when the rebuild offered every op of the
    program to it and it left each as it is (:func:`.constant_fold.fold_op` is a function of the op and
    its operands, and these have not changed since). Not for a program with regions (their ops are
    rebuilt by the control-flow rules)."""
    if ops_with_regions(static.ops) or not all(id(op) in declined for op in static.ops):
        return frozenset({"dead-code"})
    return frozenset({"dead-code", "constant-fold"})


def _rebuild(graph: Graph, env: dict[str, int], declined: set[int]) -> Graph:
    """The program rebuilt under ``env``; ``declined`` receives the ids of the ops constant folding left."""
    new = graph.copy_shell()
    mapping: dict[int, Value] = {}
    for v in graph.inputs:
        mapping[id(v)] = new.add_input(v.name, v.type.subs(env))
    rebuild_ops(graph, Builder(new), env, mapping, partial(rebuild_op, declined=declined))
    new.set_outputs([mapping[id(v)] for v in graph.outputs], graph.output_names)
    return new
