"""Test helper: compile a ``.tosa`` (or ``.tflite``) with Arm's Ethos-U compiler, Vela, and read its verdict.

``vela M --accelerator-config ethos-u85-256 --output-dir D`` prints ``NPU operators = N (P%)`` and
``CPU operators = N (P%)`` and writes ``D/<stem>_summary_<system config>.csv``, whose ``cycles_total``
column is the performance estimate. A ``.tosa`` has no CPU fallback, so Vela either rejects an op
(non-zero exit, or CPU operators) or puts everything on the NPU. :func:`compile_with_vela` trusts nothing:
it checks the exit code, that both operator counts were printed, and that the summary exists.
``--verbose-performance`` adds the per-layer table (:func:`layer_cycles` reads it back).
"""
from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ACCELERATOR = "ethos-u85-256"
_COUNT = re.compile(r"^(NPU|CPU) operators = (\d+) \(([\d.]+)%\)", re.M)
_LAYER = re.compile(r"^(\S+)\s+(\S+)\s+(NPU|CPU)\s+\d+\s+[\d.]+\s+(\d+)\s.*\s(\S+)\s*$")


class VelaError(RuntimeError):
    """Vela failed, or did not print or write what a successful compile prints and writes."""


@dataclass
class VelaResult:
    npu_ops: int
    npu_percent: float
    cpu_ops: int
    cycles_total: int
    summary: dict
    stdout: str = field(repr=False)


def vela_command() -> list:
    """The ``vela`` console script next to this interpreter, else the one on PATH."""
    beside = Path(sys.executable).with_name("vela")
    found = str(beside) if beside.exists() else shutil.which("vela")
    if found is None:
        raise FileNotFoundError("vela is not installed: pip install ethos-u-vela==5.2.0")
    return [found]


def compile_with_vela(model, out_dir, verbose_performance: bool = False, timeout: float = 300) -> VelaResult:
    """Compile ``model`` (a ``.tosa`` or ``.tflite`` path) for the Ethos-U85-256 into ``out_dir``."""
    model, out_dir = Path(model), Path(out_dir)
    args = [*vela_command(), str(model), "--accelerator-config", ACCELERATOR, "--output-dir", str(out_dir)]
    if verbose_performance:
        args.append("--verbose-performance")
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise VelaError(f"vela exited {done.returncode} on {model.name}: {_tail(done)}")
    counts = {kind: (int(n), float(p)) for kind, n, p in _COUNT.findall(done.stdout)}
    if set(counts) != {"NPU", "CPU"}:
        raise VelaError(f"vela printed no operator counts for {model.name}: {_tail(done)}")
    summary = read_summary(out_dir, model.stem)
    return VelaResult(counts["NPU"][0], counts["NPU"][1], counts["CPU"][0], int(summary["cycles_total"]),
                      summary, done.stdout)


def read_summary(out_dir, stem: str) -> dict:
    """The single row of ``out_dir/<stem>_summary_*.csv``."""
    found = sorted(Path(out_dir).glob(f"{stem}_summary_*.csv"))
    if len(found) != 1:
        raise VelaError(f"expected one {stem}_summary_*.csv in {out_dir}, found {[p.name for p in found]}")
    with found[0].open(newline="") as f:
        rows = list(csv.DictReader(f))
    if len(rows) != 1 or not rows[0].get("cycles_total", "").isdigit():
        raise VelaError(f"{found[0].name} has no cycles_total row")
    return rows[0]


def layer_cycles(stdout: str) -> list:
    """``[(original operator, NPU operator, cycles, name)]`` from a ``--verbose-performance`` table."""
    rows = []
    for line in stdout.splitlines():
        m = _LAYER.match(line)
        if m:
            rows.append((m.group(1), m.group(2), int(m.group(4)), m.group(5)))
    return rows


def _tail(done: subprocess.CompletedProcess) -> str:
    """Vela's reason: from the 'Compilation failed' line on (its traceback before that says nothing)."""
    text = (done.stderr.strip() or done.stdout.strip()).splitlines()
    start = next((i for i, line in enumerate(text) if "failed" in line or "Error" in line), max(len(text) - 4, 0))
    return " / ".join(line.strip() for line in text[start:start + 6])
