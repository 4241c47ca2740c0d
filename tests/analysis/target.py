"""Test helper: ask the official ``tosa-opt`` whether a ``.tosa`` fits a TOSA target environment.

``tosa-opt --tosa-deserialize=... --tosa-attach-target="profiles=... extensions=... level=..."
--tosa-validate=strict-op-spec-alignment`` checks every op against the profiles and extensions it
is given (and the level's limits), independently of tosaconv's own table: the judge of the profile
analysis. Names are tosa-opt's: ``pro_int``, ``pro_fp`` and the extension without ``EXT-``, lower case.
"""
from __future__ import annotations

from pathlib import Path

from tests.tosa_tools import run_tool


def option_name(requirement: str) -> str:
    """``PRO-INT`` -> ``pro_int``; ``EXT-DOUBLEROUND`` -> ``doubleround``."""
    if requirement.startswith("PRO-"):
        return requirement.lower().replace("-", "_")
    return requirement[len("EXT-"):].lower()


def validate(tosa: Path, requirements, level: str = "none") -> tuple:
    """``(accepted, error lines)`` of tosa-opt validating ``tosa`` for exactly ``requirements``."""
    names = [option_name(r) for r in requirements]
    profiles = ",".join(n for n in names if n.startswith("pro_"))
    extensions = ",".join(n for n in names if not n.startswith("pro_"))
    target = " ".join(f"{k}={v}" for k, v in (("profiles", profiles), ("extensions", extensions),
                                               ("level", level)) if v)
    proc = run_tool("tosa-opt", [f"--tosa-deserialize=tosa-flatbuffer-filename={tosa}", "/dev/null",
                                 f"--tosa-attach-target={target}",
                                 "--tosa-validate=strict-op-spec-alignment", "-o", "/dev/null"])
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    return proc.returncode == 0 and not errors, errors
