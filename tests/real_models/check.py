"""Convert one catalog model at one set of input shapes and check it three ways.

tosaconv's static program (numpy run) against onnxruntime on the original
model at the entry's tolerance, and the official reference model running the
emitted ``.tosa`` against the numpy run. Returns the measurements the
README's support table reports. ``convert`` and ``timed`` are shared with
the TFLite check (tflite_check.py).
"""
from __future__ import annotations

import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

from tests.tosa_tools import run_reference_model
from tosaconv import api

REF_RTOL, REF_ATOL = 1e-4, 1e-4   # reference model vs our numpy run: same program, different summation order


def check_model(entry, path, shapes: dict, seed: int, workdir, reference: bool = True) -> dict:
    static, tosa, convert_s = convert(path, lambda graph: api.solve_bindings(graph, shapes))
    feeds = entry.inputs(shapes, _onnx_dtypes(path), seed)
    ir_feeds = {v.name: feeds[v.name].astype(v.type.dtype.numpy) for v in static.inputs}
    ours, run_s = timed(api.run, static, ir_feeds)
    want = _onnxruntime(path, feeds)
    errors = {}
    for name in static.output_names:
        errors[name] = _compare(ours[name], want[name], entry.rtol, entry.atol, f"{entry.name} {name} vs onnxruntime")

    result = {"convert_s": convert_s, "numpy_run_s": run_s, "max_abs_err": max(errors.values()),
              "ops": len(static.ops), "tosa_bytes": len(tosa)}
    if reference:
        ref, result["reference_s"] = timed(run_reference_model, tosa, ir_feeds, static.output_names, workdir,
                                           timeout=3600)
        for name in static.output_names:
            _compare(ref[name], ours[name], REF_RTOL, REF_ATOL, f"{entry.name} {name}: reference model vs numpy")
    return result


def convert(path, bindings_of) -> tuple:
    """Load, specialize at ``bindings_of(graph)`` and emit: (static graph, .tosa bytes, seconds)."""
    start = time.perf_counter()
    graph = api.load(str(path))
    static = api.specialize(graph, bindings_of(graph))
    tosa = api.emit(static)
    return static, tosa, time.perf_counter() - start


def timed(fn, *args, **kwargs) -> tuple:
    """``(fn(*args, **kwargs), seconds)``."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def _onnx_dtypes(path) -> dict:
    model = onnx.load(str(path), load_external_data=False)
    return {vi.name: helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type) for vi in model.graph.input}


def _onnxruntime(path, feeds: dict) -> dict:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    wanted = {i.name for i in session.get_inputs()}
    return dict(zip(names, session.run(None, {k: v for k, v in feeds.items() if k in wanted})))


def _compare(got, want, rtol: float, atol: float, what: str) -> float:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64), err_msg=what)
        return 0.0
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, err_msg=what)
    return float(np.max(np.abs(got.astype(np.float64) - want))) if got.size else 0.0
