"""Vela's Ethos-U85 cycle estimate for the quantized real ONNX models, as a deployer converts them.

For each (model, recipe) of tests/real_models/quantized.py (onnxruntime's ``quantize_static``; the quantized
model is cached): ``tosaconv convert --profile int --int-io`` at the model's first catalog shape (the
command line's own path: ``api.load(int_io=True, quantize_weights=True)``, bind, specialize, emit), then
``vela M.tosa --accelerator-config ethos-u85-256``; ``cycles_total`` is read from Vela's summary CSV.
The table gives the TOSA op count, Vela's NPU operator count and share, the cycles, and the estimated
inference time at the ethos-u85-256 default clock Vela reports. There is no peer column: Arm's converter
reads TFLite only, and these models exist as ONNX.

    python scripts/quantized_npu_cycles.py [--models silero,common] [--recipes qdq_s8_sym] [--markdown OUT.md]
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tests.real_models.quantized import MODEL_NAMES, RECIPES, entry_named, quantized_path  # noqa: E402
from tests.real_models.vela_run import run_vela  # noqa: E402
from tosaconv import api  # noqa: E402
from tosaconv.diagnostics import TosaconvError  # noqa: E402

HEADER = "| model | recipe | TOSA ops | Vela NPU ops | cycles (ethos-u85-256) | inference time (ms) |"


def measure(name: str, recipe, work: Path) -> str:
    entry = entry_named(name)
    try:
        graph = api.load(str(quantized_path(entry, recipe)), int_io=True, quantize_weights=True)
        static = api.specialize(graph, api.solve_bindings(graph, entry.shapes[0]))
        (work / "m.tosa").write_bytes(api.emit(static))
    except TosaconvError as e:
        return f"| {name} | {recipe.name} | refused: {e.diagnostics[0].code} | | | |"
    verdict = run_vela(work / "m.tosa", work / "vela")
    if not verdict["ok"]:
        return f"| {name} | {recipe.name} | {len(static.ops)} | Vela: {verdict['first_error'][:80]} | | |"
    ms = _inference_ms(work / "vela")
    return (f"| {name} | {recipe.name} | {len(static.ops)} | {verdict['npu_ops']} ({verdict['npu_percent']:g} %) "
            f"| {verdict['cycles_total']:,.0f} | {'' if ms is None else f'{ms:.3f}'} |")


def _inference_ms(out_dir: Path):
    for summary in out_dir.glob("*_summary_*.csv"):
        with open(summary, newline="") as f:
            row = next(csv.DictReader(f), None)
        if row and row.get("inference_time"):
            return float(row["inference_time"]) * 1000.0
    return None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", help="comma-separated substrings of model names")
    p.add_argument("--recipes", help="comma-separated recipe names")
    p.add_argument("--markdown", help="also write the table to this file")
    args = p.parse_args(argv)
    names = [n for n in MODEL_NAMES if not args.models or any(s in n for s in args.models.split(","))]
    recipes = [r for r in RECIPES if not args.recipes or r.name in args.recipes.split(",")]
    rows = [HEADER, "|---" * HEADER.count(" | ") + "|---|"]
    print("\n".join(rows), flush=True)
    for name in names:
        for recipe in recipes:
            with tempfile.TemporaryDirectory() as work:
                rows.append(measure(name, recipe, Path(work)))
            print(rows[-1], flush=True)
    if args.markdown:
        Path(args.markdown).write_text("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
