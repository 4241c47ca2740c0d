"""Symbol bindings from every command-line source, each remembering where it came from.

A binding can come from ``--bind NAME=INT``, a ``--bindings FILE.json``
object, ``--input-shape INPUT=2,16`` (solved against the model's input
shapes) or the shapes of the arrays in ``--inputs IN.npz``. Each
:class:`Binding` keeps the text of its source (``--bind batch=2``,
``inputs.npz array 'x'``), so that two sources that disagree are reported
with both sources and both values (a ShapeError, exit 4). Malformed text,
bad JSON, values below 1 and names that are not symbols of the model are
usage errors (exit 2). The rules for bindings files are the ones
``schemas/bindings.schema.json`` states.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field, replace

from .diagnostics import ShapeError, TosaconvError, UsageError
from .fileio import read_bytes


@dataclass(frozen=True)
class Binding:
    name: str
    value: int
    source: str


@dataclass
class BindingSet:
    """Bindings by symbol name; adding a different value for a bound name is an error."""

    by_name: dict = field(default_factory=dict)

    def add(self, binding: Binding):
        known = self.by_name.get(binding.name)
        if known is None:
            self.by_name[binding.name] = binding
        elif known.value != binding.value:
            raise _conflict(known, binding)

    def values(self) -> dict:
        return {name: b.value for name, b in self.by_name.items()}

    def __iter__(self):
        return iter(self.by_name.values())

    def __len__(self):
        return len(self.by_name)


def _conflict(a: Binding, b: Binding) -> ShapeError:
    return ShapeError.one(
        "E-BINDING-CONFLICT",
        f"symbol '{a.name}' is bound to {a.value} by {a.source} but to {b.value} by {b.source}",
        notes=(f"{a.source}: {a.name}={a.value}", f"{b.source}: {a.name}={b.value}"),
        hint="make the two sources agree, or drop one of them")


def parse_bind(text: str) -> Binding:
    """``NAME=INT`` from ``--bind``."""
    name, eq, value = text.rpartition("=")
    if not eq or not name.strip():
        raise UsageError.one("E-BIND-SYNTAX", f"--bind expects NAME=INT, got '{text}'",
                             hint="for example --bind batch=2")
    return Binding(name.strip(), _positive_int(value.strip(), f"--bind {text}"), f"--bind {text}")


def _positive_int(text: str, where: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise UsageError.one("E-BIND-SYNTAX", f"{where}: '{text}' is not an integer",
                             hint="symbol values are positive integers") from None
    if value < 1:
        raise UsageError.one("E-BIND-VALUE", f"{where}: {value} is not a positive integer",
                             hint="symbols denote sizes, which are at least 1")
    return value


def load_bindings_file(path: str) -> list:
    """The bindings of a JSON object file ``{"batch": 2, "seq": 16}``."""
    raw = read_bytes(path, "bindings file")
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError.one("E-BINDINGS-FILE", f"bindings file '{path}' is not valid JSON: {e}",
                             hint='write an object of symbol names to sizes, e.g. {"batch": 2}') from None
    return [Binding(name, value, path) for name, value in validate_bindings_doc(doc, path).items()]


def validate_bindings_doc(doc, path: str) -> dict:
    """``doc`` as name → int, by the rules of schemas/bindings.schema.json."""
    if not isinstance(doc, dict):
        raise UsageError.one("E-BINDINGS-FILE", f"bindings file '{path}' must hold a JSON object, "
                             f"not {type(doc).__name__}", hint='for example {"batch": 2, "seq": 16}')
    out = {}
    for name, value in doc.items():
        if not name:
            raise UsageError.one("E-BINDINGS-FILE", f"bindings file '{path}' has an empty symbol name")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 1:
            raise UsageError.one("E-BINDINGS-FILE", f"bindings file '{path}': '{name}' is {json.dumps(value)}, "
                                 "not a positive integer", hint="symbols denote sizes, which are at least 1")
        out[name] = int(value)
    return out


def parse_input_shape(text: str) -> tuple:
    """``INPUT=2,16`` from ``--input-shape`` as (input name, shape tuple); ``x=`` is a scalar."""
    name, eq, dims = text.rpartition("=")
    if not eq or not name.strip():
        raise UsageError.one("E-INPUT-SHAPE-SYNTAX", f"--input-shape expects INPUT=D0,D1,..., got '{text}'",
                             hint="for example --input-shape input_ids=2,16")
    parts = [p.strip() for p in dims.split(",")] if dims.strip() else []
    shape = tuple(_positive_int(p, f"--input-shape {text}") for p in parts)
    return name.strip(), shape


@dataclass
class BindingSources:
    """The raw binding options of one command, before the model is known."""

    binds: tuple = ()          # --bind texts
    files: tuple = ()          # --bindings paths
    input_shapes: tuple = ()   # --input-shape texts
    arrays: dict = field(default_factory=dict)   # --inputs arrays by name
    arrays_path: str = ""

    def any(self) -> bool:
        return bool(self.binds or self.files or self.input_shapes or self.arrays)


def collect(graph, sources: BindingSources, solve) -> BindingSet:
    """Every binding of ``sources`` for ``graph``; ``solve`` is ``api.solve_bindings``."""
    symbols = graph.scope.symbols
    explicit = [parse_bind(t) for t in sources.binds]
    for path in sources.files:
        explicit.extend(load_bindings_file(path))
    for b in explicit:
        _check_symbol(b, symbols)
    out = BindingSet()
    for b in explicit:
        out.add(b)
    for text in sources.input_shapes:
        name, shape = parse_input_shape(text)
        _check_input(name, graph, f"--input-shape {text}")
        _add_solved(out, solve, graph, {name: shape}, f"--input-shape {text}")
    input_names = {v.name for v in graph.inputs}
    for name, array in sources.arrays.items():
        if name in input_names:
            _add_solved(out, solve, graph, {name: tuple(array.shape)}, f"{sources.arrays_path} array '{name}'")
    return out


def _add_solved(out: BindingSet, solve, graph, shapes: dict, source: str):
    try:
        solved = solve(graph, shapes)
    except TosaconvError as e:
        e.diagnostics = [replace(d, notes=d.notes + (f"while solving symbols from {source}",))
                         for d in e.diagnostics]
        raise
    for name, value in sorted(solved.items()):
        out.add(Binding(name, int(value), source))


def _check_symbol(b: Binding, symbols: dict):
    if b.name in symbols:
        return
    names = sorted(symbols)
    listing = ", ".join(names) if names else "none (every dim is static)"
    close = difflib.get_close_matches(b.name, names, n=1)
    raise UsageError.one(
        "E-UNKNOWN-SYMBOL", f"{b.source}: '{b.name}' is not a symbol of this model",
        notes=(f"the model's symbols: {listing}",),
        hint=f"did you mean '{close[0]}'?" if close else "run 'tosaconv inspect MODEL' to list its symbols")


def _check_input(name: str, graph, source: str):
    names = [v.name for v in graph.inputs]
    if name not in names:
        raise UsageError.one("E-UNKNOWN-INPUT", f"{source}: '{name}' is not an input of this model",
                             notes=(f"the model's inputs: {', '.join(names) or 'none'}",))
