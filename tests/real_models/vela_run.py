"""Compile a ``.tosa`` with Arm's Ethos-U compiler, Vela, and read back what it said.

``vela M.tosa --accelerator-config ethos-u85-256 --output-dir D`` either
prints ``NPU operators = N (P%)`` and writes ``D/*_summary_*.csv`` (with
``cycles_total``), or stops with ``Compilation failed: Validation error:``
followed by one block per rejected op (``Mul:`` then `` - reason`` lines).
A ``.tosa`` has no CPU fallback, so any rejected op fails the whole model;
:func:`run_vela` counts the rejected ops by kind and keeps the first reason.
"""
from __future__ import annotations

import csv
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

ACCELERATOR = "ethos-u85-256"
_NPU = re.compile(r"NPU operators\s*=\s*(\d+)\s*\(([\d.]+)%\)")
_BLOCK = re.compile(r"^([A-Za-z0-9_]+):\s*$")


def vela_available() -> bool:
    return shutil.which("vela") is not None


def run_vela(tosa_path, out_dir, timeout: float = 900) -> dict:
    """``{"ok", "npu_ops", "npu_percent", "cycles_total", "rejected": {op: count}, "first_error"}``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["vela", str(tosa_path), "--accelerator-config", ACCELERATOR, "--output-dir", str(out_dir)],
                          capture_output=True, text=True, timeout=timeout)
    text = done.stdout + "\n" + done.stderr
    found = _NPU.search(text)
    result = {"ok": done.returncode == 0 and found is not None, "npu_ops": None, "npu_percent": None,
              "cycles_total": _cycles(out_dir), "rejected": {}, "first_error": ""}
    if found:
        result["npu_ops"], result["npu_percent"] = int(found.group(1)), float(found.group(2))
    if not result["ok"]:
        result["rejected"], result["first_error"] = _rejections(text)
    return result


def _rejections(text: str) -> tuple:
    """Rejected op kinds with counts, and the first error as one line."""
    if "Validation error:" not in text:
        last = [line.strip() for line in text.splitlines() if line.strip()]
        return {}, (last[-1] if last else "vela failed with no message")[:300]
    blocks = []                                   # [(op kind, [reasons])], in Vela's order
    for line in text.split("Validation error:", 1)[1].splitlines():
        block = _BLOCK.match(line)
        if block:
            blocks.append((block.group(1), []))
        elif blocks and line.strip().startswith("- "):
            blocks[-1][1].append(line.strip()[2:])
    if not blocks:
        return {}, "validation error with no op listed"
    kinds = Counter(kind for kind, _ in blocks)
    return dict(kinds.most_common()), f"{blocks[0][0]}: {'; '.join(blocks[0][1])}"


def _cycles(out_dir: Path):
    for summary in out_dir.glob("*_summary_*.csv"):
        with open(summary, newline="") as f:
            row = next(csv.DictReader(f), None)
        if row and row.get("cycles_total"):
            return float(row["cycles_total"])
    return None
