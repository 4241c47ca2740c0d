"""Read a TOSA flatbuffer into an IR graph: :func:`read_tosa`.

Reads our own files and those of the official tools (``tosa-opt
--tosa-serialize``). Constant operands that TOSA 1.0 uses for parameters
(zero points, shifts, shapes, tables, rescale factors) are folded back into
the consuming op's typed attributes, and their CONST / CONST_SHAPE producers
disappear; a CONST that feeds a real data operand (weights, a bias) or a graph
output stays a CONST op with its array. Values keep their tensor names and
every op gets ``Location(<TOSA op>, <location text or output name>, "tosa")``.
COND_IF and WHILE_LOOP get their named regions back as region graphs, and
variable tensors and their accesses become state ops (:mod:`.variables`).
A TOSA 1.1-draft file with ``-1`` dims and EXT-SHAPE operators reads back as a
symbolic program (:mod:`.shape_reader`): the shape operators become helper ops.
Anything that cannot be mapped raises :class:`ReadError`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING
import numpy as np

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Graph
from ..ir.location import Location
from ..ir.dtypes import DType
from ..ir.ops import OPS, Op, Trait
from ..ir.types import TensorType
from ..ir.verifier import verify
from . import schema as S
from . import variables
from .codecs import CODECS, MULTI_RESULT_OPS
from .deserialize import deserialize
from .errors import ReadError
from .shape_reader import DYNAMIC_LAYOUT_OPS, SHAPE_OPS, ShapeValues, dynamic_layout, input_dim, symbol_names
from .tensor_data import from_le_bytes

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..ir.types import ValueType
    from ..ir.ops import OpDef
    from .records import BlockRecord, OpRecord

_CONSTANT_OPS = ("CONST", "CONST_SHAPE")
# Element types whose numpy arrays do not say them (ConstAttrs.element_type).
_ELEMENT_TYPES = {DType.INT4: DType.INT4.value, DType.BF16: DType.BF16.value}
_REGION_OPS = tuple(op.tosa for op in OPS.values() if op.has(Trait.REGION) and op.tosa)


def read_tosa(data: bytes | memoryview) -> Graph:
    """The IR graph of a ``.tosa`` file's bytes (raises :class:`ReadError`).

    The graph must pass the IR verifier, which holds the specification's ERROR_IF rules: a file
    that breaks one is refused here, before anything runs it."""
    graph = _Lifting(deserialize(data)).run()
    symbolic = bool(graph.scope.symbols)   # a 1.1-draft file with -1 dims (EXT-SHAPE)
    problems = verify(graph, require_static=not symbolic, require_equal_ranks=True)
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise ReadError("the program is not valid TOSA: " + "; ".join(problems[:3]) + more)
    return graph


class _Lifting:
    def __init__(self, block: BlockRecord, regions: dict[str, BlockRecord] | None = None,
                 input_types: list[ValueType] | None = None) -> None:
        self.block, self.input_types = block, input_types   # a region's inputs: the types the op passes
        self.regions = block.regions if regions is None else regions   # the file's regions, by name
        self.tensors = {t.name: t for t in block.tensors}
        self.shapes = {s.name: s for s in block.shapes}
        self.consts: dict = {}
        self.values: dict = {}
        self.graph = Graph(name=block.name if regions is not None else "main")
        self.builder = Builder(self.graph)
        self.kept_consts = self._consts_used_as_values()
        self.shape_values = ShapeValues(self)
        self.symbol_names = symbol_names(block)

    def run(self) -> Graph:
        for i, name in enumerate(self.block.inputs):
            self.values[name] = self.graph.add_input(name, self._region_input_type(name, i))
        self.variables = variables.lift_variables(self)   # variable tensor name -> VariableRefAttrs
        for op in self.block.ops:
            self._lift(op)
        outputs = [self._value(name, "graph output") for name in self.block.outputs]
        self.graph.set_outputs(outputs, list(self.block.outputs))
        return self.graph

    def _consts_used_as_values(self) -> set:
        """CONST outputs that must stay ops: used as data, as an output, or not used at all."""
        as_data, as_param = set(self.block.outputs), set()
        for op in self.block.ops:
            if op.op in _CONSTANT_OPS:
                continue
            if op.op in SHAPE_OPS:   # DIM reads a tensor; SLICE_SHAPE's start and size are constants
                (as_data if op.op == "DIM" else as_param).update(op.inputs[:1] if op.op == "DIM" else op.inputs[1:])
                continue
            n = len(op.inputs) if op.op in variables.ACCESS_OPS else _data_count(op)
            as_data.update(op.inputs[:n])
            as_param.update(op.inputs[n:])
        return {op.outputs[0] for op in self.block.ops if op.op == "CONST" and op.outputs
                and (op.outputs[0] in as_data or op.outputs[0] not in as_param)}

    def _lift(self, op: OpRecord) -> None:
        if op.op in _REGION_OPS:
            return self._region_op(op)
        if op.op in variables.ACCESS_OPS:
            return variables.lift_access(self, op)
        if op.op in SHAPE_OPS:
            return self.shape_values.lift(op)
        if len(op.outputs) != 1 and op.op not in MULTI_RESULT_OPS:
            raise ReadError(f"{op.op} has {len(op.outputs)} outputs; expected one")
        if op.op == "CONST":
            self._const(op)
        elif op.op == "CONST_SHAPE":
            self._const_shape(op)
        else:
            self._compute(op)

    def _region_op(self, op: OpRecord) -> None:
        """COND_IF / WHILE_LOOP: lift each region its attribute table names into a region graph."""
        graphs = {}
        for field, _ in S.attr_layout(op.op):
            name = op.fields.get(field)
            if name not in self.regions:
                raise ReadError(f"{op.op} '{op.outputs[0] if op.outputs else '?'}' names {field} '{name}', "
                                "which is not a region of the file")
        opdef = OPS[op.op]
        operands = [self._value(name, f"operand of {op.op}") for name in op.inputs]
        passed = [v.type for v in operands[1:]] if op.op == "COND_IF" else [v.type for v in operands]
        for field, _ in S.attr_layout(op.op):
            graphs[field] = _Lifting(self.regions[op.fields.get(field)], self.regions, passed).run()
        types = [self._type(name) for name in op.outputs]
        if any(_open(t) for t in types):
            types = None   # -1 dims: the shape rule gives them from the regions
        with self.builder.at(Location(op.op, op.location or op.outputs[0], source="tosa")):
            results = self.builder.create(opdef, operands, opdef.attrs(**graphs), result_types=types,
                                          name=op.outputs[0]).results
        self.values.update(zip(op.outputs, results))

    def _const(self, op: OpRecord) -> None:
        name = op.outputs[0]
        type_ = self._type(name)
        rec = self.tensors[name]
        if rec.data is None:
            raise ReadError(f"CONST '{name}' has no data")
        try:
            values = from_le_bytes(rec.data, type_.dtype, type_.shape)
        except ValueError as e:
            raise ReadError(f"CONST '{name}': {e}") from None
        self.consts[name] = values
        if name in self.kept_consts:
            self._create(op, Op.CONST, [], A.ConstAttrs(values, type_.dtype == DType.INT48,
                                                     _ELEMENT_TYPES.get(type_.dtype, "")), type_)

    def _const_shape(self, op: OpRecord) -> None:
        name = op.outputs[0]
        if name not in self.shapes:
            raise ReadError(f"CONST_SHAPE output '{name}' is not in the block's shapes")
        try:
            self.consts[name] = np.array(self.shapes[name].values(), dtype=np.int64)
        except ValueError as e:
            raise ReadError(str(e)) from None
        if name in self.block.outputs:   # a shape value returned by the program stays a (shape) constant
            values = self.consts[name]
            self._create(op, Op.CONST, [], A.ConstAttrs(values, element_type=DType.INDEX.value), TensorType(DType.INDEX, values.shape))

    def _compute(self, op: OpRecord) -> None:
        codec, opdef = CODECS[op.op], OPS[op.op]
        n = _data_count(op)
        if op.op in DYNAMIC_LAYOUT_OPS and any(self.shape_values.is_dynamic(i) for i in op.inputs[n:]):
            return dynamic_layout(self, op, n)
        operands = [self._value(name, f"operand of {op.op}") for name in op.inputs[:n]]
        params = {role: self._param(op, role, name) for role, name in zip(codec.roles, op.inputs[n:])}
        out = self._type(op.outputs[0])
        try:
            attrs = codec.decode(op.fields, params, [v.type for v in operands], out)
        except ValueError as e:
            raise ReadError(f"{op.op} '{op.outputs[0]}': {e}") from None
        self._create(op, opdef, operands, attrs, out)

    def _create(self, op: OpRecord, opdef: OpDef, operands: list[Value], attrs: A.Attrs, out: TensorType) -> None:
        name = op.outputs[0]
        text = op.location if op.location is not None else name
        with self.builder.at(Location(op.op, text, source="tosa")):
            try:
                types = [out] + [self._type(extra) for extra in op.outputs[1:]]
                if any(_open(t) for t in types):   # -1 dims: the shape rules say what they are
                    types = _checked(types, opdef.shape_rule([v.type for v in operands], attrs), name)
                results = self.builder.create(opdef, operands, attrs, result_types=types, name=name).results
            except TypeError as e:
                raise ReadError(f"{op.op} '{name}': {e}") from None
        self.values.update(zip(op.outputs, results))

    def _param(self, op: OpRecord, role: str, name: str) -> np.ndarray:
        if name in self.shape_values.values and not self.shape_values.is_dynamic(name):
            return np.array(self.shape_values.values[name], dtype=np.int64)   # computed from static dims
        if name not in self.consts:
            raise ReadError(f"{op.op} '{op.outputs[0]}': operand {role} ('{name}') is not a constant; "
                            f"only constant {role} operands can be read")
        return self.consts[name]

    def _value(self, name: str, what: str) -> Value:
        if name not in self.values:
            raise ReadError(f"{what} '{name}' is not defined before its use")
        return self.values[name]

    def _type(self, name: str) -> TensorType:
        rec = self.tensors.get(name)
        if rec is None:
            where = "a shape value" if name in self.shapes else "missing from the block's tensors"
            raise ReadError(f"tensor '{name}' is {where}")
        if rec.dtype is None:
            raise ReadError(f"tensor '{name}' has element type code {rec.type_code}, which the IR lacks")
        if any(d < -1 for d in rec.shape):
            raise ReadError(f"tensor '{name}' has shape {list(rec.shape)}; dims are sizes >= 1 or -1 (dynamic)")
        return TensorType(rec.dtype, tuple(rec.shape))   # a -1 dim is open: see _create

    def _region_input_type(self, name: str, i: int) -> TensorType:
        """A region input of a symbolic file takes the type its op passes (the same symbols), when the
        file's type has -1 dims where that one has symbols; otherwise as any graph input."""
        t = self._input_type(name)
        given = self.input_types[i] if self.input_types is not None and i < len(self.input_types) else None
        written = self._type(name)
        if isinstance(given, TensorType) and given.dtype == written.dtype and given.rank == written.rank and \
                all(d == -1 or d == g for d, g in zip(written.shape, given.shape)) and -1 in written.shape:
            return given
        return t

    def _input_type(self, name: str) -> TensorType:
        """A graph input's type; each -1 dim is a symbol (see :func:`.shape_reader.input_dim`)."""
        t = self._type(name)
        return t.with_shape([input_dim(self.graph, self.symbol_names, name, axis) if d == -1 else d
                             for axis, d in enumerate(t.shape)])


def _open(t: object) -> bool:
    return isinstance(t, TensorType) and any(isinstance(d, int) and d == -1 for d in t.shape)


def _checked(declared: list, inferred: list, name: str) -> list:
    """The inferred result types, where the file's static dims agree with them."""
    for want, got in zip(declared, inferred):
        if not isinstance(want, TensorType):
            continue
        if want.rank != got.rank or any(w != -1 and isinstance(g, int) and w != g
                                        for w, g in zip(want.shape, got.shape)):
            raise TypeError(f"result '{name}' is declared {list(want.shape)} but its operands make it {got}")
    return list(inferred)


def _data_count(op: OpRecord) -> int:
    """How many leading inputs of ``op`` are data; the rest are constant parameters."""
    if op.op not in CODECS or op.op not in OPS:
        raise ReadError(f"TOSA op {op.op} is not supported by the reader")
    n = len(op.inputs) - len(CODECS[op.op].roles)
    if n < 1:
        raise ReadError(f"{op.op} '{op.outputs[0] if op.outputs else '?'}' has {len(op.inputs)} inputs; "
                        f"expected data operands plus {', '.join(CODECS[op.op].roles) or 'nothing'}")
    return n
