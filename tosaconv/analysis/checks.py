"""``--profile`` and ``--level``: a program that needs more than allowed fails, naming every op at fault.

``check_profile(graph, "int")`` fails when some op has no form within PRO-INT and its extensions:
every float island is listed, one diagnostic per source location with its TOSA ops and the reason it
stays float, after one summary diagnostic. ``"fp"`` does the same for ops only PRO-INT has (an int8
CONV2D). ``check_level(graph, "8k")`` fails when an op breaks a limit of level 8K, one diagnostic per
violation. Both raise :class:`~tosaconv.diagnostics.ConversionError` (exit 3).
"""
from __future__ import annotations

from typing import TYPE_CHECKING
from ..diagnostics import ConversionError, Diagnostic
from .float_islands import float_islands
from .levels import violations
from .profiles import PRO_FP, PRO_INT, outside_profile, requirements

if TYPE_CHECKING:
    from ..ir.graph import Graph
    from .profiles import Requirements

PROFILES = {"int": PRO_INT, "fp": PRO_FP}
LEVELS = {"8k": "8K", "none": "none"}


def check_profile(graph: Graph, profile: str | None) -> None:
    """Raise ConversionError listing every op that needs more than ``profile`` ("int", "fp" or None)."""
    if profile is None:
        return
    name = PROFILES[profile]
    req = requirements(graph)
    outside = outside_profile(req, name)
    if not outside:
        return
    locations = len({str(n.op.location) for n in outside})
    head = Diagnostic(
        "E-PROFILE", f"--profile {profile}: {len(outside)} op(s) at {locations} source location(s) need more "
        f"than {name}; the program needs {', '.join(req.profiles + req.extensions)}",
        hint=_hint(profile))
    body = _float_diagnostics(graph, req) if profile == "int" else _op_diagnostics(outside, name)
    raise ConversionError([head, *body])


def _hint(profile: str) -> str:
    if profile == "int":
        return ("quantize the model (int8 or int16 activations and weights, e.g. onnxruntime's quantize_static "
                "or a fully integer TFLite model), or drop --profile int to keep these ops in float")
    return "give a float model, or drop --profile fp"


def _float_diagnostics(graph: Graph, req: Requirements) -> list:
    """Outside PRO-INT are the float ops (by source location, with why) and ops no profile has."""
    islands = [Diagnostic("E-PROFILE-FLOAT", f"stays float: {island.text()}", island.location,
                          notes=(f"why: {island.reason}",)) for island in float_islands(graph, req)]
    return islands + _op_diagnostics(req.unsupported, PRO_INT)


def _op_diagnostics(needs: list, profile: str) -> list:
    out = []
    for need in needs:
        options = " or ".join(" + ".join(sorted(alt)) for alt in need.alternatives) or "no TOSA 1.0 profile"
        out.append(Diagnostic("E-PROFILE-OP", f"{need.op.op.name} ({need.mode}) is outside {profile}",
                              need.op.location, notes=(f"it needs {options}",)))
    return out


def check_level(graph: Graph, level: str | None) -> None:
    """Raise ConversionError listing every op that breaks a limit of ``level`` ("8k"; None: no check)."""
    if level is None or LEVELS[level] == "none":
        return
    check = violations(graph, LEVELS[level])
    if check.fits:
        return
    raise ConversionError([Diagnostic(
        "E-LEVEL", f"--level {level}: {v.text()}", v.location,
        notes=(f"TOSA level {check.level} allows {v.limit} = {v.maximum}",),
        hint=f"drop --level {level}, or change the model so that {v.what} <= {v.maximum}")
        for v in check.violations])
