"""The text-IR test format: a ``.tosair`` program in, passes run, the expected ``.tosair`` out.

A case file in ``tests/passes/text/`` reads, as MLIR's lit tests do::

    // RUN: constant-fold dead-code
    // BIND: N=2               (optional: the sizes the semantic check runs at)
    // INPUTS: x=[0,1.5,0]     (optional: fixed values for some inputs, e.g. data an assumption reads)
    // WHY: one line on what the case shows
    tosair 1
    ... the input program ...
    // CHECK:
    tosair 1
    ... the program the passes must produce ...

``RUN`` names passes of the default pipeline (``rank-equalization``,
``broadcast-check``, ``constant-fold``, ``transpose-cancel``, ``dead-code``)
or ``specialize``, which binds the ``BIND`` values and decays the program.
The expected program is written by hand from the pass's contract. Both texts
go through the parser and the printer, and value names are renumbered in
order of definition, so only structure, types, attributes, constants,
locations, symbols and constraints are compared. Constants may be written in
the readable form ``dense<f32 [2] [1.5, -2]>``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tosaconv import api
from tosaconv.ir.parser import parse_graph
from tosaconv.ir.printer import print_graph
from tosaconv.passes.manager import DEFAULT_PIPELINE, run_everywhere
from tosaconv.passes.specialize import specialize

CASES = Path(__file__).parent / "text"
_PASSES = {p.name: p.run for p in DEFAULT_PIPELINE}
_NAME = re.compile(r'%("(?:[^"\\]|\\.)*"|[A-Za-z0-9_.#$-]+)')


@dataclass(frozen=True)
class Case:
    path: Path
    steps: tuple
    bindings: dict
    fixed: dict
    source: str
    expected: str


def load(path: Path) -> Case:
    text = path.read_text()
    head, sep, expected = text.partition("// CHECK:\n")
    assert sep, f"{path.name}: no '// CHECK:' line"
    steps = _directive(head, "RUN").split()
    bindings = dict(_binding(item) for item in _directive(head, "BIND", "").split())
    fixed = {name: json.loads(value) for name, value in map(_fixed, _directive(head, "INPUTS", "").split())}
    assert steps and all(s in _PASSES or s == "specialize" for s in steps), f"{path.name}: RUN {steps}"
    return Case(path, tuple(steps), bindings, fixed, head, expected)


def _directive(text: str, key: str, default=None) -> str:
    m = re.search(rf"^// {key}: (.*)$", text, re.M)
    assert m or default is not None, f"no '// {key}:' line"
    return m.group(1).strip() if m else default


def _binding(item: str) -> tuple:
    name, value = item.split("=")
    return name, int(value)


def _fixed(item: str) -> tuple:
    name, _, value = item.partition("=")
    return name, value


def inputs(case: Case, graph) -> dict:
    """Seeded random inputs at the case's bindings, with the ``INPUTS`` values in place of their random ones."""
    out = api.random_inputs(graph, case.bindings, seed=3)
    for name, value in case.fixed.items():
        assert name in out, f"{case.path.name}: INPUTS names '{name}', not an input"
        out[name] = np.array(value, dtype=out[name].dtype).reshape(out[name].shape)
    return out


def apply(case: Case):
    """The input program after the case's steps."""
    graph = parse_graph(case.source)
    for step in case.steps:
        if step == "specialize":
            graph = specialize(graph, case.bindings)
        else:
            run_everywhere(_PASSES[step], graph)
    return graph


def canonical(text: str) -> str:
    """``text`` parsed and printed, with value names renumbered in order of first appearance."""
    printed = print_graph(parse_graph(text))
    names: dict = {}
    return _NAME.sub(lambda m: "%v" + str(names.setdefault(m.group(1), len(names))), printed)


def all_cases() -> list:
    return sorted(CASES.glob("*.tosair"))
