"""Judge tosaconv again on official positive tests that a full run has already been through.

A full ``positive_tests.py`` run leaves, in each test directory, the reference
model's results (``result-N.runner.tosa_refmodel_compliance_sut_run.npy``) and
for dot-product ops its error bounds (``bounds_result-N.runner...npy``). This
runs tosaconv's interpreter in-process, exactly as :mod:`tosa_sut.tosaconv_sut`
does, and hands each output to the official ``tosa_verify`` with those stored
files, the same command ``tosa_verif_run_tests`` uses. The reference model is
not run again, so an interpreter change is re-checked in minutes, not hours.

    python scripts/positive_tests.py --rejudge [--operators conv2d depthwise_conv2d]
"""
from __future__ import annotations

import collections
import json
import subprocess
from pathlib import Path

import numpy as np

REFERENCE = "runner.tosa_refmodel_compliance_sut_run"


def rejudge(root: Path, operators: list) -> tuple:
    """``(counts by result, failing test names with the reason)`` over the tests under ``root/operators``."""
    from tests.tosa_tools import tool
    verify = str(tool("tosa_verify"))
    counts, failing = collections.Counter(), []
    for test in _tests(root / "operators", operators):
        verdict, why = judge(test, verify)
        counts[verdict] += 1
        if verdict != "EXPECTED_PASS":
            failing.append(f"{verdict} {test}: {why}"[:400])
    return counts, failing


def _tests(operators_dir: Path, operators: list) -> list:
    """Test directories (each holding a desc.json), of the named operators only when some are given."""
    wanted = {op.lower() for op in operators}
    return sorted(desc.parent for desc in operators_dir.glob("*/*/*/desc.json")
                  if not wanted or desc.parent.parent.name.lower() in wanted
                  or desc.parent.parent.name.lower().rsplit("_", 1)[0] in wanted)


def judge(test: Path, verify: str) -> tuple:
    """``(result, reason)`` of one test: tosaconv's outputs against the stored reference results."""
    from tosaconv import api
    from tosaconv.diagnostics import TosaconvError
    desc = json.loads((test / "desc.json").read_text())
    stems = [Path(f).stem for f in desc["ofm_file"]]
    if not all((test / f"{stem}.{REFERENCE}.npy").exists() for stem in stems):
        return "SKIPPED", "no stored reference result: run positive_tests.py without --rejudge first"
    try:
        graph = api.load(str(test / desc["tosa_file"]))
        outputs = api.run(graph, {n: np.load(test / f) for n, f in zip(desc["ifm_name"], desc["ifm_file"])})
    except TosaconvError as e:
        return "UNEXPECTED_FAILURE", f"refused: {e}"
    except Exception as e:   # noqa: BLE001 - an internal error of ours, reported as such
        return "INTERNAL_ERROR", f"{type(e).__name__}: {e}"
    for name, stem in zip(desc["ofm_name"], stems):
        ok, why = _verify(test, verify, name, stem, np.asarray(outputs[name], order="C"))
        if not ok:
            return "UNEXPECTED_FAILURE", why
    return "EXPECTED_PASS", ""


def _verify(test: Path, verify: str, name: str, stem: str, ours: np.ndarray) -> tuple:
    mine = test / f"{stem}.tosaconv_rejudge.npy"
    np.save(mine, ours)
    command = [verify, "--test_desc", str(test / "desc.json"), "--imp_result_file", str(mine),
               "--ref_result_file", str(test / f"{stem}.{REFERENCE}.npy"), "--ofm_name", name]
    bounds = test / f"bounds_{stem}.{REFERENCE}.npy"
    if bounds.exists():
        command += ["--bnd_result_file", str(bounds)]
    try:
        proc = subprocess.run(command, capture_output=True, text=True)
    finally:
        mine.unlink(missing_ok=True)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()[-300:]
