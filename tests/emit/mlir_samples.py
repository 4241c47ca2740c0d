"""The sample models at one static binding each, for the TOSA MLIR tests (tosa-opt and IREE).

Every ``.onnx`` and ``.tflite`` under ``sample_models/`` is listed by a glob,
so a new sample is covered without editing this file. Each symbol is bound to
2, except where a model's constraints want another size (``five_dyn``
broadcasts its symbol against a literal 5). :func:`static_sample` returns the
static program and seeded random inputs in the program's own element types
(uint8 edges as their int8 bits), ready for our interpreter and for IREE.
"""
from __future__ import annotations

import glob
import os

from tosaconv import api
from tosaconv.io_dtypes import to_program

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models")
SAMPLES = sorted(os.path.relpath(p, ROOT) for pattern in ("**/*.onnx", "**/*.tflite")
                 for p in glob.glob(os.path.join(ROOT, pattern), recursive=True))
_SIZES = {"broadcast/five_dyn.onnx": 5}


def static_sample(name: str, seed: int = 3) -> tuple:
    """``(graph, static program, inputs)`` of sample ``name``."""
    graph = api.load(os.path.join(ROOT, name))
    bindings = {s: _SIZES.get(name, 2) for s in api.describe(graph)["needed_symbols"]}
    static = api.specialize(graph, bindings)
    inputs = to_program(graph, api.random_inputs(graph, bindings, seed))
    return graph, static, inputs
