"""Real third-party models as TOSA MLIR: tosa-opt validates the ``.mlir`` and IREE 3.13 runs it like numpy.

Every catalog model (ONNX and TFLite, refused ones aside) is specialized at
its first binding, written with ``-o``'s MLIR writer, validated by
``tosa-opt --tosa-validate`` and compiled by ``iree-compile`` for llvm-cpu;
``iree-run-module`` then runs it on the inputs the catalog's own checks use,
and every output must match our numpy run of the same static program within
the tolerance the catalog's reference-model checks allow for a different
summation order (ONNX: 1e-4; TFLite: the entry's range-relative ``tol``;
integer outputs exactly). Marked slow: the wheels are cached and the
compiles take seconds to minutes.
"""
from __future__ import annotations

import pytest

from tests.emit.test_mlir_tosa_opt import validate
from tests.iree_tools import run_mlir
from tosaconv import api

from .catalog import MODELS
from .check import REF_ATOL, REF_RTOL, _compare, _onnx_dtypes, convert
from .fetch import model_path
from .tflite_catalog import MODELS as TFLITE_MODELS
from .tflite_check import as_stored, litert_bytes, litert_feeds, range_compare

ENTRIES = [e for e in MODELS if not e.refused] + [e for e in TFLITE_MODELS if not e.refused]


def _static_and_feeds(entry, path) -> tuple:
    if entry in MODELS:
        shapes = entry.shapes[0]
        static, _, _ = convert(path, lambda graph: api.solve_bindings(graph, shapes))
        feeds = entry.inputs(shapes, _onnx_dtypes(path), 0)
        return static, {v.name: feeds[v.name].astype(v.type.dtype.numpy) for v in static.inputs}
    static, _, _ = convert(path, lambda graph: entry.runs[0])
    feeds = litert_feeds(entry, litert_bytes(entry, path), [v.type.shape for v in static.inputs], seed=0)
    return static, {v.name: as_stored(f) for v, f in zip(static.inputs, feeds.values())}


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_real_model_mlir_validates_and_runs_on_iree(entry, tmp_path):
    static, feeds = _static_and_feeds(entry, model_path(entry))
    text = api.emit_mlir(static)
    (tmp_path / "m.mlir").write_bytes(text)
    proc = validate(tmp_path / "m.mlir")
    assert proc.returncode == 0, proc.stderr[-3000:]
    ours = api.run(static, feeds)
    got = run_mlir(text, [feeds[v.name] for v in static.inputs], len(static.output_names), tmp_path / "iree")
    for name, value in zip(static.output_names, got):
        what = f"{entry.name} {name}: IREE vs numpy"
        if entry in MODELS:
            _compare(value, ours[name], REF_RTOL, REF_ATOL, what)
        else:
            range_compare(value, ours[name], entry.tol, what)
