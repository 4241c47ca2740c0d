"""Test helper: does IREE 3.13 take a model's symbolic ``.mlir``, and does it run like our static conversion?

For one dynamic model (a sample of ``tests/emit/test_symbolic_tosa.py`` or a
kept real model of ``tests/real_models/test_symbolic_real.py``): the symbolic
MLIR (``api.emit_symbolic(api.keep_symbols(graph, {}), {}, "mlir")``, what
``convert --keep-symbols -o X.mlir`` writes) is compiled once by
``iree-compile``; the module then runs at the two input-shape sets those tests
use, and each output is compared with our numpy run of the *static*
conversion at the same bindings (samples: 1e-5 relative like the one-op IREE
tests; real models: the catalog's reference tolerance). :func:`classify`
returns the outcome as data; ``scripts/iree_symbolic.py`` prints the table and
``tests/emit/test_mlir_iree_symbolic.py`` / ``tests/real_models/test_mlir_iree_symbolic.py``
hold the lists it established.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import tosaconv.api as api
from tests.iree_tools import IreeError, compile_mlir, run_module  # noqa: F401 (re-exported)

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    """A dynamic model, its two input sets and the tolerance its outputs are compared with."""
    name: str
    path: Path
    feeds: tuple          # two functions graph -> {input name: array}
    rtol: float
    atol: float


@dataclass(frozen=True)
class Outcome:
    """What IREE did: ``compiled``; ``matched`` at both shapes; ``error``, IREE's first error line or the mismatch."""
    name: str
    compiled: bool
    matched: bool
    error: str = ""


def sample_cases() -> list:
    from tests.emit.test_symbolic_tosa import ROOT as SAMPLES, SHAPES, _inputs
    return [Case(m, SAMPLES / m, tuple(_sample_feed(_inputs, s) for s in SHAPES[m]), 1e-5, 1e-6) for m in sorted(SHAPES)]


def _sample_feed(inputs, shapes):
    return lambda graph: inputs(graph, shapes)


def real_cases() -> list:
    from tests.real_models.catalog import MODELS
    from tests.real_models.check import REF_ATOL, REF_RTOL
    from tests.real_models.fetch import model_path
    from tests.real_models.test_symbolic_real import KEPT
    by_name = {e.name: e for e in MODELS}
    return [Case(n, Path(model_path(by_name[n])), tuple(_real_feed(by_name[n], i) for i in (0, 1)), REF_RTOL,
                 REF_ATOL) for n in KEPT]


def _real_feed(entry, i: int):
    def feed(graph) -> dict:
        return entry.inputs(entry.shapes[i], {v.name: v.type.dtype.numpy for v in graph.inputs}, i)
    return feed


def symbolic_mlir(graph) -> bytes:
    return api.emit_symbolic(api.keep_symbols(graph, {}), {}, "mlir").data


def first_error(message: str) -> str:
    """IREE's first ``error:`` line without its location, e.g. ``failed to legalize operation 'tosa.reshape' ...``."""
    for line in message.splitlines():
        if "error:" in line:
            text = line.split("error:", 1)[1].strip()
            short = re.search(r"failed to legalize operation '[^']+'( that was explicitly marked illegal)?", text)
            return short.group(0) if short else text[:200]
    return message.strip().splitlines()[0] if message.strip() else "no message"


def compile_symbolic(case: Case, work: Path) -> tuple:
    """(graph, vmfb); raises :class:`IreeError` when iree-compile refuses the symbolic file."""
    graph = api.load(str(case.path))
    work.mkdir(parents=True, exist_ok=True)
    (work / "symbolic.mlir").write_bytes(symbolic_mlir(graph))
    return graph, compile_mlir(work / "symbolic.mlir", work / "symbolic.vmfb")


def mismatches(case: Case, graph, vmfb: Path, work: Path) -> list:
    """Per input set, what differs between IREE's run and our numpy run of the static conversion (empty: same)."""
    found = []
    for i, feed in enumerate(case.feeds):
        inputs = feed(graph)
        bindings = api.solve_bindings(graph, {k: v.shape for k, v in inputs.items()})
        static = api.specialize(graph, bindings)
        ours = api.run(static, inputs)
        (work / str(i)).mkdir(exist_ok=True)
        got = run_module(vmfb, [inputs[v.name] for v in static.inputs], len(static.output_names), work / str(i))
        for name, value in zip(static.output_names, got):
            found += _differs(value, ours[name], case, f"{name} at {[tuple(v.shape) for v in inputs.values()]}")
    return found


def _differs(got: np.ndarray, want: np.ndarray, case: Case, what: str) -> list:
    if got.shape != want.shape:
        return [f"{what}: shape {got.shape} != {want.shape}"]
    if want.dtype.kind != "f":
        return [] if np.array_equal(got, want) else [f"{what}: integers differ"]
    ok = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=case.rtol, atol=case.atol)
    return [] if ok else [f"{what}: max abs diff {np.max(np.abs(got.astype(np.float64) - want)):.3g}"]


def classify(case: Case, work: Path) -> Outcome:
    try:
        graph, vmfb = compile_symbolic(case, work)
    except IreeError as e:
        return Outcome(case.name, False, False, first_error(str(e).split("--- stderr ---", 1)[-1]))
    try:
        found = mismatches(case, graph, vmfb, work)
    except IreeError as e:
        return Outcome(case.name, True, False, "run: " + first_error(str(e).split("--- stderr ---", 1)[-1]))
    return Outcome(case.name, True, not found, "; ".join(found))
