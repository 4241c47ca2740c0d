"""State as I/O: each TOSA variable becomes a graph input and a graph output the host carries.

A consumer without TOSA's ``variable`` extension keeps no state between
inferences (Vela 5.2 compiles a program with VARIABLEs, but its compiled
model has no state inputs or outputs, so nothing carries over from one step
to the next). :func:`state_as_io` rewrites the program
so the host carries the state instead: variable ``v`` becomes the input
``state_in:v`` (the state a step starts from) and the output ``state_out:v``
(what the step leaves: the value written last, or the input unchanged if the
step never writes it). Each VARIABLE_READ becomes the value current at that
point of the step, each VARIABLE_WRITE makes its operand current, and the
VARIABLE declarations go, so the program needs no ``variable`` extension.
State inputs follow the model's inputs and state outputs its outputs, in
declaration order. The names are a convention, not metadata:
:func:`state_pairs` finds the pairs again in any program (a ``.tosa`` read
back), which is how ``tosaconv run`` chains steps. :func:`variable_warnings`
is the warning every report carries while a program still holds variables.
"""
from __future__ import annotations

from collections.abc import Mapping
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import Any, Optional

import numpy as np

from ..diagnostics import ConversionError, Diagnostic, Severity
from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Graph, Operation, Value
from ..ir.ops import Op
from ..ir.region_rules import same_type
from ..ir.types import TensorType
from ..ir.variable_rules import declared_type
from .rewrite import rewrite

STATE_IN = "state_in:"
STATE_OUT = "state_out:"


@dataclass(frozen=True)
class StatePair:
    """One variable carried as I/O: its name, the input and output that carry it, and its type."""

    variable: str
    type: TensorType

    @property
    def input(self) -> str:
        return STATE_IN + self.variable

    @property
    def output(self) -> str:
        return STATE_OUT + self.variable


State = dict[str, "np.ndarray[Any, Any]"]   # variable name -> its value: the state a host carries


def state_as_io(graph: Graph) -> State:
    """Rewrite ``graph`` in place (see the module docstring); returns ``{variable: initial value}``,
    the state a host starts from (and what :func:`tosaconv.api.run` takes as ``state``)."""
    decls = [op.attrs_as(A.VariableAttrs) for op in graph.ops if op.op is Op.VARIABLE]
    _check_names(graph, [d.name for d in decls])
    current = {d.name: graph.add_input(STATE_IN + d.name, declared_type(d)) for d in decls}

    def visit(op: Operation, b: Builder) -> Optional[list[Value]]:
        if op.op is Op.VARIABLE_READ:
            return [current[op.attrs_as(A.VariableRefAttrs).name]]
        if op.op is Op.VARIABLE_WRITE:
            current[op.attrs_as(A.VariableRefAttrs).name] = op.operands[0]
            return []
        return [] if op.op is Op.VARIABLE else None

    rewrite(graph, visit)
    graph.set_outputs(graph.outputs + list(current.values()),
                      graph.output_names + [STATE_OUT + name for name in current])
    return {d.name: np.array(d.initial, copy=True) for d in decls}


def _check_names(graph: Graph, variables: list[str]) -> None:
    """The state names must be free: a model that already uses one cannot be given the convention."""
    taken = {v.name for v in graph.inputs} | set(graph.output_names)
    clashes = [n for v in variables for n in (STATE_IN + v, STATE_OUT + v) if n in taken]
    if clashes:
        raise ConversionError.one(
            "E-STATE-NAME", f"--state-as-io needs the names {', '.join(map(repr, clashes))}, which the model "
            "already uses for an input or output",
            hint="rename that input or output in the source model")


def state_pairs(graph: Graph) -> list[StatePair]:
    """The state input/output pairs of a program, found by name (``state_in:v`` with ``state_out:v``
    of the same type), in input order."""
    outputs = dict(zip(graph.output_names, graph.outputs))
    pairs = []
    for v in graph.inputs:
        if not v.name.startswith(STATE_IN):
            continue
        out = outputs.get(STATE_OUT + v.name[len(STATE_IN):])
        if out is not None and isinstance(v.type, TensorType) and same_type(out.type, v.type):
            pairs.append(StatePair(v.name[len(STATE_IN):], v.type))
    return pairs


def carry_in(graph: Graph, inputs: Mapping[str, Any], state: Mapping[str, Any]) -> dict[str, Any]:
    """``inputs`` with every state input it lacks taken from ``state`` (by variable name)."""
    out = dict(inputs)
    for p in state_pairs(graph):
        if p.input not in out and p.variable in state:
            out[p.input] = state[p.variable]
    return out


def carry_out(graph: Graph, outputs: Mapping[str, Any], state: State) -> None:
    """Put each state output of a step's ``outputs`` into ``state``, for the next step."""
    for p in state_pairs(graph):
        state[p.variable] = np.array(outputs[p.output], copy=True)


def variable_warnings(graph: Optional[Graph]) -> list[Diagnostic]:
    """A warning when ``graph`` holds TOSA variables (none otherwise, or without a program)."""
    ops = graph.ops if graph is not None else []
    names = [op.attrs_as(A.VariableAttrs).name for op in ops if op.op is Op.VARIABLE]
    if not names:
        return []
    listed = ", ".join(f"'{n}'" for n in names)
    return [Diagnostic(
        "W-STATE-VARIABLES",
        f"the program keeps state in {len(names)} TOSA variable{'s' if len(names) != 1 else ''} ({listed}); "
        "a consumer without the TOSA 'variable' extension keeps no state between inferences",
        notes=("Vela 5.2 compiles such a program, but the compiled model has no state among its inputs and "
               "outputs: on an Ethos-U the state would not carry over from one inference to the next",),
        hint="convert with --state-as-io: each variable becomes an input 'state_in:NAME' and an output "
             "'state_out:NAME' that the host carries from one inference to the next",
        severity=Severity.WARNING)]
