"""``tosaconv import``, ``specialize`` and ``run``: the single steps of the pipeline.

``import`` writes the symbolic program as ``.tosair`` text (no bindings
needed); ``specialize`` binds symbols and writes a static ``.tosa``; ``run``
executes a model, a ``.tosair`` or a ``.tosa`` with the numpy reference
interpreter and writes the inputs and outputs as an ``.npz``. Each accepts
``--json``, and ``specialize`` and ``run`` also ``--report``.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from ..fileio import npz_bytes, sha256_file
from ..report import ReportData, run_section
from . import steps
from .formats import emit_file, output_kind
from .common import FP32_WEIGHTS
from .common import (DFT, IN_PATH, INT_IO, MODEL_PATH, NPU_FAST, OUT_PATH, Outcome, binding_options, check_outputs,
                     guarded, output_options, target_options)

if TYPE_CHECKING:
    from .common import Session

_REPORT = click.option("--report", "report_path", type=OUT_PATH, metavar="REPORT.json",
                       help="Write the JSON report here.")


@click.command("import")
@click.argument("model", type=MODEL_PATH)
@click.option("-o", "--output", required=True, type=OUT_PATH, metavar="OUT.tosair", help="The text IR to write.")
@NPU_FAST
@DFT
@FP32_WEIGHTS
@INT_IO
@output_options
@guarded
def import_(session: Session, model: str, output: str, npu_fast: bool, int_io: bool) -> Outcome:
    """Import MODEL and write the symbolic program (symbols, ledger, ops) as text."""
    check_outputs(model, output=output)
    data = ReportData("import", model, sha256_file(model), clock=session.clock)
    data.graph = steps.load_model(session, model, npu_fast=npu_fast, int_io=int_io)
    text = steps.print_ir(session, data.graph)
    data.histogram = steps.histogram(data.graph)
    data.written = [session.write(output, text.encode("utf-8"), "tosair")]
    summary = (f"imported {os.path.basename(model)} → {output}: {steps.plural(len(data.graph.ops), 'op')}, "
               f"{steps.plural(len(data.graph.scope.symbols), 'symbol')}, "
               f"{steps.plural(len(data.graph.ledger.entries), 'constraint')} in {session.clock.total():.2f} s")
    return Outcome(data.document(), summary, warnings=data.warnings())


@click.command("specialize")
@click.argument("model", type=MODEL_PATH, metavar="IN.tosair|MODEL")
@binding_options
@click.option("--inputs", "inputs_path", type=IN_PATH, metavar="IN.npz",
              help="Bind symbols from these arrays' shapes.")
@click.option("-o", "--output", required=True, type=OUT_PATH, metavar="OUT.tosa",
              help="The TOSA file to write: .tosa (flatbuffer) or .mlir (TOSA MLIR text).")
@_REPORT
@target_options
@steps.STATE_AS_IO
@NPU_FAST
@DFT
@FP32_WEIGHTS
@INT_IO
@output_options
@guarded
def specialize(session: Session, model: str, binds: tuple[str, ...], binding_files: tuple[str, ...],
               input_shapes: tuple[str, ...], inputs_path: str | None, output: str, report_path: str | None,
               profile: str | None, level: str | None, state_as_io: bool, npu_fast: bool, int_io: bool) -> Outcome:
    """Bind the symbols of a program or model and write static TOSA 1.0 (.tosa or .mlir)."""
    output_kind(output)
    check_outputs(model, output=output, report=report_path)
    data = ReportData("specialize", model, sha256_file(model), clock=session.clock)
    data.graph = steps.load_model(session, model, npu_fast=npu_fast, int_io=int_io, profile=profile)
    if state_as_io:
        steps.state_as_io(session, data.graph)
    sources = steps.binding_sources(binds, binding_files, input_shapes, inputs_path, data.graph)
    data.bindings = steps.bind(session, data.graph, sources)
    data.static = steps.specialize(session, data.graph, data.bindings)
    steps.check_target(session, data.static, profile, level)
    blob, kind = emit_file(session, data.static, output)
    data.histogram = steps.histogram(data.graph)
    data.written = [session.write(output, blob, kind)]
    summary = (f"specialized {os.path.basename(model)} → {output}: {steps.plural(len(data.static.ops), 'op')}, "
               f"{steps.bindings_text(data.bindings)} in {session.clock.total():.2f} s")
    return _with_report(session, data, report_path, summary)


@click.command("run")
@click.argument("file", type=MODEL_PATH, metavar="FILE")
@binding_options
@click.option("--inputs", "inputs_paths", type=IN_PATH, metavar="IN.npz", multiple=True,
              help="Input arrays by input name. Repeat it to run several steps in order on one program "
                   "state: a stateful (streaming) model's variables, or its state_in:/state_out: pairs, carry "
                   "over from step to step.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="Seed of the random inputs used without --inputs.")
@click.option("-o", "--output", required=True, type=OUT_PATH, metavar="OUT.npz",
              help="Where to write the inputs and outputs.")
@_REPORT
@steps.STATE_AS_IO
@NPU_FAST
@DFT
@FP32_WEIGHTS
@click.option("--level", type=click.Choice(["none", "8k"]), default="none", show_default=True,
              help="Fail (exit 3) before running when an op breaks a limit of this TOSA level (the "
                   "official reference model checks level 8K).")
@output_options
@guarded
def run(session: Session, file: str, binds: tuple[str, ...], binding_files: tuple[str, ...],
        input_shapes: tuple[str, ...], inputs_paths: tuple[str, ...], seed: int, output: str,
        report_path: str | None, state_as_io: bool, npu_fast: bool, level: str | None) -> Outcome:
    """Run FILE (.onnx, .tflite, .tosair or .tosa) with the numpy reference interpreter.

    On a symbolic program, symbols are bound from the input arrays' shapes (and
    any bindings given). Without --inputs, deterministic random inputs from
    --seed are used (which needs every symbol bound). The .npz holds the inputs
    and the outputs under their own names, as 'tosaconv convert' writes them.
    With several --inputs (--inputs a.npz --inputs b.npz), each file is one step:
    the steps run in order on the same state (the program's VARIABLEs keep what
    the previous step wrote), and the .npz holds step k's arrays as
    'step<k>/<name>' (k from 1). A program with state inputs and outputs
    ('state_in:NAME' / 'state_out:NAME', as --state-as-io makes them) chains
    the same way: each step's state outputs feed the next step's state inputs,
    unless that step's file gives them.
    """
    check_outputs(file, output=output, report=report_path)
    data = ReportData("run", file, sha256_file(file), clock=session.clock)
    data.graph = steps.load_model(session, file, npu_fast)
    steps.check_target(session, data.graph, None, level)
    state = steps.state_as_io(session, data.graph) if state_as_io else {}
    paths, runs = list(inputs_paths) or [""], []
    for path in paths:
        sources = steps.binding_sources(binds, binding_files, input_shapes, path, data.graph)
        bindings = steps.bind(session, data.graph, sources)
        data.bindings = data.bindings or bindings
        inputs, origin = steps.pick_inputs(data.graph, bindings, sources, seed, state)
        runs.append((inputs, steps.run(session, data.graph, inputs, bindings.values(), state), origin))
    inputs, outputs, origin = steps.merge_steps(runs)
    data.run = run_section(inputs, outputs, origin, output)
    data.histogram = steps.histogram(data.graph)
    data.written = [session.write(output, npz_bytes(steps.npz_arrays(inputs, outputs)), "npz")]
    summary = (f"ran {os.path.basename(file)} → {output}: {steps.names_text(outputs, 'output')}, "
               f"inputs {origin}, in {session.clock.total():.2f} s")
    return _with_report(session, data, report_path, summary)


def _with_report(session: Session, data: ReportData, report_path: str | None, summary: str) -> Outcome:
    return Outcome(steps.write_report(session, data, report_path), summary, warnings=data.warnings())
