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

import re
from dataclasses import field, replace
from .records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .diagnostics import ShapeError, TosaconvError, UsageError
from .fileio import read_bytes
from .limits import MAX_DIM

if TYPE_CHECKING:
    from .ir.graph import Graph

    from .symbolic.scope import SymbolInfo

    Shapes = dict[str, tuple[int, ...]]   # input name -> its shape
    Solver = Callable[[Graph, Shapes], dict[str, int]]   # input shapes -> the symbol values they fix


@dataclass(frozen=True)
class Binding:
    name: str
    value: int
    source: str


@dataclass
class BindingSet:
    """Bindings by symbol name; adding a different value for a bound name is an error."""

    by_name: dict[str, Binding] = field(default_factory=dict)

    def add(self, binding: Binding) -> None:
        known = self.by_name.get(binding.name)
        if known is None:
            self.by_name[binding.name] = binding
        elif known.value != binding.value:
            raise _conflict(known, binding)

    def values(self) -> dict[str, int]:
        return {name: b.value for name, b in self.by_name.items()}

    def __iter__(self) -> Iterator[Binding]:
        return iter(self.by_name.values())

    def __len__(self) -> int:
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


_DIGITS = re.compile(r"[0-9]+")    # ASCII digits only: no sign, '_', exponent, point or other scripts
_MAX_NESTING = 32                   # a bindings file is one flat object; deeper documents are refused unparsed
_SIZE_HINT = f"symbols denote sizes: whole numbers from 1 to {MAX_DIM} (TOSA shapes are int32)"


def _positive_int(text: str, where: str) -> int:
    if not _DIGITS.fullmatch(text):
        raise UsageError.one("E-BIND-SYNTAX", f"{where}: '{_clip(text)}' is not an integer written in "
                             "decimal digits", hint=_SIZE_HINT)
    if len(text.lstrip("0")) > len(str(MAX_DIM)):
        raise UsageError.one("E-BIND-VALUE", f"{where}: {_clip(text)} is above {MAX_DIM}", hint=_SIZE_HINT)
    return _in_range(int(text), where)


def _in_range(value: int, where: str) -> int:
    if value < 1:
        raise UsageError.one("E-BIND-VALUE", f"{where}: {value} is not a positive integer",
                             hint="symbols denote sizes, which are at least 1")
    if value > MAX_DIM:
        raise UsageError.one("E-BIND-VALUE", f"{where}: {value} is above {MAX_DIM}, the largest TOSA dim",
                             hint=_SIZE_HINT)
    return value


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


class _NotInteger(str):
    """A JSON number or constant of a bindings file that is not a plain integer (its text)."""


def _json_int(text: str) -> int | str:
    # beyond Python's own limit on converting digits (4300) a number stays text; it is refused either way
    return _NotInteger(text) if len(text) > 4000 else int(text)


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    names = [name for name, _ in pairs]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise ValueError(f"the name '{_clip(duplicate)}' appears twice")
    return dict(pairs)


def _nesting(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in a JSON text (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            escaped, in_string = (False, True) if escaped else (byte == 0x5C, byte != 0x22)
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def load_bindings_file(path: str) -> list[Binding]:
    """The bindings of a JSON object file ``{"batch": 2, "seq": 16}``.

    Numbers are taken exactly as written: ``2.0``, ``1E2``, ``NaN``, ``Infinity`` and integers of more
    digits than TOSA's int32 dims are refused, as are duplicate names and nesting deeper than a flat
    object could need (checked before parsing, so a 10,000-deep document is not recursed into)."""
    raw = read_bytes(path, "bindings file")
    hint = 'write an object of symbol names to sizes, e.g. {"batch": 2}'
    if _nesting(raw) > _MAX_NESTING:
        raise UsageError.one("E-BINDINGS-FILE", f"bindings file '{path}' nests arrays or objects more than "
                             f"{_MAX_NESTING} deep", hint=hint)
    try:
        import json   # here: a conversion that prints no JSON need not load it (start-up, issue 13)
        doc = json.loads(raw, parse_int=_json_int, parse_float=_NotInteger, parse_constant=_NotInteger,
                         object_pairs_hook=_json_pairs)
    except (UnicodeDecodeError, ValueError) as e:
        raise UsageError.one("E-BINDINGS-FILE", f"bindings file '{path}' is not valid JSON: {e}",
                             hint=hint) from None
    return [Binding(name, value, path) for name, value in validate_bindings_doc(doc, path).items()]


def validate_bindings_doc(doc: object, path: str) -> dict[str, int]:
    """``doc`` as name → int, by the rules of schemas/bindings.schema.json."""
    if not isinstance(doc, dict):
        raise UsageError.one("E-BINDINGS-FILE", f"bindings file '{path}' must hold a JSON object, "
                             f"not {type(doc).__name__}", hint='for example {"batch": 2, "seq": 16}')
    out: dict[str, int] = {}
    for name, value in doc.items():
        if not name:
            raise UsageError.one("E-BINDINGS-FILE", f"bindings file '{path}' has an empty symbol name")
        if isinstance(value, (bool, _NotInteger)) or not isinstance(value, int) or not 1 <= value <= MAX_DIM:
            import json   # here: a conversion that prints no JSON need not load it (start-up, issue 13)
            shown = _clip(value) if isinstance(value, _NotInteger) else _clip(json.dumps(value, default=str))
            what = f"above {MAX_DIM}, the largest TOSA dim" if isinstance(value, int) and value > MAX_DIM \
                and not isinstance(value, bool) else "not a positive integer"
            raise UsageError.one("E-BINDINGS-FILE", f"bindings file '{path}': '{_clip(name)}' is {shown}, {what}",
                                 hint=_SIZE_HINT)
        out[name] = value
    return out


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
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

    binds: tuple[str, ...] = ()          # --bind texts
    files: tuple[str, ...] = ()          # --bindings paths
    input_shapes: tuple[str, ...] = ()   # --input-shape texts
    arrays: dict[str, Any] = field(default_factory=dict)   # --inputs arrays by name
    arrays_path: str = ""

    def any(self) -> bool:
        return bool(self.binds or self.files or self.input_shapes or self.arrays)


def collect(graph: Graph, sources: BindingSources, solve: Solver) -> BindingSet:
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
    _add_representatives(out, graph)
    return out


def _add_representatives(out: BindingSet, graph: Graph) -> None:
    """Bind the symbol the types use for each bound alias (``--bind j=3`` after the ledger made j an alias of
    k binds k=3 too), unless it is bound already (then the ledger entry ``k == j`` checks the two agree)."""
    for b in list(out):
        name = graph.ledger.representative(b.name)
        if name is not None and name not in out.by_name:
            out.add(Binding(name, b.value, f"{b.source} (through '{b.name}', which the ledger makes equal to "
                                           f"'{name}')"))


def _add_solved(out: BindingSet, solve: Solver, graph: Graph, shapes: Shapes, source: str) -> None:
    try:
        solved = solve(graph, shapes)
    except TosaconvError as e:
        e.diagnostics = [replace(d, notes=d.notes + (f"while solving symbols from {source}",))
                         for d in e.diagnostics]
        raise
    for name, value in sorted(solved.items()):
        out.add(Binding(name, int(value), source))


def _check_symbol(b: Binding, symbols: dict[str, SymbolInfo]) -> None:
    if b.name in symbols:
        return
    names = sorted(symbols)
    listing = ", ".join(names) if names else "none (every dim is static)"
    import difflib   # only for this error (start-up, issue 13)
    close = difflib.get_close_matches(b.name, names, n=1)
    raise UsageError.one(
        "E-UNKNOWN-SYMBOL", f"{b.source}: '{b.name}' is not a symbol of this model",
        notes=(f"the model's symbols: {listing}",),
        hint=f"did you mean '{close[0]}'?" if close else "run 'tosaconv inspect MODEL' to list its symbols")


def _check_input(name: str, graph: Graph, source: str) -> None:
    names = [v.name for v in graph.inputs]
    if name not in names:
        raise UsageError.one("E-UNKNOWN-INPUT", f"{source}: '{name}' is not an input of this model",
                             notes=(f"the model's inputs: {', '.join(names) or 'none'}",))
