"""Scoreboard: the official TOSA 1.0 positive tests, run by tosaconv's interpreter and judged by the official tools.

``tosa_verif_conformance_generator`` (from the ``tosa-tools`` wheel) writes the
tests; ``tosa_verif_run_tests`` runs each on the reference model and on
tosaconv (:mod:`tosa_sut.tosaconv_sut`) and judges our outputs with
``tosa_verify``: integer results bit exact, float results within the
specification's error bounds (compliance mode). Every test must pass.

    python scripts/positive_tests.py                         # all TOSA 1.0.2 positive tests (slow to generate)
    python scripts/positive_tests.py --operators erf const   # a few operators
    python scripts/positive_tests.py --extension tosa-ext-int4 --operators conv2d
    python scripts/positive_tests.py --rejudge --operators conv2d   # against a full run's stored results

Generation is cached in ``~/.cache/tosaconv-positive/<operators>-<extensions>``.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_CACHE = Path.home() / ".cache" / "tosaconv-positive"
VERSION = "1.0.2"
SUT = "tosa_sut.tosaconv_sut"
RESULT = re.compile(r"^(?P<result>[A-Z_]+)\s+(?P<test>\S+) \(" + re.escape(SUT) + r"\)$", re.M)


def generate(cache: Path, operators: list, extensions: list) -> Path:
    """The directory of generated tests for ``operators`` (all when empty), generated on first use."""
    key = "-".join(operators or ["all"]) + "-" + "-".join(extensions or ["none"])
    out = cache / key
    if (out / "operators").is_dir():
        return out
    command = ["tosa_verif_conformance_generator", "--tosa-version", VERSION, "--test-type", "positive",
               "--output-type", "binary", "--output-directory", str(out), "-j", "1",
               "--build-directory", tempfile.mkdtemp(prefix="tosaconv-positive-build-")]
    command += ["--operators", *operators] if operators else []
    command += ["--extension", *extensions] if extensions else []
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def run(root: Path, jobs: int) -> str:
    """``tosa_verif_run_tests`` over every test under ``root`` with tosaconv as the system under test."""
    scripts = Path(__file__).resolve().parent
    env = dict(os.environ, TOSA_MODEL_NO_BACKTRACE="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(scripts), str(scripts.parent),
                                                        os.environ.get("PYTHONPATH", "")])))
    command = ["tosa_verif_run_tests", "-t", str(root / "operators"), "-r", "--binary", "-j", str(jobs),
               "--sut-module", SUT, "--test-type", "positive", "-v"]
    proc = subprocess.run(command, env=env, capture_output=True, text=True)
    return proc.stdout + proc.stderr


def summary(log: str) -> tuple:
    """``(counts by result, failing test names)`` from the runner's verbose log."""
    counts, failing = collections.Counter(), []
    for m in RESULT.finditer(log):
        result = m.group("result")
        if result in ("EXPECTED_PASS", "EXPECTED_FAILURE", "UNEXPECTED_PASS", "UNEXPECTED_FAILURE",
                      "INTERNAL_ERROR", "SKIPPED"):
            counts[result] += 1
            if result not in ("EXPECTED_PASS", "EXPECTED_FAILURE"):
                failing.append(f"{result} {m.group('test')}")
    return counts, failing


def _rejudge(args) -> tuple:
    """Rejudge within the stored full set (or the operators' own set when there is no full one)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from positive_rejudge import rejudge
    extensions = "-".join(args.extension or ["none"])
    root = args.cache / f"all-{extensions}"
    if not (root / "operators").is_dir():
        root = args.cache / ("-".join(args.operators or ["all"]) + "-" + extensions)
    if not (root / "operators").is_dir():
        raise SystemExit(f"no stored tests in {root}: run without --rejudge first")
    return rejudge(root, args.operators)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--operators", nargs="*", default=[])
    parser.add_argument("--extension", nargs="*", default=[])
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--log", type=Path, help="write the runner's full log here")
    parser.add_argument("--rejudge", action="store_true",
                        help="judge tosaconv against the reference results an earlier run stored, without "
                             "running the reference model again (see positive_rejudge.py)")
    args = parser.parse_args(argv)
    if args.rejudge:
        counts, failing = _rejudge(args)
    else:
        root = generate(args.cache, args.operators, args.extension)
        log = run(root, args.jobs)
        if args.log:
            args.log.write_text(log)
        counts, failing = summary(log)
    print("\n".join(failing[:100]))
    total = sum(counts.values())
    print(f"total {total}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0 if total and not failing else 1


if __name__ == "__main__":
    sys.exit(main())
