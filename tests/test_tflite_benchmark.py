"""The pure helpers of ``scripts/tflite_benchmark.py`` (no official converter needed).

Input binding and patching (read back through the ``tflite`` package), the random feeds
(full integer range with the extremes and the zero point), and the comparison with LiteRT.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import tflite

from tosaconv.importers.tflite.builder import ModelBuilder

_PATH = Path(__file__).resolve().parents[1] / "scripts" / "tflite_benchmark.py"
_SPEC = importlib.util.spec_from_file_location("tflite_benchmark", _PATH)
bench = sys.modules["tflite_benchmark"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def _model(dtype="INT8", signature=(-1, 5, -1, 3), zero_point=-7) -> bytes:
    m = ModelBuilder()
    x = m.input("x", [1, 5, 7, 3], dtype, list(signature), quant=([0.1], [zero_point], 0))
    y = m.tensor("y", [1, 5, 7, 3], dtype, list(signature), quant=([0.1], [zero_point], 0))
    m.op("RELU", [x], [y])
    m.output(y)
    return m.finish()


def test_dynamic_dims_bind_to_batch_and_the_model_sizes():
    (x,) = bench.model_inputs(_model(), batch=4)
    assert (x.name, x.shape, x.dynamic, x.dtype, x.zero_point) == ("x", (4, 5, 7, 3), True, np.int8, -7)


def test_fix_inputs_patches_shape_and_signature():
    data = _model()
    fixed = bench.fix_inputs(data, bench.model_inputs(data, batch=2))
    graph = tflite.Model.GetRootAs(fixed, 0).Subgraphs(0)
    t = graph.Tensors(graph.Inputs(0))
    assert t.ShapeAsNumpy().tolist() == [2, 5, 7, 3]
    assert t.ShapeSignatureAsNumpy().tolist() == [2, 5, 7, 3]
    assert not bench.model_inputs(fixed, batch=9)[0].dynamic


def test_integer_feeds_cover_the_range_with_extremes_and_zero_point():
    for dtype, np_type, zp in (("INT8", np.int8, -7), ("UINT8", np.uint8, 121), ("INT16", np.int16, 0)):
        inputs = bench.model_inputs(_model(dtype, zero_point=zp), batch=3)
        a = bench.make_feeds(inputs)["x"]
        info = np.iinfo(np_type)
        assert a.dtype == np_type and a.shape == (3, 5, 7, 3)
        assert a.min() == info.min and a.max() == info.max and zp in a
        assert len(np.unique(a)) > 60


def test_compare_counts_integer_differences_and_views_uint8():
    want = np.array([[0, 200, 255]], np.uint8)
    assert bench.compare([want.view(np.int8)], [want]) == "exact"
    off = want.view(np.int8).copy()
    off[0, 1] += 1
    assert bench.compare([off], [want]) == "MISMATCH 1 of 3 differ"
    assert bench.compare([np.zeros((1, 2), np.int8)], [want]).startswith("MISMATCH shape")


def test_compare_floats_against_the_tolerance_scaled_by_the_output():
    want = np.array([100.0, -2.0, 0.0], np.float32)
    assert bench.compare([want + np.float32([0, 0, 2 ** -20])], [want]) == "max err 9.5e-07 (rel 1e-08)"
    assert bench.compare([want + np.float32(0.009)], [want]).startswith("max err")      # <= 1e-5 + 1e-4 * 100
    assert bench.compare([want + np.float32(0.02)], [want]).startswith("MISMATCH max err 2.0e-02")
    assert bench.compare([np.array([np.inf, 0, 0], np.float32)], [want]).startswith("MISMATCH")
    assert bench.compare([np.array([np.nan, 0, 0], np.float32)], [want]).startswith("MISMATCH")


def test_one_line_picks_the_reference_model_reason():
    err = RuntimeError("tosa_reference_model exited 2; missing outputs out0.npy\n--- stdout ---\n"
                       "ERROR_IF() fails AT /project/src/ops/data_layout.cpp:205 check()\n"
                       "OpReshape: Input tensor size does not match output tensor size\nmore")
    assert bench.one_line(err) == ("tosa_reference_model exited 2: "
                                   "OpReshape: Input tensor size does not match output tensor size")
    url = RuntimeError("LiteRT: unresolved custom op: see https://www.tensorflow.org/lite/guide/ops_custom")
    assert bench.one_line(url) == str(url)
