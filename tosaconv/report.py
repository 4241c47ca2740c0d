"""The JSON report of a command: what was converted, how, and what was written.

``tosaconv convert --report REPORT.json`` writes this document, and ``--json``
prints the same document on stdout. It records the model (path, sha256,
source format), every binding with the source it came from, the symbol
table, every constraint of the ledger with the values it was checked at, the
op histogram (source op → TOSA ops), the TOSA profiles, extensions and level the
program needs with its float islands (``tosa``, from :mod:`tosaconv.analysis`;
of the static program when there is one), the files written with their sha256,
the wall time of each stage, a summary of each array of a reference run, the
state inputs and outputs of a program converted with ``--state-as-io``, and
warnings (a program that still holds TOSA variables).
``schemas/report.schema.json`` describes it; scripts may rely on every field
that schema marks required. :class:`StageClock` measures the stages.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import field
from .records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional

import numpy as np

from .ir.io_quant import describe_io
from .symbolic.expr import dim_str, subs

if TYPE_CHECKING:
    from .bindings import BindingSet
    from .diagnostics import Diagnostic
    from .fileio import WrittenFile
    from .ir.graph import Graph
    from .passes.state_as_io import StatePair
    from .symbolic.constraints import Constraint

REPORT_SCHEMA_VERSION = 1


def tool_version() -> str:
    from . import __version__   # the installed version, as a constant (tests/test_version.py)
    return __version__


def dumps(doc: Mapping[str, Any]) -> str:
    """The report as JSON text (stable key order, as built)."""
    import json   # here: a conversion that prints no JSON need not load it (start-up, issue 13)
    return json.dumps(doc, indent=2, default=str) + "\n"


@dataclass
class StageClock:
    """Wall time per named stage, in the order the stages ran."""

    stages: list[tuple[str, float]] = field(default_factory=list)   # (name, seconds)
    _start: float = field(default_factory=time.perf_counter)

    @contextmanager
    def measure(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.stages.append((name, time.perf_counter() - t0))

    def total(self) -> float:
        return time.perf_counter() - self._start


@dataclass
class ReportData:
    """What a command learned along the way; ``document`` turns it into the report."""

    command: str
    model_path: str
    model_sha256: Optional[str]            # None: hashed when the document is built (cli.steps.write_report)
    graph: Optional[Graph] = None         # the loaded (symbolic or static) Graph; set before any document
    static: Optional[Graph] = None        # the specialized Graph, if any
    bindings: Optional[BindingSet] = None
    histogram: dict[str, int] = field(default_factory=dict)
    written: list[WrittenFile] = field(default_factory=list)
    run: Optional[dict[str, Any]] = None
    symbolic: Optional[dict[str, Any]] = None   # convert --keep-symbols: constraints the file asserts / leaves unchecked
    clock: StageClock = field(default_factory=StageClock)

    def document(self) -> dict[str, Any]:
        from .analysis import summary as tosa_summary   # lazy, as tool_version
        values = self.bindings.values() if self.bindings is not None else {}
        loaded, program = self.loaded(), self.program()
        return {
            "ok": True, "exit_code": 0, "schema_version": REPORT_SCHEMA_VERSION,
            "tool": {"name": "tosaconv", "version": tool_version()},
            "command": self.command,
            "model": {"path": self.model_path, "sha256": self.model_sha256,
                      "source": loaded.source or ""},
            "bindings": [{"name": b.name, "value": b.value, "source": b.source} for b in self.bindings or ()],
            "symbols": symbols_section(loaded, self.bindings),
            "constraints": [constraint_entry(c, values) for c in loaded.ledger.entries],
            "op_histogram": self.histogram,
            "static_ops": dict(sorted(self.static.histogram().items())) if self.static is not None else None,
            "tosa": tosa_summary(program),
            "outputs_written": [{"path": w.path, "kind": w.kind, "bytes": w.size, "sha256": w.sha256}
                                for w in self.written],
            "timings": {"stages": [{"stage": n, "seconds": round(s, 6)} for n, s in self.clock.stages],
                        "total_seconds": round(self.clock.total(), 6)},
            "run": self.run,
            "state_io": [state_entry(p) for p in _state_pairs(program)],
            "warnings": [d.to_json() for d in self.warnings()],
            "io": describe_io(program),
            **({"symbolic_tosa": self.symbolic} if self.symbolic is not None else {}),
        }

    def loaded(self) -> Graph:
        """The program the command loaded (every command sets it before it builds a report)."""
        if self.graph is None:
            raise ValueError(f"the {self.command} report has no loaded program")
        return self.graph

    def program(self) -> Graph:
        """The program the command produced: the static one if any, else the loaded one."""
        return self.static if self.static is not None else self.loaded()

    def warnings(self) -> list[Diagnostic]:
        """Diagnostics of severity warning about that program."""
        from .passes.state_as_io import variable_warnings   # lazy: the CLI loads this module at start-up
        program = self.program()
        return variable_warnings(program) + list(getattr(program, "import_warnings", ()))


def _state_pairs(graph: Graph) -> list[StatePair]:
    from .passes.state_as_io import state_pairs   # lazy, as in ReportData.warnings
    return state_pairs(graph)


def state_entry(pair: StatePair) -> dict[str, Any]:
    """One variable carried as I/O: the input and output that carry it, and its type."""
    return {"variable": pair.variable, "input": pair.input, "output": pair.output,
            "dtype": pair.type.dtype.value, "shape": [d if isinstance(d, int) else dim_str(d) for d in pair.type.shape]}


def symbols_section(graph: Graph, bindings: BindingSet | None) -> list[dict[str, Any]]:
    bound = bindings.by_name if bindings is not None else {}
    out = []
    for name, info in graph.scope.symbols.items():
        b = bound.get(name)
        out.append({"name": name, "origin": info.origin, "kind": info.kind.value, "data_dependent": info.data_dependent,
                    "bound": None if info.bound is None else dim_str(info.bound),
                    "value": None if b is None else b.value, "source": None if b is None else b.source})
    return out


def constraint_entry(c: Constraint, values: Mapping[str, int]) -> dict[str, Any]:
    """One ledger entry with its provenance and, when every symbol is bound, its values."""
    lhs, rhs = subs(c.lhs, values), subs(c.rhs, values)
    checked = isinstance(lhs, int) and isinstance(rhs, int)   # (a symbol left unbound: an expression remains)
    return {"text": c.text(), "kind": c.kind.value, "status": c.status.value, "op_type": c.provenance.op_type,
            "node": c.provenance.node, "location": c.provenance.where(), "reason": c.provenance.reason,
            "lhs_value": lhs if checked else None, "rhs_value": rhs if checked else None,
            "holds": c.holds(lhs, rhs) if isinstance(lhs, int) and isinstance(rhs, int) else None}


def array_summary(name: str, array: np.ndarray[Any, Any], origin: str = "") -> dict[str, Any]:
    """Name, shape, dtype and finite statistics of one array (JSON-safe: no NaN)."""
    a = np.asarray(array)
    entry: dict[str, Any] = {"name": name, "shape": list(a.shape), "dtype": str(a.dtype)}
    if origin:
        entry["origin"] = origin
    numeric = a.astype(np.float64) if a.size else a
    finite = numeric[np.isfinite(numeric)] if a.size else numeric
    entry["nonfinite"] = int(a.size - finite.size)
    entry.update({k: (float(f(finite)) if finite.size else None)
                  for k, f in (("min", np.min), ("max", np.max), ("mean", np.mean))})
    return entry


def run_section(inputs: Mapping[str, Any], outputs: Mapping[str, Any], origin: str, npz_path: str) -> dict[str, Any]:
    return {"npz": npz_path,
            "inputs": [array_summary(n, a, origin) for n, a in inputs.items()],
            "outputs": [array_summary(n, a) for n, a in outputs.items()]}
