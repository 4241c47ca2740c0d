"""The official generator's negative tests: every sampled invalid program is rejected cleanly.

A session fixture runs the official conformance generator (``tosa-tools``) for
a fixed set of operators whose ERROR_IF rules tosaconv used to miss (window
output sizes, RESIZE limits, COND_IF conditions and signatures, MUL's shift,
zero points, TRANSPOSE perms, ranks above level 8K) plus a few others, and
``tosaconv run --level 8k`` must refuse each program with exit 2, 3 or 4, as
the reference model answers ERROR. ``scripts/negative_tests.py`` runs all of
them.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import negative_tests as NT  # noqa: E402

OPERATORS = ["conv2d", "avg_pool2d", "max_pool2d", "resize", "mul", "transpose", "negate", "cond_if",
             "reduce_sum", "matmul", "rescale"]


@pytest.fixture(scope="session")
def negative_tests(tmp_path_factory) -> list:
    if shutil.which("tosa_verif_conformance_generator") is None:
        raise RuntimeError("tosa-tools is not installed (tosa_verif_conformance_generator missing)")
    out = tmp_path_factory.mktemp("negative")
    command = NT.GENERATE + ["--output-directory", str(out / "cts"), "--build-directory", str(out / "build"),
                             "--operators", *OPERATORS]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return NT.test_dirs(out / "cts")


def test_every_sampled_negative_test_is_rejected_cleanly(negative_tests, tmp_path):
    assert len(negative_tests) >= 100
    assert {NT.op_name(t).split("_")[0] for t in negative_tests} >= {"conv2d", "resize", "mul", "transpose"}
    results = [(t, *NT.run_one(t, tmp_path)) for t in negative_tests]
    bad = [f"{t.name}: {outcome} (exit {code}) {message}" for t, outcome, code, message in results
           if outcome != "clean"]
    assert not bad, "\n".join(bad)
