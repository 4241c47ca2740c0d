"""A fuzz campaign: ``python scripts/fuzz.py --kind onnx --cases 2000 --seed 7``.

Runs ``--cases`` mutated inputs of one kind (onnx, tflite, tosa, tosair,
bindings, inputs; or ``all``) through the command line in-process, with the
mutators of ``tests/fuzz``. A case fails when it exits 1 (internal error)
or outside the exit-code contract, prints a traceback, leaks a numpy
RuntimeWarning, runs past ``--timeout`` seconds, or leaves an output behind
after failing. Each failure is saved under ``--out`` as a directory with the
input files and ``command.txt`` (the command line to replay it). Prints one
summary line per kind: cases, exit-code counts, failures, distinct problems.
The campaign's address space is capped (``--memory-mb``, default 4096), so a
case that tries to allocate far more than its input warrants fails as a
MemoryError (a recorded failure) instead of waking the OOM killer; cases run
one after another in one process and free what they allocate, so the cap is
in effect per case.
"""
from __future__ import annotations

import argparse
import collections
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fuzz.harness import run_case  # noqa: E402
from tests.fuzz.mutators import KINDS  # noqa: E402


def _save(out: Path, kind: str, index: int, case, verdict, directory: str) -> None:
    target = out / f"{kind}-{index:06d}"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name, data in case.files.items():
        (target / name).write_bytes(data)
    args = " ".join(repr(a.replace("{dir}", str(target))) for a in case.args)
    (target / "command.txt").write_text(f"python -m tosaconv {args}\n# {case.note}\n# {verdict.problem}\n"
                                        f"# stdout: {verdict.stdout[-2000:]}\n# stderr: {verdict.stderr[-2000:]}\n")


def campaign(kind: str, cases: int, seed: int, out: Path, timeout: float) -> int:
    rnd = random.Random(f"{kind}:{seed}")
    codes, problems, failures = collections.Counter(), collections.Counter(), 0
    start = time.monotonic()
    for index in range(cases):
        case = KINDS[kind](rnd)
        with tempfile.TemporaryDirectory(prefix="tosaconv-fuzz-") as directory:
            verdict = run_case(case, directory, timeout)
            codes[verdict.exit_code] += 1
            if not verdict.ok:
                failures += 1
                problems[verdict.problem.split("\n")[0][:160]] += 1
                _save(out, kind, index, case, verdict, directory)
    elapsed = time.monotonic() - start
    print(f"{kind}: {cases} cases in {elapsed:.0f} s, exit codes {dict(sorted(codes.items()))}, "
          f"{failures} failures, {len(problems)} distinct problems", flush=True)
    for problem, count in problems.most_common():
        print(f"  {count:5d}  {problem}", flush=True)
    return failures


def _cap_memory(megabytes: int) -> None:
    """Cap the process's address space (RLIMIT_AS) at ``megabytes`` MiB, never above the current hard limit."""
    if megabytes <= 0:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = megabytes << 20
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kind", choices=[*KINDS, "all"], default="all")
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("fuzz-failures"))
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per case before it counts as a hang")
    parser.add_argument("--memory-mb", type=int, default=4096,
                        help="address-space cap of the campaign in MiB (0: none); a case past it is a failure")
    args = parser.parse_args()
    _cap_memory(args.memory_mb)
    os.environ.setdefault("NO_COLOR", "1")
    kinds = list(KINDS) if args.kind == "all" else [args.kind]
    failures = sum(campaign(k, args.cases, args.seed, args.out, args.timeout) for k in kinds)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
