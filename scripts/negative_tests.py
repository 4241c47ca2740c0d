"""Scoreboard: the official TOSA 1.0 negative tests, each run through ``tosaconv run``.

The official conformance generator (``tosa_verif_conformance_generator`` from
the ``tosa-tools`` wheel) writes invalid programs, each breaking one ERROR_IF
rule of the specification: a directory per test with ``desc.json``
(``expected_failure: true``), ``test.tosa`` and the input ``.npy`` files.
Every one must be *rejected cleanly*: exit 2, 3 or 4 with a message. A run
that exits 0 is a silent run (the rule is not enforced); exit 1 (an internal
error) or anything else is a crash.

    python scripts/negative_tests.py                 # generate once into the cache, run all, print the table
    python scripts/negative_tests.py --op conv2d     # only tests whose name starts with conv2d
    python scripts/negative_tests.py --json out.json # also write every test's outcome
    python scripts/negative_tests.py --table         # every op and ERROR_IF rule, not only the failures
    python scripts/negative_tests.py --tests DIR     # score tests generated elsewhere, e.g. by
        # tosa_verif_build_tests --test-type negative --extension none --tosa-version 1.0 -o DIR

Generation takes a few minutes and is cached in ``~/.cache/tosaconv-negative``
(``--cache`` to change it). The command the cache was made with is
:data:`GENERATE`. Tests run in-process through the CLI's own entry point, so
the exit code is the one a user sees. They run with ``--level 8k``: the
reference model checks level 8K by default, and the generator's ``WrongRank``
tests break its LEVEL_CHECK on rank (at most 6), not an ERROR_IF.
"""
from __future__ import annotations

import argparse
import collections
import io
import json
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np

DEFAULT_CACHE = Path.home() / ".cache" / "tosaconv-negative"
VERSION = "1.0.2"
GENERATE = ["tosa_verif_conformance_generator", "--tosa-version", VERSION, "--test-type", "negative",
            "--extension", "all", "--output-type", "binary", "-j", "1"]
CLEAN_EXITS = (2, 3, 4)


def generate(cache: Path, op: str | None = None) -> Path:
    """The directory of generated tests (generated into ``cache`` on first use)."""
    out = cache / f"cts-{VERSION}"
    if op is None and (out / "operators").is_dir():
        return out
    build = Path(tempfile.mkdtemp(prefix="tosaconv-negative-build-"))
    command = GENERATE + ["--output-directory", str(out), "--build-directory", str(build)]
    if op is not None:
        command += ["--operators", op]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def test_dirs(root: Path, prefix: str = "") -> list:
    """Every negative test directory under ``root`` whose name starts with ``prefix``, sorted."""
    found = [p.parent for p in root.rglob("desc.json") if p.parent.name.startswith(prefix)]
    return sorted(d for d in found if json.loads((d / "desc.json").read_text()).get("expected_failure"))


def error_kind(test: Path) -> str:
    """The ERROR_IF rule a test breaks (``WrongInputList``, ``KernelNotPowerOfTwo``...)."""
    name = test.name
    return name.split("_ERRORIF_")[1].split("_")[0] if "_ERRORIF_" in name else "?"


def op_name(test: Path) -> str:
    return test.name.split("_ERRORIF_")[0]


def run_one(test: Path, work: Path, level: str = "8k") -> tuple:
    """``(outcome, exit code, first message line)`` for one test: clean, silent or crash."""
    from tosaconv.cli import cli
    from tosaconv.fileio import npz_bytes
    desc = json.loads((test / "desc.json").read_text())
    arrays = {name: np.load(test / f) for name, f in zip(desc["ifm_name"], desc["ifm_file"])}
    inputs, output = work / "in.npz", work / "out.npz"
    inputs.write_bytes(npz_bytes(arrays))
    args = ["run", str(test / desc["tosa_file"]), "--inputs", str(inputs), "-o", str(output), "--json"]
    args += ["--level", level] if level else []
    stdout = io.StringIO()
    with redirect_stdout(stdout), redirect_stderr(io.StringIO()):
        code = cli.main(args, prog_name="tosaconv", standalone_mode=False)
    output.unlink(missing_ok=True)
    return _outcome(code), code, _message(stdout.getvalue())


def _outcome(code: int) -> str:
    if code in CLEAN_EXITS:
        return "clean"
    return "silent" if code == 0 else "crash"


def _message(text: str) -> str:
    try:
        diagnostics = json.loads(text).get("diagnostics") or [{}]
        return str(diagnostics[0].get("message", ""))[:200]
    except (ValueError, AttributeError):
        return text.strip().splitlines()[0][:200] if text.strip() else ""


def scoreboard(results: list, every_row: bool = False) -> str:
    """The per-op and per-rule table of ``(test, outcome, code, message)`` rows (only those with a silent
    run or a crash unless ``every_row``), and the totals."""
    by = collections.defaultdict(collections.Counter)
    for test, outcome, _, _ in results:
        by[(op_name(test), error_kind(test))][outcome] += 1
    lines = [f"{'op':<24} {'ERROR_IF':<36} {'clean':>5} {'silent':>6} {'crash':>5}"]
    for (op, kind), c in sorted(by.items()):
        if every_row or c["silent"] or c["crash"]:
            lines.append(f"{op:<24} {kind:<36} {c['clean']:>5} {c['silent']:>6} {c['crash']:>5}")
    total = collections.Counter(outcome for _, outcome, _, _ in results)
    n = len(results)
    lines.append(f"total {n}: clean {total['clean']} ({100 * total['clean'] / max(n, 1):.1f} %), "
                 f"silent {total['silent']}, crash {total['crash']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--op", default="", help="only tests whose name starts with this")
    parser.add_argument("--json", type=Path, help="write every test's outcome here")
    parser.add_argument("--level", default="8k", help="tosaconv run --level ('' to leave the option out)")
    parser.add_argument("--table", action="store_true", help="print every op and rule, not only failures")
    parser.add_argument("--tests", type=Path, help="score the tests under this directory instead of the cache")
    args = parser.parse_args(argv)
    root = args.tests or generate(args.cache)
    results = []
    with tempfile.TemporaryDirectory() as work:
        for test in test_dirs(root, args.op):
            outcome, code, message = run_one(test, Path(work), args.level)
            results.append((test, outcome, code, message))
    print(scoreboard(results, args.table))
    if args.json:
        args.json.write_text(json.dumps([{"test": t.name, "outcome": o, "exit": c, "message": m}
                                         for t, o, c, m in results], indent=1))
    return 0 if all(o == "clean" for _, o, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
