"""``convert --bind-grid``: import once, then specialize and emit every combination of bindings.

``--bind-grid seq=64,128 --bind-grid batch=1,4`` makes four variants (the
cartesian product, first grid option outermost). The ``-o`` template names
each variant's file with ``{NAME}`` for every grid symbol, so no two variants
write the same file. The model is loaded (import and pass pipeline) once;
each variant collects its bindings (the fixed ``--bind``, ``--bindings``,
``--input-shape`` and ``--inputs`` sources plus its grid values), then
specializes a fresh static program from the one symbolic program (which
specialize does not change), checks the target and emits. A failing variant
is recorded with its diagnostics and exit code and the others go on; the
command exits with the worst code. ``--jobs N`` runs the variants in N
processes: the symbolic program does not pickle (its ops hold local
functions), so workers inherit it by ``fork``; where fork is unavailable each
worker loads the model itself.
"""
from __future__ import annotations

import itertools
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import field, replace
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Iterable

from .. import api
from ..bindings import Binding, BindingSet, BindingSources, _check_symbol, collect, parse_bind
from ..diagnostics import EXIT_INTERNAL, EXIT_OK, TosaconvError, UsageError
from ..report import REPORT_SCHEMA_VERSION, StageClock, dumps, tool_version
from . import steps
from .formats import emit_bytes, output_kind
from .common import Outcome, check_outputs, internal_diagnostic

if TYPE_CHECKING:
    from ..diagnostics.render import Renderer
    from ..fileio import WrittenFile
    from ..ir.graph import Graph
    from .common import Session

GRID_OPTION = "--bind-grid"


@dataclass(frozen=True)
class Variant:
    """One combination of grid values and the file it writes."""

    values: dict    # grid symbol -> size
    output: str

    def label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.values.items())


@dataclass
class VariantResult:
    """What converting one variant gave (picklable, so a worker process can return it)."""

    variant: Variant
    exit_code: int = EXIT_OK
    blob: bytes | None = None
    bindings: list = field(default_factory=list)       # {"name", "value", "source"}
    diagnostics: list = field(default_factory=list)    # Diagnostic
    stages: list = field(default_factory=list)         # (stage, seconds)
    op_count: int = 0


def parse_grid(texts: Iterable[str]) -> dict:
    """``NAME=V1,V2,...`` per ``--bind-grid`` → {name: [sizes]}; malformed, repeated or empty is exit 2."""
    grid: dict = {}
    for text in texts:
        name, eq, values = text.partition("=")
        name = name.strip()
        sizes = [parse_bind(f"{name}={v.strip()}").value for v in values.split(",")] if eq and name else []
        if not sizes:
            raise UsageError.one("E-BIND-GRID", f"{GRID_OPTION} expects NAME=V1,V2,..., got '{text}'",
                                 hint=f"for example {GRID_OPTION} seq=64,128,256")
        if name in grid or len(set(sizes)) != len(sizes):
            raise UsageError.one("E-BIND-GRID", f"{GRID_OPTION} {text}: '{name}' or one of its values is "
                                 "given twice", hint="give each grid symbol once, each value once")
        grid[name] = sizes
    return grid


def variants(grid: dict, template: str, binds: tuple[str, ...]) -> list:
    """Every combination of ``grid``, each with ``template`` filled in; exit 2 when the template lacks a
    grid symbol (variants would overwrite each other) or a symbol is both fixed and in the grid."""
    fixed = {parse_bind(b).name for b in binds}
    both = sorted(fixed & set(grid))
    if both:
        raise UsageError.one("E-BIND-GRID", f"'{both[0]}' is bound by both --bind and {GRID_OPTION}",
                             hint="bind each symbol either to one size or to a grid of sizes")
    missing = [n for n in grid if "{" + n + "}" not in template]
    if missing:
        raise UsageError.one("E-BIND-GRID", f"the output '{template}' does not mention "
                             f"{', '.join('{' + n + '}' for n in missing)}: the variants would overwrite "
                             "each other", hint="put every grid symbol in -o, e.g. -o 'out/model_"
                             + "_".join(f"{n}{{{n}}}" for n in grid) + ".tosa'")
    names = list(grid)
    return [Variant(dict(zip(names, combo)), _fill(template, dict(zip(names, combo))))
            for combo in itertools.product(*(grid[n] for n in names))]


def _fill(template: str, values: dict) -> str:
    pattern = re.compile("|".join(re.escape("{" + n + "}") for n in values))
    return pattern.sub(lambda m: str(values[m.group(0)[1:-1]]), template)


def convert_variant(graph: Graph, variant: Variant, sources: BindingSources, profile: str | None,
                    level: str | None) -> VariantResult:
    """Bind, specialize, check and emit one variant; any failure is recorded in the result."""
    result = VariantResult(variant)
    clock = StageClock()
    try:
        with clock.measure("bindings"):
            bindings = _variant_bindings(graph, variant, sources)
        result.bindings = [{"name": b.name, "value": b.value, "source": b.source} for b in bindings]
        with clock.measure("specialize"):
            static = api.specialize(graph, bindings.values())
        if profile is not None or level not in (None, "none"):
            with clock.measure("check-target"):
                api.check_profile(static, profile)
                api.check_level(static, level)
        with clock.measure("emit"):
            result.blob = emit_bytes(static, variant.output)
        result.op_count = len(static.ops)
    except TosaconvError as e:
        result.exit_code, result.diagnostics = e.exit_code, list(e.diagnostics)
    except Exception as e:   # a bug in one variant must not stop the others; reported as exit 1
        result.exit_code, result.diagnostics = EXIT_INTERNAL, [internal_diagnostic(e)]
    result.stages = clock.stages
    return result


def _variant_bindings(graph: Graph, variant: Variant, sources: BindingSources) -> BindingSet:
    grid_binds = tuple(f"{n}={v}" for n, v in variant.values.items())
    bindings = collect(graph, replace(sources, binds=sources.binds + grid_binds), steps.solve_input)
    for name, value in variant.values.items():
        if name in bindings.by_name:
            bindings.by_name[name] = replace(bindings.by_name[name], source=f"{GRID_OPTION} {name}={value}")
    return bindings


# --jobs: the worker's copy of the symbolic program and the fixed options, set once per process.
_WORKER: dict = {}


def _init_worker(graph: Graph, model: str, load_options: dict, sources: BindingSources, profile: str | None,
                 level: str | None) -> None:
    if graph is None:   # no fork: this process loads the model itself
        graph = api.load(model, npu_fast=load_options["npu_fast"], int_io=load_options["int_io"],
                         quantize_weights=load_options.get("profile") == "int")
    _WORKER.update(graph=graph, sources=sources, profile=profile, level=level)


def _worker_variant(variant: Variant) -> VariantResult:
    w = _WORKER
    return convert_variant(w["graph"], variant, w["sources"], w["profile"], w["level"])


def run_all(graph: Graph, todo: list, sources: BindingSources, profile: str | None, level: str | None, jobs: int,
            model: str, load_options: dict) -> list:
    """Every variant's result, in ``todo``'s order; ``jobs`` > 1 spreads them over processes."""
    if jobs <= 1 or len(todo) <= 1:
        return [convert_variant(graph, v, sources, profile, level) for v in todo]
    fork = "fork" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if fork else None)
    init = (graph if fork else None, model, load_options, sources, profile, level)
    with ProcessPoolExecutor(min(jobs, len(todo)), mp_context=context, initializer=_init_worker,
                             initargs=init) as pool:
        return list(pool.map(_worker_variant, todo))


def worst(codes: Iterable[int]) -> int:
    """The exit code of the whole grid: an internal error first, then the highest code."""
    return max(codes, key=lambda c: (c == EXIT_INTERNAL, c), default=EXIT_OK)


def variant_entry(r: VariantResult, written: WrittenFile | None) -> dict:
    """One variant in the report."""
    return {"bindings": r.bindings, "grid": r.variant.values, "output": r.variant.output,
            "status": "ok" if r.exit_code == EXIT_OK else "failed", "exit_code": r.exit_code,
            "outputs_written": [{"path": w.path, "kind": w.kind, "bytes": w.size, "sha256": w.sha256}
                                for w in written],
            "static_op_count": r.op_count, "diagnostics": [d.to_json() for d in r.diagnostics],
            "timings": {"stages": [{"stage": n, "seconds": round(s, 6)} for n, s in r.stages],
                        "total_seconds": round(sum(s for _, s in r.stages), 6)}}


@dataclass
class GridJob:
    """The options of one ``convert --bind-grid`` run."""

    model: str
    template: str
    grid: list            # the --bind-grid texts
    sources: BindingSources
    binding_files: tuple
    inputs_path: str | None
    jobs: int = 1
    ir_path: str | None = None
    report_path: str | None = None
    depfile: str | None = None
    profile: str | None = None
    level: str | None = None
    state_as_io: bool = False
    load_options: dict = field(default_factory=dict)


def convert_grid(session: Session, job: GridJob, model_sha256: str) -> Outcome:
    """Load once, convert every variant, stage what succeeded; the Outcome carries the worst exit code."""
    output_kind(job.template)
    todo = variants(parse_grid(job.grid), job.template, job.sources.binds)
    check_outputs(job.model, ir=job.ir_path, report=job.report_path, depfile=job.depfile,
                  **{f"output '{v.output}'": v.output for v in todo})
    graph = steps.load_model(session, job.model, **job.load_options)
    for name, value in todo[0].values.items():   # a name that is no symbol fails every variant: say it once
        _check_symbol(Binding(name, value, f"{GRID_OPTION} {name}"), graph.scope.symbols)
    if job.state_as_io:
        steps.state_as_io(session, graph)
    label = f"converting {len(todo)} variants" + (f" in {job.jobs} processes" if job.jobs > 1 else "")
    with session.stage("variants", label):
        results = run_all(graph, todo, job.sources, job.profile, job.level, job.jobs, job.model,
                          job.load_options)
    entries, written = [], []
    for r in results:
        mine = [session.write(r.variant.output, r.blob, output_kind(r.variant.output))] if r.blob is not None else []
        written += mine
        entries.append(variant_entry(r, mine))
    if job.ir_path:
        written.append(session.write(job.ir_path, steps.print_ir(session, graph).encode("utf-8"), "tosair"))
    code = worst(r.exit_code for r in results)
    doc = _document(session, job, model_sha256, graph, entries, written, code)
    _write_side_files(session, job, doc, written)
    return Outcome(doc, show=lambda renderer: _show(renderer, results, doc, job), exit_code=code)


def _document(session: Session, job: GridJob, sha: str, graph: Graph, entries: list, written: list,
              code: int) -> dict:
    return {"ok": code == EXIT_OK, "exit_code": code, "schema_version": REPORT_SCHEMA_VERSION,
            "tool": {"name": "tosaconv", "version": tool_version()}, "command": "convert",
            "model": {"path": job.model, "sha256": sha, "source": getattr(graph, "source", "") or ""},
            "variants": entries,
            "failed_variants": [e["output"] for e in entries if e["status"] != "ok"],
            "outputs_written": [{"path": w.path, "kind": w.kind, "bytes": w.size, "sha256": w.sha256}
                                for w in written],
            "timings": {"stages": [{"stage": n, "seconds": round(s, 6)} for n, s in session.clock.stages],
                        "total_seconds": round(session.clock.total(), 6)}}


def _write_side_files(session: Session, job: GridJob, doc: dict, written: list) -> None:
    """The report, then the depfile naming every output (the report and the depfile itself included, so a
    Makefile whose rule makes the depfile reruns when any input changes)."""
    targets = [w.path for w in written]
    if job.report_path:
        session.write(job.report_path, dumps(doc).encode("utf-8"), "report")
        targets.append(job.report_path)
    if job.depfile and targets:
        from ..depfile import depfile_text, inputs_read
        deps = inputs_read(job.model, job.binding_files, job.inputs_path)
        session.write(job.depfile, depfile_text(targets + [job.depfile], deps).encode("utf-8"), "depfile")


def _show(renderer: Renderer, results: list, doc: dict, job: GridJob) -> None:
    """Each failed variant's diagnostics on stderr, then one summary line."""
    failed = [r for r in results if r.exit_code != EXIT_OK]
    for r in failed:
        renderer.err.print(f"variant {r.variant.label()} ({r.variant.output}) failed, exit {r.exit_code}:",
                           soft_wrap=True)
        renderer.diagnostics(r.diagnostics, r.exit_code)
    done = len(results) - len(failed)
    tail = f"; {len(failed)} failed: {', '.join(r.variant.label() for r in failed)}" if failed else ""
    renderer.summary(f"converted {os.path.basename(job.model)} → {done} of {len(results)} variants "
                     f"({job.template}) in {doc['timings']['total_seconds']:.2f} s{tail}")
