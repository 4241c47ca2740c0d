"""Tensor names for a graph being written: unique, stable, and the model's own.

The reference model finds inputs and outputs by tensor name, so graph inputs
keep their names and each output tensor is named after its graph output.
Every other value keeps its IR name unless that clashes with a name already
taken, in which case it gets ``_2``, ``_3``... Names depend only on the graph's
order and names, never on object identity or dict order, so writing the same
graph twice gives the same bytes. The values of regions (control flow) take
fresh names from the same pool, so names are unique across the whole file.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable
from ..ir.graph import fresh_name

from .errors import EmitError

if TYPE_CHECKING:
    from ..ir.graph import Graph, Value


class TensorNames:
    """Value → tensor name, plus a pool of taken names for fresh ones."""

    def __init__(self, reserved: Iterable[str]) -> None:
        self._by_value: dict = {}
        self._used = set(reserved)
        self.of = self._by_value.__getitem__   # ``names[value]`` without a Python call (writers map it over lists)

    def __contains__(self, value: Value) -> bool:
        return value in self._by_value

    def __getitem__(self, value: Value) -> str:
        return self._by_value[value]

    def bind(self, value: Value, name: str) -> None:
        self._by_value[value] = name
        self._used.add(name)

    def fresh(self, base: str) -> str:
        return fresh_name(base, self._used)


def assign_names(graph: Graph) -> tuple[TensorNames, list[tuple[Value, str]]]:
    """``(names, copies)``: tensor names of all values, and the ``(value, output name)``
    pairs that need an IDENTITY because the value already has another name."""
    _check_outputs(graph)
    names = TensorNames([v.name for v in graph.inputs] + list(graph.output_names))
    for v in graph.inputs:
        names.bind(v, v.name)
    copies = []
    for value, out_name in zip(graph.outputs, graph.output_names):
        if value in names:
            copies.append((value, out_name))
        else:
            names.bind(value, out_name)
    for op in graph.ops:
        for r in op.results:
            if r not in names:
                names.bind(r, names.fresh(r.name))
    return names, copies


def assign_region_names(graph: Graph, names: TensorNames) -> tuple[list[tuple[Value, str]], list[str]]:
    """Names for a region's values, fresh in the file-wide pool (the reference model wants tensor
    names unique across regions); returns ``(copies, output tensor names)`` as above."""
    for v in graph.inputs:
        names.bind(v, names.fresh(v.name))
    copies, outputs = [], []
    for value, out_name in zip(graph.outputs, graph.output_names):
        name = names.fresh(out_name)
        if value in names:      # a region input, or a value returned twice: copied
            copies.append((value, name))
        else:
            names.bind(value, name)
        outputs.append(name)
    for op in graph.ops:
        for r in op.results:
            if r not in names:
                names.bind(r, names.fresh(r.name))
    return copies, outputs


def _check_outputs(graph: Graph) -> None:
    if len(graph.outputs) != len(graph.output_names):
        raise EmitError(f"graph has {len(graph.outputs)} outputs but {len(graph.output_names)} output names")
    if not graph.outputs:
        raise EmitError("graph has no outputs")
    seen = set()
    input_names = {v.name for v in graph.inputs}
    if len(input_names) != len(graph.inputs):
        raise EmitError("two graph inputs share a name")
    for name in graph.output_names:
        if name in seen:
            raise EmitError(f"graph output name '{name}' is used twice")
        if name in input_names:
            raise EmitError(f"graph output '{name}' has the name of a graph input; "
                            f"TOSA needs a distinct output tensor")
        seen.add(name)
