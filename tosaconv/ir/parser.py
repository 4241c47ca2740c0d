"""Parse ``.tosair`` text (what :mod:`.printer` writes) back into a Graph.

A small recursive-descent parser over a character cursor that knows line and
column, so every error is a :class:`ParseError` that says where and what was
expected; malformed text never escapes as a raw exception. Attributes are read
generically from the field types of the op's attribute dataclass, dims with
:func:`~tosaconv.symbolic.parse.parse_dim`. Each op's printed result types are
checked against its shape rule (:func:`.verifier.type_problems`), so a parsed
graph always verifies; EXTRACT_DIM's data-dependent type is taken as printed.
A region (a control-flow op's graph-valued attribute) is parsed like the func,
with its own value names and ledger, sharing the symbol table.
"""
from __future__ import annotations

import base64
import enum
import math
from dataclasses import MISSING, fields
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ..symbolic.constraints import Constraint, Kind, Provenance, Status
from ..symbolic.expr import Dim
from ..symbolic.scope import ExtentKind, SymbolInfo
from .dtypes import DType
from .graph import Graph, Operation, Value
from .location import Location
from .ops import OPS, OpDef
from .printer import FORMAT_VERSION
from .attrs import Attrs, field_types
from .types import IndexType, TensorType, ValueType
from .verifier import arity_problem, type_problems
from .io_quant import EdgeQuant
from .lexer import ParseError  # noqa: F401  (re-exported: part of the parser's API)
from .lexer import Cursor, IDENT, OP_NAME, INT, DIGITS, FLOAT, BOOL, ARRAY_DTYPE

_E = TypeVar("_E", bound=enum.Enum)


def parse_graph(text: str) -> Graph:
    """The graph that ``text`` describes (see :func:`.printer.print_graph`)."""
    return _Parser(text).graph_()


class _Parser(Cursor):
    """The grammar: header, symbols, constraints, then one func."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.graph = Graph()
        self.env: dict[str, Value] = {}  # value name -> Value

    def graph_(self) -> Graph:
        self.expect_keyword("tosair", "at the start of the text")
        self.skip()
        version_pos = self.pos
        if self.integer("the format version") != FORMAT_VERSION:
            raise self.error(f"unsupported tosair version (this reader knows {FORMAT_VERSION})", version_pos)
        while not self.keyword("func"):
            self.directive()
        self.func()
        self.skip()
        if self.pos != len(self.text):
            raise self.error(f"unexpected text after the end of the func, {self.found()}")
        return self.graph

    def directive(self) -> None:
        if self.keyword("source"):
            self.graph.source = self.string("the source description")
        elif self.keyword("symbol"):
            self.symbol()
        elif self.keyword("constraint"):
            self.constraint()
        elif self.keyword("float_reason"):
            location = self.string("the location's text")
            self.graph.float_reasons[location] = self.string("why the ops there stay float")
        elif self.keyword("int_io"):
            self.graph.int_io = True
        elif self.keyword("io"):
            self.io_edge()
        else:
            raise self.error(f"expected 'source', 'symbol', 'constraint', 'float_reason', 'int_io', 'io' or 'func', "
                             f"{self.found()}")

    def io_edge(self) -> None:
        """``io input|output "name" scale S zero_point Z from DTYPE [unsigned]`` (see io_quant.edge_text), or
        ``io input|output "name" from DTYPE``."""
        self.skip()
        start, kind = self.pos, self.match(IDENT, "'input' or 'output'")
        if kind not in ("input", "output"):
            raise self.error(f"expected 'input' or 'output', found {kind!r}", start)
        name = self.string("the edge's name")
        if self.keyword("from"):      # ``io input "x" from uint8``: the model's own type (io_quant.dtype_text)
            dtypes = self.graph.input_dtypes if kind == "input" else self.graph.output_dtypes
            dtypes[name] = self.match(IDENT, "a dtype name")
            return
        self.expect_keyword("scale", "(the edge's scale)")
        scale = float(self.match(FLOAT, "a scale"))
        self.expect_keyword("zero_point", "(the edge's zero point)")
        zero_point = self.integer("a zero point")
        self.expect_keyword("from", "(the model's type at this edge)")
        source = self.match(IDENT, "a dtype name")
        table = self.graph.input_quant if kind == "input" else self.graph.output_quant
        table[name] = EdgeQuant(scale, zero_point, source, self.keyword("unsigned"))

    def symbol(self) -> None:
        self.skip()
        start, name = self.pos, self.word("a symbol name")
        if name in self.graph.scope.symbols:
            raise self.error(f"symbol {name!r} is declared twice", start)
        self.expect(":", "after the symbol name")
        kind = self.enum(ExtentKind, "an extent kind (Exact, UpperBound or Unknown)")
        bound = self.dim(")", "the bound") if self.eat("(") else None
        if bound is not None:
            self.expect(")", "after the bound")
        input_name = self.value_name()[0] if self.keyword("input") else None
        axis = self.integer("an axis") if self.keyword("axis") else None
        data_dependent = self.keyword("data_dependent")
        self.expect_keyword("origin", "(the symbol's origin)")
        origin = self.string("the origin text")
        self.graph.scope.symbols[name] = SymbolInfo(name, origin, kind, bound, input_name, axis, data_dependent)

    def constraint(self) -> None:
        kind = self.enum(Kind, "a constraint kind (" + ", ".join(k.value for k in Kind) + ")")
        self.expect("(", "after the constraint kind")
        lhs = self.dim(",", "the left-hand dim")
        self.expect(",", "between the constraint's dims")
        rhs = self.dim(")", "the right-hand dim")
        self.expect(")", "after the constraint's dims")
        self.expect_keyword("at", "(the constraint's provenance)")
        op_type, node = self.word("the source op type"), self.string("the source node name")
        self.expect_keyword("reason", "(why the constraint was recorded)")
        provenance = Provenance(op_type, node, self.string("the reason text"))
        status = self.enum(Status, "a constraint status (" + ", ".join(s.value for s in Status) + ")") \
            if self.keyword("status") else Status.CHECKED_AT_BINDING
        self.graph.ledger.restore(Constraint(kind, lhs, rhs, provenance, status), self.graph.scope)

    def enum(self, enum_type: type[_E], what: str) -> _E:
        self.skip()
        start, text = self.pos, self.match(IDENT, what)
        try:
            return enum_type(text)
        except ValueError:
            raise self.error(f"expected {what}, found {text!r}", start) from None

    # -- the func ----------------------------------------------------------------
    def func(self) -> None:
        self.expect("@", "before the func name")
        self.graph.name = self.word("the func name")
        self.expect("(", "after the func name")
        self.listing(self.func_input, ")", "func inputs")
        self.expect("{", "to open the func body")
        self.body("the func body")

    def body(self, what: str) -> None:
        """Ops up to the ``return``, then the closing brace."""
        while not self.keyword("return"):
            self.operation()
        self.return_()
        self.expect("}", f"to close {what}")

    def region_(self) -> Graph:
        """``graph @name(%in: type, ...) { constraints ops return }``: a region, isolated from above."""
        self.expect_keyword("graph", "(a region)")
        outer = self.graph, self.env
        self.graph, self.env = self.graph.region_shell(""), {}
        try:
            self.expect("@", "before the region name")
            self.graph.name = self.word("the region name")
            self.expect("(", "after the region name")
            self.listing(self.func_input, ")", "region inputs")
            self.expect("{", "to open the region")
            while self.keyword("constraint"):
                self.constraint()
            self.body(f"region @{self.graph.name}")
            return self.graph
        finally:
            self.graph, self.env = outer

    def func_input(self) -> None:
        name, pos = self.value_name()
        self.expect(":", "after the input name")
        self.define(name, pos)
        self.env[name] = self.graph.add_input(name, self.type_())

    def define(self, name: str, pos: int) -> None:
        if name in self.env:
            raise self.error(f"value %{name} is defined twice", pos)

    def use(self) -> Value:
        name, pos = self.value_name()
        if name not in self.env:
            raise self.error(f"value %{name} is used before it is defined", pos)
        return self.env[name]

    def return_(self) -> None:
        items = [self.return_item()] if self.peek("%") else []
        while items and self.eat(","):
            items.append(self.return_item())
        self.graph.set_outputs([v for v, _ in items], [n for _, n in items])

    def return_item(self) -> tuple[Value, str]:
        value = self.use()
        self.expect_keyword("as", "after the returned value")
        return value, self.word("the output name")

    def operation(self) -> None:
        """``%a = OP(%x, ...) {attrs} : types loc(...)``, checked against the op table."""
        self.skip()
        start, results = self.pos, self.result_names()
        self.skip()
        name_pos, name = self.pos, self.match(OP_NAME, "an op name")
        if name not in OPS:
            raise self.error(f"unknown op {name!r}", name_pos)
        op = OPS[name]
        self.expect("(", "after the op name")
        operands = self.listing(self.use, ")", "operands")
        attrs = self.attrs(op, name_pos)
        types = self.result_types(len(results)) if results else []
        location = self.location()
        self.check_op(op, operands, attrs, types, start)
        self.append(Operation(op, operands, [Value(n, t) for (n, _), t in zip(results, types)], attrs, location),
                    [pos for _, pos in results])

    def result_names(self) -> list[tuple[str, int]]:
        if not self.peek("%"):
            return []
        names = [self.value_name()]
        while self.eat(","):
            names.append(self.value_name())
        self.expect("=", "after the result names")
        return names

    def append(self, operation: Operation, positions: list[int]) -> None:
        for v, pos in zip(operation.results, positions):
            self.define(v.name, pos)
            self.graph.unique_name(v.name)  # reserve it, so later passes never reuse the name
            v.producer, self.env[v.name] = operation, v
        self.graph.ops.append(operation)

    def result_types(self, count: int) -> list[ValueType]:
        self.expect(":", "before the result types")
        types = [self.type_()]
        while len(types) < count:
            self.expect(",", f"({count} result types)")
            types.append(self.type_())
        return types

    def check_op(self, op: OpDef, operands: list[Value], attrs: Attrs, types: list[ValueType], start: int) -> None:
        problem = arity_problem(op, len(operands))
        problems = [problem] if problem else type_problems(op, [v.type for v in operands], attrs, types)
        if problems:
            raise self.error("; ".join(problems), start)

    # -- attributes ------------------------------------------------------------------
    def attrs(self, op: OpDef, name_pos: int) -> Attrs:
        """The op's attribute dataclass, each field read by its declared type."""
        values: dict[str, object] = {}
        if self.eat("{"):
            self.listing(lambda: self.attr_item(op, values), "}", "attributes")
        missing = [f.name for f in fields(op.attrs) if f.name not in values
                   and f.default is MISSING and f.default_factory is MISSING]
        if missing:
            raise self.error(f"{op.name} needs attribute(s) {', '.join(missing)}", name_pos)
        made: Attrs = op.attrs(**values)   # the table's attribute class of ``op`` (OpDef.attrs is a plain type)
        return made

    def attr_item(self, op: OpDef, values: dict[str, object]) -> None:
        kinds = dict(field_types(op.attrs))
        self.skip()
        pos, name = self.pos, self.match(IDENT, "an attribute name")
        if name not in kinds or name in values:
            raise self.error(f"{op.name} has no attribute {name!r} (or it is given twice); "
                             f"its attributes are: {', '.join(kinds) or 'none'}", pos)
        self.expect("=", f"after attribute {name}")
        self.skip()
        value_pos = self.pos
        value = getattr(self, _ATTR_READERS[kinds[name]])()
        values[name] = value
        if name in _INTEGER_LISTS and isinstance(value, tuple):
            self.literal_ints(op, name, value, value_pos)

    def literal_ints(self, op: OpDef, name: str, items: tuple[object, ...], pos: int) -> None:
        """Refuse a symbol (``inf``, ``nan``, ``N``) where only integer literals make sense."""
        bad = next((d for d in items if not isinstance(d, int)), None)
        if bad is not None:
            raise self.error(f"{op.name} attribute {name} must hold integers, found {str(bad)!r}", pos)

    def int_(self) -> int:
        return self.integer("an integer")

    def bool_(self) -> bool:
        return self.match(BOOL, "true or false") == "true"

    def dtype_(self) -> DType:
        return self.enum(DType, "an element type such as f32")

    def float_(self) -> int | float:
        text = self.match(FLOAT, "a number")
        return int(text) if INT.fullmatch(text) else float(text)

    def dims(self) -> tuple[Dim, ...]:
        self.expect("[", "to open the list")
        return tuple(self.listing(lambda: self.dim(",]", "a dim"), "]", "list items"))

    def dense(self) -> np.ndarray[Any, np.dtype[Any]]:
        self.expect("dense<", "(a dense constant)")
        start = self.pos
        m = ARRAY_DTYPE.fullmatch(self.match(IDENT, "an element type such as f32"))
        if not m:
            raise self.error("expected an element type: bool, i8..i64, u8..u64 or f16..f64", start)
        dtype = np.dtype("bool" if m.group() == "bool" else f"<{m.group(1)}{int(m.group(2)) // 8}")
        self.skip()
        shape_pos, dims = self.pos, self.dims()
        shape = tuple(d for d in dims if isinstance(d, int) and d >= 0)
        if len(shape) != len(dims):
            raise self.error("a dense constant's shape must be non-negative integers", shape_pos)
        if self.eat("["):
            return self.listed_data(dtype, shape)
        self.expect_keyword("base64", "before the constant data")
        return self.array_data(dtype, shape)

    def listed_data(self, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray[Any, np.dtype[Any]]:
        """The readable form a person writes, ``dense<f32 [2] [1.5, -2]>``: the values in C order."""
        start = self.pos
        item: Callable[[], int | float | bool] = self.bool_ if dtype == np.bool_ else self.float_
        values = self.listing(item, "]", "constant values")
        self.expect(">", "to close the dense constant")
        if len(values) != math.prod(shape):
            raise self.error(f"the constant lists {len(values)} values; shape {list(shape)} needs "
                             f"{math.prod(shape)}", start)
        if dtype.kind in "iu" and not all(isinstance(v, int) for v in values):
            raise self.error(f"a {dtype} constant lists a value that is not an integer", start)
        array = np.array(values, dtype=np.float64 if dtype.kind == "f" else object)
        if dtype.kind in "iu" and any(not np.iinfo(dtype).min <= v <= np.iinfo(dtype).max for v in values):
            raise self.error(f"a value is outside the range of {dtype}", start)
        return array.astype(dtype).reshape(shape)

    def array_data(self, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray[Any, np.dtype[Any]]:
        self.skip()
        start, text = self.pos, self.string("the base64 data")
        self.expect(">", "to close the dense constant")
        try:
            data = base64.b64decode(text, validate=True)
        except ValueError:
            raise self.error("the constant data is not valid base64", start) from None
        if len(data) != math.prod(shape) * dtype.itemsize:
            raise self.error(f"the constant data has {len(data)} bytes; shape {list(shape)} of "
                             f"{dtype} needs {math.prod(shape) * dtype.itemsize}", start)
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()

    # -- types and locations -----------------------------------------------------------
    def type_(self) -> ValueType:
        if self.eat("index<"):
            value = self.dim(">", "an index value")
            self.expect(">", "to close the index type")
            return IndexType(value)
        self.expect("tensor<", "(a type: tensor<...> or index<...>)")
        shape = self.tensor_dims()
        dtype = self.dtype_()
        self.expect(">", "to close the tensor type")
        return TensorType(dtype, shape)

    def tensor_dims(self) -> tuple[Dim, ...]:
        """``[batch]x64x`` ...: each dim (bracketed when symbolic) followed by 'x'."""
        shape: list[Dim] = []
        while True:
            if self.eat("["):
                shape.append(self.dim("]", "a dim"))
                self.expect("]", "after a symbolic dim")
            elif DIGITS.match(self.text, self.pos):  # eat() above skipped the spaces
                shape.append(int(self.match(DIGITS, "a dim")))
            else:
                return tuple(shape)
            self.expect("x", "after a dim")

    def location(self) -> Location:
        self.expect("loc(", "(the op's source location)")
        loc = self.location_body()
        self.expect(")", "to close the location")
        return loc

    def location_body(self) -> Location:
        head = None if self.peek("fused[") else self.plain_location()
        if not self.eat("fused["):
            assert head is not None   # no "fused[" ahead, so a plain location was read
            return head
        parts = [self.location_body()]
        while self.eat(","):
            parts.append(self.location_body())
        self.expect("]", "to close the fused locations")
        head = head or parts[0]
        return Location(head.op_type, head.name, head.source, tuple(parts))

    def plain_location(self) -> Location:
        source = self.word("the location's source (onnx, tflite, internal)")
        op_type = self.word("the source op type")
        return Location(op_type, self.string("the source node name"), source)


# Tuple attributes that are numbers, never symbolic dims.
_INTEGER_LISTS = frozenset({"multiplier", "shift", "stride", "dilation", "kernel", "perms"})

_ATTR_READERS = {int: "int_", float: "float_", bool: "bool_", str: "string", DType: "dtype_",
                 tuple: "dims", np.ndarray: "dense", Graph: "region_"}
