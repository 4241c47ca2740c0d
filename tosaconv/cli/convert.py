"""``tosaconv convert``: model in, static TOSA 1.0 flatbuffer out, optionally run.

The whole job in one command: load (import and pass pipeline), collect the
bindings, specialize, emit, and with ``--run`` or ``--outputs`` run the numpy
reference interpreter on the static program. Every output (``.tosa``,
``--ir``, the ``.npz``, ``--report``) is staged and appears only when all of
them were produced.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from ..diagnostics import UsageError
from ..fileio import npz_bytes, sha256_file
from ..report import ReportData, run_section
from . import steps
from .formats import emit_file, output_kind
from .common import FP32_WEIGHTS
from .common import (DFT, IN_PATH, INT_IO, MODEL_PATH, NPU_FAST, OUT_PATH, Outcome, binding_options, check_outputs,
                     guarded, output_options, target_options)

if TYPE_CHECKING:
    from ..bindings import BindingSources
    from .common import Session

HELP = """Convert MODEL (.onnx, .tflite, .tosair or .tosa) to TOSA: a .tosa flatbuffer or .mlir.

OUT.tosa is a static TOSA 1.0 flatbuffer, OUT.mlir the same program as TOSA MLIR
text; --keep-symbols keeps the open symbols (TOSA 1.1-draft, EXT-SHAPE).

Symbols are bound from --bind, --bindings, --input-shape and the shapes of the
arrays in --inputs; every constraint of the ledger is checked. With --run or
--outputs the numpy reference interpreter runs the static program: on the
arrays of --inputs, or else on deterministic random inputs from --seed. The
.npz it writes holds the inputs and the outputs under their own names (an
input whose name is also an output's, with a different value, is saved as
'input:NAME'). --run without --outputs writes OUT.npz next to OUT.tosa (the
same path with the suffix .npz). With --state-as-io each TOSA variable becomes
the input 'state_in:NAME' and the output 'state_out:NAME' (the run starts
from the variables' initial values unless --inputs gives them). Outputs are
written atomically, and only if every step succeeded.
"""


@click.command("convert", help=HELP)
@click.argument("model", type=MODEL_PATH)
@click.option("-o", "--output", required=True, type=OUT_PATH, metavar="OUT.tosa",
              help="The TOSA file to write: .tosa (flatbuffer) or .mlir (TOSA MLIR text).")
@binding_options
@click.option("--ir", "ir_path", type=OUT_PATH, metavar="OUT.tosair",
              help="Also write the symbolic program (after the pass pipeline) as text.")
@click.option("--run", "do_run", is_flag=True,
              help="Run the static program; without --outputs, writes OUT.npz next to OUT.tosa.")
@click.option("--inputs", "inputs_path", type=IN_PATH, metavar="IN.npz",
              help="Input arrays by input name (their shapes also bind symbols).")
@click.option("--outputs", "outputs_path", type=OUT_PATH, metavar="OUT.npz",
              help="Run, and write the inputs and outputs here.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="Seed of the random inputs used without --inputs.")
@click.option("--report", "report_path", type=OUT_PATH, metavar="REPORT.json", help="Write the JSON report here.")
@click.option("--bind-grid", "bind_grid", multiple=True, metavar="NAME=V1,V2,...",
              help="Convert one variant per combination of these sizes (repeatable: the cartesian product); "
                   "the model is imported once, and -o must name every grid symbol, e.g. "
                   "-o 'out/m_seq{seq}.tosa'.")
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(min=1),
              help="With --bind-grid: convert the variants in this many processes.")
@click.option("--depfile", type=OUT_PATH, metavar="OUT.d",
              help="Write a Make dependency file: every output written depends on every input read.")
@click.option("--keep-symbols", "keep_symbols", is_flag=True,
              help="Write a TOSA 1.1-draft .tosa that keeps the symbols --bind leaves open: their dims are -1 "
                   "and sizes that depend on them are computed by EXT-SHAPE operators (DIM, ADD_SHAPE...).")
@target_options
@steps.STATE_AS_IO
@NPU_FAST
@DFT
@FP32_WEIGHTS
@INT_IO
@output_options
@guarded
def convert(session: Session, model: str, output: str, binds: tuple[str, ...], binding_files: tuple[str, ...],
            input_shapes: tuple[str, ...], ir_path: str | None, do_run: bool, inputs_path: str | None,
            outputs_path: str | None, seed: int, report_path: str | None, profile: str | None, level: str | None,
            state_as_io: bool, npu_fast: bool, int_io: bool, bind_grid: tuple[str, ...] = (), jobs: int = 1,
            depfile: str | None = None, keep_symbols: bool = False) -> Outcome:
    if keep_symbols:
        _check_keep_symbols(bind_grid, do_run or outputs_path, state_as_io)
    if bind_grid:
        return _convert_grid(session, model, output, bind_grid, jobs, depfile, binds, binding_files, input_shapes,
                             inputs_path, ir_path, report_path, profile, level, state_as_io, npu_fast, int_io,
                             do_run or outputs_path)
    output_kind(output)
    npz_path = outputs_path or (os.path.splitext(output)[0] + ".npz" if do_run else None)
    check_outputs(model, output=output, ir=ir_path, outputs=npz_path, report=report_path, depfile=depfile)
    data = ReportData("convert", model, None, clock=session.clock)   # the sha256 only if a report is built
    session.batch.hash_outputs = bool(report_path or session.renderer.json_mode)
    data.graph = steps.load_model(session, model, npu_fast=npu_fast, int_io=int_io, profile=profile)
    state = steps.state_as_io(session, data.graph) if state_as_io else {}
    sources = steps.binding_sources(binds, binding_files, input_shapes, inputs_path, data.graph)
    data.bindings = steps.bind(session, data.graph, sources)
    if keep_symbols:
        data.static = steps.keep_symbols(session, data.graph, data.bindings)
        steps.check_target(session, data.static, profile, level)
        kind = output_kind(output)
        written = steps.emit_symbolic(session, data.static, data.bindings, kind)
        data.symbolic = {"version": "1.1.0-draft", "asserted": written.asserted, "unchecked": written.unchecked}
        files = {output: (written.data, kind)}
    else:
        data.static = steps.specialize(session, data.graph, data.bindings)
        steps.check_target(session, data.static, profile, level)
        files = {output: emit_file(session, data.static, output)}
    if ir_path:
        files[ir_path] = (steps.print_ir(session, data.graph).encode("utf-8"), "tosair")
    if npz_path:
        files[npz_path] = (_run(session, data, sources, seed, npz_path, state), "npz")
    return _finish(session, data, files, report_path, output, _depfile_inputs(depfile, model, binding_files, inputs_path))


def _depfile_inputs(depfile: str | None, model: str, binding_files: tuple[str, ...],
                    inputs_path: str | None) -> tuple[str, list[str]] | None:
    """(the --depfile path, every file the conversion read), or None without --depfile."""
    if not depfile:
        return None
    from ..depfile import inputs_read   # here, as depfile_text in _finish: only --depfile needs them (issue 13)
    return depfile, inputs_read(model, binding_files, inputs_path)


def _check_keep_symbols(bind_grid: tuple[str, ...], runs: bool | str | None, state_as_io: bool) -> None:
    """--keep-symbols writes one symbolic file; options that need a static program do not combine with it."""
    clash = [name for name, used in (("--bind-grid", bind_grid), ("--run/--outputs", runs),
                                     ("--state-as-io", state_as_io)) if used]
    if clash:
        raise UsageError.one("E-KEEP-SYMBOLS-OPTION", f"--keep-symbols does not combine with {', '.join(clash)}",
                             hint="run the symbolic .tosa with 'tosaconv run OUT.tosa --inputs IN.npz'")


def _run(session: Session, data: ReportData, sources: BindingSources, seed: int, npz_path: str, state: dict) -> bytes:
    inputs, origin = steps.pick_inputs(data.graph, data.bindings, sources, seed, state)
    outputs = steps.run(session, data.static, inputs)
    data.run = run_section(inputs, outputs, origin, npz_path)
    return npz_bytes(steps.npz_arrays(inputs, outputs))


def _finish(session: Session, data: ReportData, files: dict, report_path: str | None, output: str,
            deps: tuple[str, list[str]] | None = None) -> Outcome:
    """Stage every output (the report last, so it can list the others) and summarize."""
    data.histogram = steps.histogram(data.graph)
    data.written = [session.write(path, blob, kind) for path, (blob, kind) in files.items()]
    doc = steps.write_report(session, data, report_path)
    if deps:
        from ..depfile import depfile_text
        targets = list(files) + ([report_path] if report_path else []) + [deps[0]]
        session.write(deps[0], depfile_text(targets, deps[1]).encode("utf-8"), "depfile")
    n_files = len(files) + bool(report_path)
    summary = (f"converted {os.path.basename(data.model_path)} → {output}: "
               f"{steps.plural(len(data.static.ops), 'op')}, {steps.bindings_text(data.bindings)}, "
               f"{steps.plural(n_files, 'file')} written in {session.clock.total():.2f} s")
    return Outcome(doc, summary, warnings=data.warnings())


def _convert_grid(session: Session, model: str, template: str, bind_grid: tuple[str, ...], jobs: int,
                  depfile: str | None, binds: tuple[str, ...], binding_files: tuple[str, ...],
                  input_shapes: tuple[str, ...], inputs_path: str | None, ir_path: str | None,
                  report_path: str | None, profile: str | None, level: str | None, state_as_io: bool,
                  npu_fast: bool, int_io: bool, wants_run: bool) -> Outcome:
    """``--bind-grid``: see :mod:`tosaconv.cli.grid`."""
    from .grid import GridJob, convert_grid
    if wants_run:
        raise UsageError.one("E-BIND-GRID", "--run and --outputs do not combine with --bind-grid",
                             hint="convert the variants, then run each with 'tosaconv run OUT.tosa'")
    job = GridJob(model, template, list(bind_grid), steps.binding_sources(binds, binding_files, input_shapes,
                                                                            inputs_path),
                  tuple(binding_files), inputs_path, jobs, ir_path, report_path, depfile, profile, level,
                  state_as_io, {"npu_fast": npu_fast, "int_io": int_io,
                                 "profile": profile})
    return convert_grid(session, job, sha256_file(model))
