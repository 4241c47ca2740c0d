"""Convert one TFLite catalog model at one run's bindings and check it against LiteRT and the reference model.

tosaconv's static program (numpy run) against LiteRT's reference kernels
(``BUILTIN_REF``) on the original model, or on its builtin rewrite for
entries with ``rewrite``; then the official reference model running the
emitted ``.tosa`` against the numpy run. Float outputs are judged relative to
the output's range (``max|got - want| <= tol * max|want|``, see
tflite_catalog.py); integer outputs must be equal. Returns the measurements
``scripts/real_models.py --tflite`` prints. A stateful (streaming) entry with
``steps`` runs that many steps on one LiteRT interpreter and one tosaconv
state, comparing outputs and variable contents step by step
(tflite_state.py); the reference model runs the first step (from the
variables' initial values).
"""
from __future__ import annotations

import numpy as np
from ai_edge_litert.interpreter import Interpreter

from tests.importers.tflite.harness import as_stored, run_litert
from tests.tosa_tools import run_reference_model
from tosaconv import api

from .check import convert, timed
from .tflite_rewrite import to_builtin
from .tflite_state import litert_state_steps


def check_tflite_model(entry, path, run: int, workdir, reference: bool = True) -> dict:
    bindings = entry.runs[run]
    static, tosa, convert_s = convert(path, lambda graph: bindings)
    litert_model = litert_bytes(entry, path)
    shapes = [v.type.shape for v in static.inputs]
    steps = [litert_feeds(entry, litert_model, shapes, seed=run + 1000 * k) for k in range(entry.steps)]
    ir_steps = [{v.name: as_stored(f) for v, f in zip(static.inputs, feeds.values())} for feeds in steps]
    ir_feeds = ir_steps[0]
    ours, run_s = timed(api.run, static, ir_feeds)
    if entry.steps == 1:
        errors = [range_compare(ours[n], w, entry.tol, f"{entry.name} {n} vs LiteRT")
                  for n, w in zip(static.output_names, run_litert(litert_model, steps[0]))]
    else:
        errors = _compare_steps(entry, static, litert_model, steps, ir_steps)
    result = {"static": static, "convert_s": convert_s, "numpy_run_s": run_s, "ops": len(static.ops),
              "tosa_bytes": len(tosa),
              "max_abs_err": max(e[0] for e in errors), "max_rel_err": max(e[1] for e in errors)}
    if reference:
        ref, result["reference_s"] = timed(run_reference_model, tosa, ir_feeds, static.output_names, workdir,
                                           timeout=3600)
        for name in static.output_names:
            range_compare(ref[name], ours[name], entry.tol, f"{entry.name} {name}: reference model vs numpy")
    return result


def _compare_steps(entry, static, litert_model: bytes, steps: list, ir_steps: list) -> list:
    """Run ``steps`` on one LiteRT interpreter and one tosaconv state; every step's outputs and every
    variable's stored value must match LiteRT's (within ``tol``; integers exactly)."""
    want_outputs, want_states = litert_state_steps(litert_model, steps)
    state, errors = {}, []
    for k, (feeds, want, want_state) in enumerate(zip(ir_steps, want_outputs, want_states)):
        got = api.run(static, feeds, state=state)
        errors += [range_compare(got[n], w, entry.tol, f"{entry.name} {n} vs LiteRT at step {k}")
                   for n, w in zip(static.output_names, want)]
        assert set(state) == set(want_state), f"{entry.name}: variables {sorted(state)} != {sorted(want_state)}"
        errors += [range_compare(np.asarray(state[v]), w, entry.tol, f"{entry.name} variable {v} at step {k}")
                   for v, w in want_state.items()]
    return errors


def litert_bytes(entry, path) -> bytes:
    """The model LiteRT runs: the file itself, or its builtin rewrite (MediaPipe custom ops)."""
    data = path.read_bytes()
    return to_builtin(data) if entry.rewrite else data


def litert_feeds(entry, data: bytes, shapes: list, seed: int) -> dict:
    """Random inputs in LiteRT's input order, keyed by LiteRT's input names, at the bound ``shapes``."""
    details = Interpreter(model_content=data).get_input_details()
    return entry.inputs({d["name"]: tuple(s) for d, s in zip(details, shapes)},
                        {d["name"]: d["dtype"] for d in details}, seed)


def range_compare(got, want, tol: float, what: str) -> tuple:
    """(max abs error, max abs error / max |want|); float within ``tol`` of the range, integers equal."""
    got, want = np.asarray(got), as_stored(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64), err_msg=what)
        return 0.0, 0.0
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if got.size else 0.0
    scale = float(np.max(np.abs(want.astype(np.float64)))) if want.size else 0.0
    assert np.isfinite(err) and err <= tol * scale, \
        f"{what}: max abs error {err:.3g} exceeds {tol:g} x max |want| {scale:.3g}"
    return err, err / scale if scale else 0.0


def litert_sensitivity(entry, path, run: int, shapes: list):
    """How far LiteRT's own float outputs move (relative to their range) when each float input moves by
    at most one ulp: the model's rounding noise, to read the errors against (None without float outputs)."""
    data = litert_bytes(entry, path)
    feeds = litert_feeds(entry, data, shapes, seed=run)
    rng = np.random.default_rng(1000 + run)
    nudged = {k: np.nextafter(v, np.where(rng.random(v.shape) < 0.5, -np.inf, np.inf).astype(v.dtype))
              if v.dtype.kind == "f" else v for k, v in feeds.items()}
    base, moved = run_litert(data, feeds), run_litert(data, nudged)
    return max((float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-30)) for a, b in zip(base, moved)
                if a.dtype.kind == "f" and a.size), default=None)
