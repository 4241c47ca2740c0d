"""Write TOSA block records as TOSA-dialect MLIR text: :func:`records_to_mlir`, :func:`write_mlir`.

The text is MLIR's *generic* op form with properties
(``%3 = "tosa.reduce_sum"(%2) <{axis = 1 : i32}> : (tensor<2x3xf32>) -> tensor<2x1xf32>``),
which both ``tosa-opt`` and IREE read; IREE 3.13 rejects the pretty form of
some ops. It is printed from the same :class:`~.records.BlockRecord` the
flatbuffer serializer takes, so it holds exactly what the ``.tosa`` holds: a
``builtin.module`` with the TOSA variables (``tosa.variable``) and one
function ``main`` whose arguments and results are the block's inputs and
outputs (their tensor names kept as ``tosa.tensor_name``). Each operator
record becomes one op named ``tosa.<op>``, with its attribute table as
properties (:mod:`.mlir_attrs`) and its location as ``loc("...")``; CONST and
CONST_SHAPE carry their data as ``values``; a VARIABLE_READ/WRITE (an
IDENTITY with that table) becomes ``tosa.variable_read``/``_write``; COND_IF
and WHILE_LOOP print their regions in place, each ending in ``tosa.yield``.
Nothing is static-only: a dim of −1 prints as ``?`` and a shape value as
``!tosa.shape<N>``, so a symbolic program's shape ops (DIM, ADD_SHAPE...)
print like any other op.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from .errors import EmitError
from .mlir_attrs import properties, properties_text
from .mlir_text import (
    dense_values,
    element_type,
    index_values,
    shape_type,
    string_literal,
    tensor_type,
)
from .records import BlockRecord, OpRecord, ShapeRecord, TensorRecord
from .tensor_data import flat_bytes
from .variables import ACCESS_OPS
from .writer import to_records

if TYPE_CHECKING:
    from ..ir.dtypes import DType
    from ..ir.graph import Graph

_REGION_FIELDS = {"COND_IF": ("then_graph", "else_graph"), "WHILE_LOOP": ("cond_graph", "body_graph")}
INDENT = "  "


def write_mlir(graph: Graph) -> bytes:
    """The TOSA MLIR text (UTF-8) of a static graph, from the records the ``.tosa`` writer makes."""
    return records_to_mlir(to_records(graph)).encode("utf-8")


def records_to_mlir(main: BlockRecord) -> str:
    """The module text of the program whose main block is ``main`` (raises :class:`EmitError`)."""
    return _Printer(main).module()


class _Scope:
    """The values visible in one block: tensor/shape name -> (SSA name, record), then the enclosing block's."""

    def __init__(self, block: BlockRecord, parent: _Scope | None = None) -> None:
        self.parent = parent
        self.values: dict = {}
        self.records: dict = {r.name: r for r in block.tensors if r.variable_name is None}
        self.records.update((s.name, s) for s in block.shapes)

    def record(self, name: str) -> TensorRecord | ShapeRecord:
        return self._find("records", name, f"tensor '{name}' is used but has no tensor or shape record")

    def ssa(self, name: str) -> str:
        return self._find("values", name, f"tensor '{name}' is used before any op defines it")

    def _find(self, table: str, name: str, missing: str) -> Any:
        """``name`` in this block's ``table`` (records or values), else the enclosing block's."""
        scope = self
        while scope is not None:
            found = getattr(scope, table)
            if name in found:
                return found[name]
            scope = scope.parent
        raise EmitError(missing)


def type_of(record: TensorRecord | ShapeRecord) -> str:
    if isinstance(record, ShapeRecord):
        return shape_type(record.rank)
    if record.dtype is None:
        raise EmitError(f"tensor '{record.name}' has an element type (code {record.type_code}) with no "
                        f"MLIR spelling here")
    return tensor_type(record.shape, record.dtype)


def _types(types: list) -> str:
    return "(" + ", ".join(types) + ")"


def _results(types: list) -> str:
    return types[0] if len(types) == 1 else _types(types)


class _Printer:
    def __init__(self, main: BlockRecord) -> None:
        self.main = main
        self.lines: list = []
        self.next_value = 0
        self.next_arg = 0
        self.variables = {t.name: t for t in main.tensors if t.variable_name is not None}

    def module(self) -> str:
        self.lines.append('"builtin.module"() ({')
        for record in self.variables.values():
            self._variable(record)
        self._function()
        self.lines.append("}) : () -> ()")
        return "\n".join(self.lines) + "\n"

    def _variable(self, t: TensorRecord) -> None:
        if t.data is None:
            raise EmitError(f"variable '{t.variable_name}' has no initial value")
        props = {"initial_value": f"{dense_values(flat_bytes(t.data), t.dtype, t.shape)} : {type_of(t)}",
                 "sym_name": string_literal(t.variable_name), "type": element_type(t.dtype),
                 "var_shape": index_values(t.shape)}
        self.lines.append(f'{INDENT}"tosa.variable"(){properties_text(props)} : () -> ()')

    def _function(self) -> None:
        scope = _Scope(self.main)
        ins = [type_of(scope.record(n)) for n in self.main.inputs]
        outs = [type_of(scope.record(n)) for n in self.main.outputs]
        props = {"function_type": f"{_types(ins)} -> {_results(outs) if outs else '()'}",
                 "sym_name": '"main"', "arg_attrs": _name_attrs(self.main.inputs),
                 "res_attrs": _name_attrs(self.main.outputs)}
        self.lines.append(f'{INDENT}"func.func"(){properties_text(props)} ({{')
        self._block(self.main, scope, 2, "func.return")
        self.lines.append(f"{INDENT}}}) : () -> ()")

    def _block(self, block: BlockRecord, scope: _Scope, depth: int, terminator: str) -> None:
        """The block's argument line, its ops and its terminator returning the block's outputs."""
        pad = INDENT * (depth - 1)
        if block.inputs:
            args = []
            for name in block.inputs:
                scope.values[name] = f"%arg{self.next_arg}"
                self.next_arg += 1
                args.append(f"{scope.values[name]}: {type_of(scope.record(name))}")
            self.lines.append(f"{pad}^bb0({', '.join(args)}):")
        for op in block.ops:
            self._op(op, scope, depth)
        refs, types = self._operands(block.outputs, scope)
        self.lines.append(f'{INDENT * depth}"{terminator}"({", ".join(refs)}) : {_types(types)} -> ()')

    def _operands(self, names: list, scope: _Scope) -> tuple:
        return [scope.ssa(n) for n in names], [type_of(scope.record(n)) for n in names]

    def _define(self, names: list, scope: _Scope) -> str:
        """Fresh SSA names for an op's results (``%7`` or ``%7:2``); '' for an op without results."""
        if not names:
            return ""
        base = f"%{self.next_value}"
        self.next_value += 1
        for i, name in enumerate(names):
            scope.values[name] = base if len(names) == 1 else f"{base}#{i}"
        return f"{base} = " if len(names) == 1 else f"{base}:{len(names)} = "

    def _op(self, op: OpRecord, scope: _Scope, depth: int) -> None:
        try:
            if op.attribute in ACCESS_OPS:
                text = self._variable_access(op, scope)
            elif op.op in _REGION_FIELDS:
                return self._region_op(op, scope, depth)
            else:
                text = self._plain(op, scope)
        except (ValueError, EmitError) as e:
            raise EmitError(f"cannot write {op.op}{_where(op)} as MLIR: {e}") from None
        self.lines.append(INDENT * depth + text + _loc(op))

    def _plain(self, op: OpRecord, scope: _Scope) -> str:
        refs, in_types = self._operands(op.inputs, scope)
        out_types = [type_of(scope.record(n)) for n in op.outputs]
        props = self._const_props(op, scope) if op.op in ("CONST", "CONST_SHAPE") else \
            properties(op, _dtype(scope, op.inputs))
        lhs = self._define(op.outputs, scope)
        return (f'{lhs}"tosa.{op.op.lower()}"({", ".join(refs)}){properties_text(props)} : '
                f"{_types(in_types)} -> {_results(out_types) if out_types else '()'}")

    def _const_props(self, op: OpRecord, scope: _Scope) -> dict:
        if len(op.outputs) != 1 or op.inputs:
            raise ValueError("it must have no inputs and one output")
        record = scope.record(op.outputs[0])
        if isinstance(record, ShapeRecord):
            return {"values": index_values(record.values())}
        if record.data is None:
            raise ValueError(f"tensor '{record.name}' has no data")
        return {"values": f"{dense_values(flat_bytes(record.data), record.dtype, record.shape)} : {type_of(record)}"}

    def _variable_access(self, op: OpRecord, scope: _Scope) -> str:
        read = op.attribute == "VARIABLE_READ"
        var = self.variables.get((op.inputs if read else op.outputs)[0])
        if var is None:
            raise ValueError("its variable tensor is not a variable of the main block")
        props = properties_text({"name": string_literal(var.variable_name)})
        if read:
            out_type = type_of(scope.record(op.outputs[0]))
            return f'{self._define(op.outputs, scope)}"tosa.variable_read"(){props} : () -> {out_type}'
        refs, types = self._operands(op.inputs, scope)
        return f'"tosa.variable_write"({refs[0]}){props} : {_types(types)} -> ()'

    def _region_op(self, op: OpRecord, scope: _Scope, depth: int) -> None:
        """COND_IF / WHILE_LOOP: the op's line opens its regions, printed in place, one block each."""
        blocks = [self._region_block(op, field) for field in _REGION_FIELDS[op.op]]
        refs, in_types = self._operands(op.inputs, scope)
        out_types = [type_of(scope.record(n)) for n in op.outputs]
        lhs = self._define(op.outputs, scope)
        self.lines.append(f'{INDENT * depth}{lhs}"tosa.{op.op.lower()}"({", ".join(refs)}) ({{')
        for i, block in enumerate(blocks):
            if i:
                self.lines.append(f"{INDENT * depth}}}, {{")
            self._block(block, _Scope(block, scope), depth + 1, "tosa.yield")
        self.lines.append(f"{INDENT * depth}}}) : {_types(in_types)} -> {_results(out_types)}{_loc(op)}")

    def _region_block(self, op: OpRecord, field: str) -> BlockRecord:
        name = op.fields.get(field)
        if name not in self.main.regions:
            raise EmitError(f"cannot write {op.op}{_where(op)} as MLIR: its {field} '{name}' is not a "
                            f"region of the file")
        return self.main.regions[name]


def _dtype(scope: _Scope, inputs: list[str]) -> DType | None:
    """The element type of the first input (CLAMP's bounds are typed by it), if it is a tensor."""
    if not inputs:
        return None
    record = scope.record(inputs[0])
    return record.dtype if isinstance(record, TensorRecord) else None


def _name_attrs(names: list) -> str:
    return "[" + ", ".join(f"{{tosa.tensor_name = {string_literal(n)}}}" for n in names) + "]"


def _loc(op: OpRecord) -> str:
    return f" loc({string_literal(op.location)})" if op.location else ""


def _where(op: OpRecord) -> str:
    return f" at {op.location}" if op.location else ""
