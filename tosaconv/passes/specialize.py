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

from ..diagnostics import Diagnostic, ShapeError
from ..gc_tuning import fewer_collections
from ..ir.builder import Builder
from ..ir.graph import Graph, Value
from .budget import check_budget
from .canonical_names import canonical_names
from .shared_constants import share_constants
from .dce import eliminate_dead_code
from .manager import DEFAULT_PIPELINE, run_pipeline
from .rebuild import check_ledger, rebuild_ops


@fewer_collections
def specialize(graph: Graph, bindings: Mapping[str, int]) -> Graph:
    env = graph.ledger.with_representatives({k: int(v) for k, v in bindings.items()})
    _check_bound(graph, env)
    check_ledger(graph, env)
    check_budget(graph, env)
    static = _rebuild(graph, env)
    check_ledger(graph, env)
    # Dead INDEX_CONSTs must go before the pipeline: its verifier demands a static program after every pass.
    eliminate_dead_code(static)
    static = run_pipeline(static, [p for p in DEFAULT_PIPELINE if not p.symbolic_only], require_static=True)
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


def _rebuild(graph: Graph, env: dict[str, int]) -> Graph:
    new = graph.copy_shell()
    mapping: dict[int, Value] = {}
    for v in graph.inputs:
        mapping[id(v)] = new.add_input(v.name, v.type.subs(env))
    rebuild_ops(graph, Builder(new), env, mapping)
    new.set_outputs([mapping[id(v)] for v in graph.outputs], graph.output_names)
    return new
