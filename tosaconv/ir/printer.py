"""Print a graph as ``.tosair`` text: the readable, parsable form of the IR.

The text is what ``tosaconv import`` writes and ``--ir`` dumps, so a person
debugging a conversion must be able to read it, and :mod:`.parser` must read
it back to an equivalent graph. It is MLIR-flavoured: a ``tosair 1`` header,
the source, the symbol table, the constraint ledger, the importers' float reasons
(``float_reason "Sigmoid 's'" "why"``), then one ``func`` with one
op per line (``%y = RESHAPE(%x, %d0) {new_shape = [-1, 16]} : tensor<...>
loc(onnx Reshape "r")``). A control-flow op's regions are attribute values
(``then_graph = graph @then(%a: ...) { ... }``) printed over several lines,
each with its own constraints, ops and ``return``. Attributes are printed generically from the field
types of the op's attribute dataclass (:func:`field_types`), so no op needs
printing code of its own. Human text (symbol origins, constraint reasons, node
names) is always a quoted string, never a comment, because it must round-trip.
Output is deterministic: it depends only on the graph.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ..symbolic.constraints import Constraint, Status
from ..symbolic.expr import Dim, dim_str, format_symbol
from ..symbolic.scope import SymbolInfo
from .attrs import Attrs, field_types
from .dtypes import DType
from .graph import Graph, Operation
from .io_quant import dtype_text, edge_text
from .location import Location

if TYPE_CHECKING:   # numpy.typing costs ~7 ms of start-up (issue 13); annotations only
    from numpy.typing import ArrayLike, DTypeLike

FORMAT_VERSION = 1
PREVIEW_LIMIT = 8  # constants with at most this many elements also show their values in a comment

_BARE_VALUE = re.compile(r"[A-Za-z0-9_.]+\Z")
_BARE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")
_ARRAY_KINDS = {"b": "bool", "i": "i", "u": "u", "f": "f"}


def quote(text: str) -> str:
    """A double-quoted string literal (JSON escapes), kept on one line."""
    import json   # here: a conversion that prints no JSON need not load it (start-up, issue 13)
    return json.dumps(text, ensure_ascii=False)


def value_ref(name: str) -> str:
    """``%name`` bare when it is a simple name, else ``%"quoted"`` (ONNX names hold ``/ : .``)."""
    return "%" + (name if _BARE_VALUE.match(name) else quote(name))


def word(text: str) -> str:
    """An identifier-like string (op types, output names, sources): bare when plain, else quoted."""
    return text if _BARE_WORD.match(text) else quote(text)


def array_dtype_name(dtype: DTypeLike) -> str:
    """``f32``, ``i64``, ``u8``, ``bool``: the numpy element type of a dense constant."""
    dt = np.dtype(dtype)
    if dt.kind not in _ARRAY_KINDS:
        raise TypeError(f"a dense constant cannot hold elements of type {dt}")
    if dt.kind == "b":
        return "bool"
    return f"{_ARRAY_KINDS[dt.kind]}{dt.itemsize * 8}"


# -- attribute values, by declared field type ------------------------------------

def _int_text(v: int) -> str:
    return str(int(v))


def _float_text(v: float) -> str:
    # An int stored in a float field stays an int (an integer CLAMP's bounds), so the type survives.
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return str(int(v))
    return repr(float(v))


def _bool_text(v: bool) -> str:
    return "true" if v else "false"


def _dims_text(v: Iterable[Dim]) -> str:
    return "[" + ", ".join(dim_str(d) for d in v) + "]"


def dense_text(array: ArrayLike) -> str:
    """``dense<f32 [2, 3] base64 "...">``: little-endian bytes, bools as one byte each."""
    import base64   # here: a conversion to .tosa prints no constant and need not load it (start-up, issue 13)
    a = np.asarray(array)
    little = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
    data = base64.b64encode(little.tobytes()).decode("ascii")
    return f'dense<{array_dtype_name(a.dtype)} {_dims_text(a.shape)} base64 "{data}">'


def region_text(graph: Graph) -> str:
    """``graph @name(%in: type, ...) {`` constraints, ops, return ``}``: a region, over several lines."""
    lines = [f"graph {_signature(graph)}"]
    lines += ["  " + constraint_text(c) for c in graph.ledger.entries]
    lines += _body(graph) + ["}"]
    return "\n".join(lines)


# A field's value has the field's declared type, which the key names: each writer takes that one.
_VALUE_TEXT: dict[type, Callable[[Any], str]] = {
    int: _int_text, float: _float_text, bool: _bool_text, str: quote,
    DType: lambda v: str(v.value), tuple: _dims_text, np.ndarray: dense_text, Graph: region_text,
}


class NoTextForm(TypeError):
    """An op's attributes hold a value the ``.tosair`` text cannot write (``op`` names the op)."""

    def __init__(self, message: str, op: Optional[Operation] = None) -> None:
        super().__init__(message)
        self.op = op


def attr_value_text(field_type: type, value: Any) -> str:
    if field_type not in _VALUE_TEXT:
        raise NoTextForm(f"attribute fields of type {getattr(field_type, '__name__', field_type)} have no text form")
    return _VALUE_TEXT[field_type](value)


def attrs_text(attrs: Attrs) -> str:
    """`` {name = value, ...}`` in declaration order, or ``""`` for an attribute class without fields."""
    attrs_class: type = type(attrs)   # a plain ``type`` is Hashable to mypy, as lru_cache asks
    items = [f"{name} = {attr_value_text(t, getattr(attrs, name))}" for name, t in field_types(attrs_class)]
    return " {" + ", ".join(items) + "}" if items else ""


# -- locations, symbols, constraints ---------------------------------------------

def location_text(loc: Location) -> str:
    return f"loc({_location_body(loc)})"


def _location_body(loc: Location) -> str:
    plain = f"{word(loc.source)} {word(loc.op_type)} {quote(loc.name)}"
    if not loc.fused:
        return plain
    parts = "fused[" + ", ".join(_location_body(p) for p in loc.fused) + "]"
    first = loc.fused[0]
    if (first.source, first.op_type, first.name) == (loc.source, loc.op_type, loc.name):
        return parts  # the usual case (Location.fuse): the head is the first part
    return f"{plain} {parts}"


def symbol_text(info: SymbolInfo) -> str:
    kind = info.kind.value + ("" if info.bound is None else f"({dim_str(info.bound)})")
    out = f"symbol {format_symbol(info.name)} : {kind}"
    if info.input_name is not None:
        out += f" input {value_ref(info.input_name)}"
    if info.axis is not None:
        out += f" axis {info.axis}"
    if info.data_dependent:
        out += " data_dependent"
    return out + f" origin {quote(info.origin)}"


def constraint_text(c: Constraint) -> str:
    p = c.provenance
    return (f"constraint {c.kind.value}({dim_str(c.lhs)}, {dim_str(c.rhs)}) "
            f"at {word(p.op_type)} {quote(p.node)} reason {quote(p.reason)}"
            + ("" if c.status is Status.CHECKED_AT_BINDING else f" status {c.status.value}"))


# -- ops and the graph ---------------------------------------------------------------

def _preview(attrs: Attrs) -> str:
    attrs_class: type = type(attrs)
    for name, t in field_types(attrs_class):
        array = getattr(attrs, name)
        if t is np.ndarray and np.asarray(array).size <= PREVIEW_LIMIT:
            return f"  // {np.asarray(array).tolist()}"
    return ""


def op_text(op: Operation) -> str:
    results = ", ".join(value_ref(v.name) for v in op.results)
    operands = ", ".join(value_ref(v.name) for v in op.operands)
    try:
        attrs = attrs_text(op.attrs)
    except NoTextForm as e:
        raise NoTextForm(str(e), op) from None
    out = (f"{results} = " if results else "") + f"{op.op.name}({operands}){attrs}"
    if op.results:
        out += " : " + ", ".join(str(v.type) for v in op.results)
    return out + " " + location_text(op.location) + _preview(op.attrs)


def _signature(graph: Graph) -> str:
    inputs = ", ".join(f"{value_ref(v.name)}: {v.type}" for v in graph.inputs)
    return f"@{word(graph.name)}({inputs}) {{"


def _body(graph: Graph) -> list[str]:
    """The ops and the return line, indented by two spaces (a region's lines one level more)."""
    return ["  " + op_text(op).replace("\n", "\n  ") for op in graph.ops] + [_return(graph)]


def _return(graph: Graph) -> str:
    items = [f"{value_ref(v.name)} as {word(n)}" for v, n in zip(graph.outputs, graph.output_names)]
    return "  return" + (" " + ", ".join(items) if items else "")


def _io_lines(graph: Graph) -> list[str]:
    """``int_io`` when --int-io made the edges, then the quantization of each input and output."""
    lines = ["int_io"] if graph.int_io else []
    lines += [edge_text("input", n, q) for n, q in graph.input_quant.items()]
    lines += [edge_text("output", n, q) for n, q in graph.output_quant.items()]
    lines += [dtype_text("input", n, d) for n, d in graph.input_dtypes.items()]
    return lines + [dtype_text("output", n, d) for n, d in graph.output_dtypes.items()]


def print_graph(graph: Graph) -> str:
    """The ``.tosair`` text of ``graph`` (ends with a newline)."""
    lines = [f"tosair {FORMAT_VERSION}"]
    if graph.source:
        lines.append(f"source {quote(graph.source)}")
    lines += [symbol_text(info) for info in graph.scope.symbols.values()]
    lines += [constraint_text(c) for c in graph.ledger.entries]
    lines += [f"float_reason {quote(loc)} {quote(why)}" for loc, why in graph.float_reasons.items()]
    lines += _io_lines(graph)
    lines.append("func " + _signature(graph))
    lines += _body(graph) + ["}"]
    return "\n".join(lines) + "\n"
