"""The steps commands are made of: each calls the library once, inside a timed stage.

Commands compose these (load, bind, specialize, emit, pick inputs, run) and
stay short. The ``.npz`` key convention lives here too: graph inputs are
saved under their own names and outputs under theirs; a name that is both
(an ONNX graph that passes an input straight through) is stored once when
the arrays are equal, and otherwise the output keeps the name and the input
is saved as ``input:<name>``. A run of several steps names step k's arrays
``step<k>/<name>``. A program whose state is I/O (``--state-as-io``) takes
each state input ``state_in:NAME`` from the step's arrays if given, else from
the carried state (the initial values, then what the previous step left).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable

import click
import numpy as np

from .. import api
from ..bindings import BindingSet, BindingSources, collect
from ..diagnostics import Diagnostic, ShapeError
from ..fileio import Expect, load_npz, sha256_file
from ..io_dtypes import to_model, to_program
from ..passes.state_as_io import carry_in, state_pairs
from ..report import ReportData, dumps

if TYPE_CHECKING:
    from ..emit.symbolic import SymbolicTosa
    from ..ir.graph import Graph
    from ..ir.types import TensorType
    from .common import Session

INPUT_PREFIX = "input:"
STEP_PREFIX = "step{}/"   # arrays of step k of a several-step run


STATE_AS_IO = click.option(
    "--state-as-io", "state_as_io", is_flag=True,
    help="Turn each TOSA variable into the input 'state_in:NAME' and the output 'state_out:NAME', so a "
         "consumer without the variable extension (e.g. Vela) runs the model while the host carries the state.")


def load_model(session: Session, path: str, npu_fast: bool = False, int_io: bool = False,
               profile: str | None = None) -> Graph:
    with session.stage("load", f"loading {os.path.basename(path)}"):
        return api.load(path, npu_fast=npu_fast, int_io=int_io, quantize_weights=profile == "int")


def state_as_io(session: Session, graph: Graph) -> dict:
    """``api.state_as_io``: the program's variables become I/O; returns the initial state."""
    with session.stage("state-as-io", "carrying the state as inputs and outputs"):
        return api.state_as_io(graph)


def binding_sources(binds: tuple[str, ...], binding_files: tuple[str, ...], input_shapes: tuple[str, ...],
                    inputs_path: str | None, graph: Graph=None) -> BindingSources:
    expect = _header_check(graph, inputs_path) if graph is not None else None
    arrays = load_npz(inputs_path, expect) if inputs_path else {}
    return BindingSources(tuple(binds), tuple(binding_files), tuple(input_shapes), arrays, inputs_path or "")


_KIND_GROUPS = {"b": "bool", "i": "integer", "u": "integer", "f": "float"}


def _header_check(graph: Graph, path: str) -> Expect:
    """A check of each ``.npz`` member header against the model input of its name, run before the
    data is read: same rank, static dims equal, a symbolic dim the same value wherever it appears,
    and the same kind of element type (bool, integer, float)."""
    declared = {v.name: v.type for v in graph.inputs if hasattr(v.type, "shape")}
    seen: dict = {}

    def expect(name: str, shape: tuple, dtype: np.dtype) -> None:
        t = declared.get(name)
        if t is None:
            return
        why = _header_mismatch(t, shape, dtype, seen)
        if why:
            raise ShapeError([Diagnostic(
                "E-INPUT-SHAPE", f"'{path}': input '{name}' is declared as {list(shape)} {dtype} in the file "
                f"header, but the model's input is {t}: {why}",
                hint="save each input with the model's shape and element type")])
    return expect


def _header_mismatch(t: TensorType, shape: tuple, dtype: np.dtype, seen: dict) -> str:
    if len(shape) != len(t.shape):
        return f"rank {len(shape)} is not the model's rank {len(t.shape)}"
    for axis, (got, want) in enumerate(zip(shape, t.shape)):
        if isinstance(want, int):
            if got != want:
                return f"dim {axis} is {got}, the model needs {want}"
        elif seen.setdefault(str(want), got) != got:
            return f"dim {axis} ({want}) is {got}, but another array gave {want} = {seen[str(want)]}"
    have, need = _KIND_GROUPS.get(dtype.kind), _KIND_GROUPS.get(t.dtype.numpy.kind)
    if have != need:
        return f"{have} data for a {need} input"
    return ""


def bind(session: Session, graph: Graph, sources: BindingSources) -> BindingSet:
    with session.stage("bindings", "collecting bindings"):
        return collect(graph, sources, solve_input)


def solve_input(graph: Graph, shapes: dict) -> dict:
    """``api.solve_bindings`` for the inputs whose shapes were given."""
    return api.solve_bindings(graph, shapes)


def specialize(session: Session, graph: Graph, bindings: BindingSet) -> Graph:
    with session.stage("specialize", "specializing"):
        return api.specialize(graph, bindings.values())


def keep_symbols(session: Session, graph: Graph, bindings: BindingSet) -> Graph:
    with session.stage("specialize", "specializing (keeping open symbols)"):
        return api.keep_symbols(graph, bindings.values())


def emit_symbolic(session: Session, program: Graph, bindings: BindingSet, kind: str = "tosa") -> SymbolicTosa:
    with session.stage("emit", "writing TOSA 1.1 draft (EXT-SHAPE)"):
        return api.emit_symbolic(program, bindings.values(), kind)


def emit(session: Session, static: Graph) -> bytes:
    with session.stage("emit", "writing TOSA"):
        return api.emit(static)


def print_ir(session: Session, graph: Graph) -> str:
    with session.stage("print-ir", "printing IR"):
        return api.print_ir(graph)


def histogram(graph: Graph) -> dict:
    """Source op type → {TOSA op → count}, as ``inspect`` shows it."""
    return api.describe(graph)["histogram"]


def pick_inputs(graph: Graph, bindings: BindingSet, sources: BindingSources, seed: int,
                state: dict | None = None) -> tuple:
    """The run's input arrays and where they came from (``--inputs`` or random from the seed); a state
    input the arrays lack comes from ``state`` (see the module docstring)."""
    state = state or {}
    if not sources.arrays_path:
        _require_bound(graph, bindings.values())
        inputs = to_model(graph, api.random_inputs(graph, bindings.values(), seed), "input")
        inputs.update(carry_in(graph, {}, state))
        return inputs, f"random (seed {seed})"
    names = [v.name for v in graph.inputs]
    pairs = {p.input: p for p in state_pairs(graph)}
    missing = [n for n in names if n not in sources.arrays and not (n in pairs and pairs[n].variable in state)]
    if missing:
        raise ShapeError([_missing_input(sources, name, names, name in pairs) for name in missing])
    given = carry_in(graph, {n: sources.arrays[n] for n in names if n in sources.arrays}, state)
    return {n: given[n] for n in names}, sources.arrays_path


def _missing_input(sources: BindingSources, name: str, names: list, is_state: bool) -> Diagnostic:
    notes = (f"arrays in the file: {', '.join(sorted(sources.arrays)) or 'none'}",
             f"the model's inputs: {', '.join(names)}")
    hint = "save every input under its own name, e.g. numpy.savez(path, **{name: array})"
    if is_state:
        hint = (f"this program carries its state as I/O and this file has no initial value of it: give the "
                f"first step's state as '{name}' (the .npz of 'tosaconv convert --state-as-io --run' holds the "
                "initial state under that name)")
    return Diagnostic("E-INPUT-MISSING", f"'{sources.arrays_path}' has no array for model input '{name}'",
                      notes=notes, hint=hint)


def _require_bound(graph: Graph, values: dict) -> None:
    """Random inputs need every input symbol bound (api.random_inputs does not check)."""
    unbound = sorted({s for v in graph.inputs for s in v.type.symbols()} - set(values))
    if unbound:
        raise ShapeError([Diagnostic(
            "E-UNBOUND-SYMBOL", f"symbol '{name}' is not bound (from {_origin(graph, name)})",
            notes=("random inputs need a size for every input dim",),
            hint=f"add --bind {name}=N, or give the arrays with --inputs") for name in unbound])


def _origin(graph: Graph, name: str) -> str:
    info = graph.scope.symbols.get(name)
    return info.origin if info is not None else "the program"


def run(session: Session, graph: Graph, inputs: dict, bindings: dict | None = None,
        state: dict | None = None) -> dict:
    with session.stage("run", "running the reference interpreter"):   # arrays in the model's dtypes
        return to_model(graph, api.run(graph, to_program(graph, inputs), bindings or None, state))


def merge_steps(runs: list) -> tuple:
    """``(inputs, outputs, origin)`` of the run command's steps (each ``(inputs, outputs, origin)``):
    one step as it is; several with each array named ``step<k>/<name>`` (k from 1)."""
    if len(runs) == 1:
        return runs[0]
    inputs, outputs = {}, {}
    for k, (ins, outs, _) in enumerate(runs, 1):
        inputs.update({f"{STEP_PREFIX.format(k)}{n}": a for n, a in ins.items()})
        outputs.update({f"{STEP_PREFIX.format(k)}{n}": a for n, a in outs.items()})
    return inputs, outputs, f"{len(runs)} steps ({', '.join(origin for _, _, origin in runs)})"


def npz_arrays(inputs: dict, outputs: dict) -> dict:
    """Inputs and outputs under their own names (see the module docstring for clashes)."""
    arrays = dict(outputs)
    for name, array in inputs.items():
        if name not in arrays:
            arrays[name] = array
        elif not _same_array(arrays[name], array):
            arrays[INPUT_PREFIX + name] = array
    return arrays


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def bindings_text(bindings: BindingSet) -> str:
    if not len(bindings):
        return "no symbols bound"
    listed = ", ".join(f"{b.name}={b.value}" for b in bindings)
    return f"{len(bindings)} symbol{'s' if len(bindings) != 1 else ''} bound ({listed})"


def names_text(names: Iterable[str], word: str, limit: int = 4) -> str:
    """``2 outputs (y, z)``; only the count when there are more than ``limit``."""
    names = list(names)
    listed = f" ({', '.join(names)})" if 0 < len(names) <= limit else ""
    return plural(len(names), word) + listed


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def check_target(session: Session, static: Graph, profile: str | None, level: str | None) -> None:
    """``--profile`` and ``--level`` on the static program (exit 3 with every op at fault); a timed
    stage only when either was given."""
    if profile is None and level in (None, "none"):
        return
    with session.stage("check-target", "checking the TOSA profile and level"):
        api.check_profile(static, profile)
        api.check_level(static, level)


def write_report(session: Session, data: ReportData, report_path: str | None) -> dict:
    """The report document, staged at ``report_path`` when one is given (call it after the other outputs,
    so the report lists them). Without ``--report`` or ``--json`` nobody reads it, so it is not built."""
    if not report_path and not session.renderer.json_mode:
        return {}
    if data.model_sha256 is None:   # left to here by convert: hashing a large model costs as much as its import
        data.model_sha256 = sha256_file(data.model_path)
    doc = data.document()
    if report_path:
        session.write(report_path, dumps(doc).encode("utf-8"), "report")
    return doc
