"""Value names of a specialized program, a function of its ops and their locations alone.

Specialization rebuilds ops through a builder that names each result after
its location; helper ops that fold away (GET_DIM, INDEX_*, constant-folded
shape computations) take names too, so the numbering of the survivors
(``Conv.3_33``) depends on how many helpers folded, which differs between
converting the source model and reading back its symbolic ``.tosa``.
:func:`canonical_names` renames every result once the program is final:
``<node name>``, ``<node name>_2``... in op order, from the op's location
(:attr:`Location.value_name`), so the same static program gets the same
tensor names, whichever way it was reached. Graph inputs keep their names;
outputs are named by ``output_names`` when written, not by their values. The
assumptions the numpy run checks name their data value, and follow it.
"""
from __future__ import annotations

from dataclasses import replace

from ..ir.graph import Graph, op_regions, ops_with_regions


def canonical_names(graph: Graph) -> None:
    """Rename the results of ``graph``'s ops and of its regions' ops, in place (linear)."""
    used = {v.name for v in graph.inputs}
    renamed: dict[str, str] = {}
    counters: dict[str, int] = {}
    holders = set(map(id, ops_with_regions(graph.ops)))    # (most programs have none: no call per op)
    for op in graph.ops:
        base = op.location.value_name or op.op.name.lower()
        for r in op.results:
            new = _fresh(base, used, counters)
            renamed[r.name] = new
            r.name = new
        if id(op) in holders:
            for _, region in op_regions(op):
                canonical_names(region)
    graph._names = used
    graph.assumptions = [replace(a, data=renamed.get(a.data, a.data)) for a in graph.assumptions]


def _fresh(base: str, used: set[str], counters: dict[str, int]) -> str:
    """``base``, ``base_2``, ``base_3``... the first not in ``used``; ``counters`` remembers where each base
    got to, so the many results of one location (an unrolled recurrence) cost linear time, not quadratic."""
    n = counters.get(base, 1)
    name = base if n == 1 else f"{base}_{n}"
    while name in used:
        n += 1
        name = f"{base}_{n}"
    counters[base] = n + 1
    used.add(name)
    return name
