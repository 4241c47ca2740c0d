"""What a program asks of a TOSA implementation: profiles, extensions, level 8K, and its float islands.

:func:`summary` gives the ``tosa`` section of the JSON report and of ``inspect``;
:func:`check_profile` and :func:`check_level` turn a program that needs more than the user allowed
(``--profile int``, ``--level 8k``) into a :class:`~tosaconv.diagnostics.ConversionError` that lists
every op at fault. The facts come from the spec's ``tosa.xml`` through ``tosa_spec.json``
(:mod:`.spec`); importers say why an op stays float with :func:`note_float_reason`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING
from .checks import check_level, check_profile
from .float_islands import FloatIsland, float_islands, float_reason, note_float_reason
from .levels import LevelCheck, Violation, violations
from .profiles import Requirements, requirements
from .spec import spec

if TYPE_CHECKING:
    from ..ir.graph import Graph
    from .profiles import OpNeed

__all__ = ["FloatIsland", "LevelCheck", "Requirements", "Violation", "check_level", "check_profile",
           "float_islands", "float_reason", "note_float_reason", "requirements", "summary", "violations"]


def summary(graph: Graph, level: str = "8K") -> dict:
    """The profiles and extensions ``graph`` needs, its float islands and its fit to ``level``."""
    req = requirements(graph)
    check = violations(graph, level)
    return {
        "spec_version": spec()["version"],
        "profiles": req.profiles,
        "extensions": req.extensions,
        "exact": req.exact,
        "possible_extensions": [{"name": n, "reason": why} for n, why in sorted(req.possible.items())],
        "requirements": [_use(name, req.uses[name]) for name in sorted(req.chosen)],
        "unsupported": [_need_json(n) for n in req.unsupported],
        "float_islands": [island.to_json() for island in float_islands(graph, req)],
        "level": {"name": check.level, "fits": check.fits, "exact": check.exact,
                  "violations": [v.to_json() for v in check.violations]},
    }


def _use(name: str, needs: list) -> dict:
    return {"name": name, "ops": len(needs), "first": _need_json(needs[0]) if needs else None}


def _need_json(need: OpNeed) -> dict:
    loc = need.op.location
    return {"op": need.op.op.name, "mode": need.mode,
            "location": {"op_type": loc.op_type, "name": loc.name, "source": loc.source, "text": str(loc)}}
