"""One (model, recipe) case of the quantized scoreboard, measured step by step.

``measure`` quantizes (cached), converts, counts float ops, runs our numpy
interpreter and onnxruntime on the same seeded input (the first catalog
shape; a seed the calibration set does not use), runs the official
reference model on the emitted ``.tosa`` and compiles it with Vela. Each
step is timed and each failure recorded, never raised, so the scoreboard
shows every case; the result is plain JSON-able data. The tests in
``test_quantized_models.py`` and ``test_quantized_targets.py`` assert on it.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import onnx

from tests.tosa_tools import ReferenceModelError, run_reference_model
from tosaconv import api
from tosaconv.diagnostics import TosaconvError

from .quantized import input_dtypes, quantize_seconds, quantized_path
from .quantized_check import (convert_case, float_ops, io_edge_nodes, lsb_errors, onnxruntime_outputs,
                              output_scales, reference_agreement)
from .vela_run import run_vela

INPUT_SEED = 0          # the calibration set uses seeds 1000+


def measure(entry, recipe, workdir, reference: bool = True, vela: bool = True) -> dict:
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    result = {"model": entry.name, "recipe": recipe.name, "seconds": {}}
    try:
        path = _step(result, "quantize", quantized_path, entry, recipe)
    except Exception as e:  # noqa: BLE001 - onnxruntime's quantizer failing is a result too
        result.update(status="quantize-failed", exit_code=None, message=f"{type(e).__name__}: {e}", where=[],
                      quantize_seconds={})
        return result
    result["quantized_model"] = path.name
    result["quantize_seconds"] = quantize_seconds(path)
    model = onnx.load(str(path), load_external_data=False)
    conv = convert_case(path, entry.shapes[0])
    result["seconds"]["convert"] = conv.seconds
    result.update(status=conv.status, exit_code=conv.exit_code, message=conv.message, where=conv.where)
    if conv.status != "ok":
        return result
    result.update(float_ops(conv.static, io_edge_nodes(model)))
    tosa_file = work / "model.tosa"
    tosa_file.write_bytes(conv.tosa)
    ours = _numerics(result, entry, path, model, conv.static)
    if reference and ours is not None:
        _reference(result, conv, ours, work / "reference")
    if vela:
        result["vela"] = _step(result, "vela", run_vela, tosa_file, work / "vela")
    return result


def feeds_for(entry, model) -> dict:
    dtypes = input_dtypes(model)
    return entry.inputs({k: v for k, v in entry.shapes[0].items() if k in dtypes}, dtypes, INPUT_SEED)


def _numerics(result: dict, entry, path, model, static):
    """Our numpy run and onnxruntime's on one input; the error in LSB goes into ``result``."""
    feeds = feeds_for(entry, model)
    ir_feeds = {v.name: feeds[v.name].astype(v.type.dtype.numpy) for v in static.inputs}
    result["ir_feeds"] = ir_feeds
    try:
        ours = _step(result, "numpy_run", api.run, static, ir_feeds)
        theirs = _step(result, "onnxruntime", onnxruntime_outputs, path, feeds)
        literal = _step(result, "onnxruntime_unoptimized", onnxruntime_outputs, path, feeds, optimized=False)
    except TosaconvError as e:
        result["run_error"] = f"numpy run: {e.diagnostics[0].message}"
        return None
    except Exception as e:  # noqa: BLE001 - an interpreter bug or onnxruntime refusing the model, recorded
        result["run_error"] = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
        return None
    scales = output_scales(model)
    result["lsb"], result["lsb_unoptimized"] = lsb_errors(ours, theirs, scales), lsb_errors(ours, literal, scales)
    return ours


def _reference(result: dict, conv, ours: dict, work: Path):
    names = conv.static.output_names
    try:
        ref = _step(result, "reference", run_reference_model, conv.tosa, result["ir_feeds"], names, work,
                    timeout=3600)
    except ReferenceModelError as e:
        result["reference"] = {"error": str(e).splitlines()[0]}
        return
    agreement = reference_agreement(ref, {n: np.asarray(ours[n]) for n in names})
    result["reference"] = {"exact": all(a["exact"] for a in agreement.values()),
                           "max_abs": max(a["max_abs"] for a in agreement.values())}


def _step(result: dict, name: str, fn, *args, **kwargs):
    start = time.perf_counter()
    try:
        return fn(*args, **kwargs)
    finally:
        result["seconds"][name] = time.perf_counter() - start


def public(result: dict) -> dict:
    """``result`` without the arrays (for JSON)."""
    return {k: v for k, v in result.items() if k != "ir_feeds"}
