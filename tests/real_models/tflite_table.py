"""The TFLite real-model table ``scripts/real_models.py --tflite`` prints (Markdown, one row per run).

Columns: model, bindings, status (ok / refused: reason / MISMATCH: first
line), ops, max abs error vs LiteRT, that error over the output's range, LiteRT's
own sensitivity to a one-ulp input change, the tolerance, convert seconds and
reference-model seconds. Every run goes through the reference model (the
tests only do the first run).
"""
from __future__ import annotations

import tempfile

from tosaconv.diagnostics import TosaconvError

from .fetch import model_path
from .tflite_catalog import MODELS
from .tflite_check import check_tflite_model, litert_sensitivity

HEADER = ("| model | bindings | status | ops | max abs err vs LiteRT | err / range | LiteRT 1-ulp sensitivity "
          "| tolerance | convert s | reference s |\n|---|---|---|---|---|---|---|---|---|---|")


def print_tflite_table(names) -> None:
    print(HEADER)
    for entry in MODELS:
        if names and not any(n in entry.name for n in names):
            continue
        path = model_path(entry)
        for run, bindings in enumerate(entry.runs[:1] if entry.refused else entry.runs):
            print(_row(entry, path, run, bindings), flush=True)


def _row(entry, path, run: int, bindings: dict) -> str:
    cells = ["", "", "", "", "", "", ""]
    with tempfile.TemporaryDirectory() as work:
        try:
            r = check_tflite_model(entry, path, run, work, reference=True)
            shapes = [v.type.shape for v in r["static"].inputs]
            noise = litert_sensitivity(entry, path, run, shapes)   # None: integer outputs, judged bit-exact
            cells = ["ok", str(r["ops"]), f"{r['max_abs_err']:.1e}", f"{r['max_rel_err']:.1e}",
                     "-" if noise is None else f"{noise:.1e}", f"{r['convert_s']:.2f}", f"{r['reference_s']:.1f}"]
        except TosaconvError as e:
            cells[0] = "refused: " + "; ".join(d.message for d in e.diagnostics)[:200]
        except AssertionError as e:
            cells[0] = f"MISMATCH: {str(e).strip().splitlines()[0][:160]}"
    text = ", ".join(f"{k}={v}" for k, v in bindings.items()) or "static"
    status, rest = cells[0], cells[1:]
    tol = "" if entry.refused else "bit-exact" if rest[3] == "-" else f"{entry.tol:g} x range"
    return (f"| {entry.name} | {text} | {status} | {rest[0]} | {rest[1]} | {rest[2]} | {rest[3]} | {tol} "
            f"| {rest[4]} | {rest[5]} |")
