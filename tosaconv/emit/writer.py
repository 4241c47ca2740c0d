"""Write a static IR graph as a TOSA 1.0 flatbuffer: :func:`write_tosa`.

Lowering turns the IR into block records. Every value gets a unique tensor
name (graph inputs and outputs keep the source model's names; others keep
their IR name, suffixed on a clash). Each op's attributes pass through its
codec: parameters TOSA 1.0 wants as operands become CONST / CONST_SHAPE ops
placed just before the op, named ``<result>/<role>``. No constant is written
twice in a block: a parameter (zero point, shift, shape...) or a small CONST
whose type and bytes an earlier one has, or a CONST viewing the same memory
as an earlier one, reuses that tensor (its name, its location), so a quantized
model does not carry one zero-point record per op. An output that is a
graph input, or a value returned twice, is copied through an IDENTITY so
every output tensor has its own name. Operator locations are
``str(op.location)``, except that a location read from a ``.tosa`` is
written back verbatim, so reading and rewriting a file changes nothing.
A COND_IF or WHILE_LOOP lowers each of its regions to a region of the file
(one block, named ``<result>/<attribute>``), which its attribute table names.
State ops are written as the official tools write them (:mod:`.variables`).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..gc_tuning import fewer_collections
from ..ir.dtypes import DType
from ..ir.graph import op_regions
from ..ir.location import Location
from ..ir.ops import Op, Trait
from ..ir.types import TensorType
from . import variables
from .codecs import CODECS, MULTI_RESULT_OPS
from .errors import EmitError
from .params import param_key
from .records import BlockRecord, OpRecord, ShapeRecord, TensorRecord
from .serialize import serialize, too_big
from .tensor_data import le_array, to_le_bytes
from .tensor_names import assign_names, assign_region_names

if TYPE_CHECKING:
    from ..ir.graph import Graph, Operation, Value
    from .fbwrite import FlatPieces
    from .params import Param


_STATE_OPS = frozenset(variables.STATE_OPS)


@fewer_collections
def write_tosa(graph: Graph, stream: bool = False) -> bytes | FlatPieces:
    """The ``.tosa`` bytes of a static graph (raises :class:`EmitError` naming the offending op).
    ``stream``: large constants are not copied; the bytes may come as :class:`~.fbwrite.FlatPieces`
    (``len``, iteration, ``tobytes``), which :mod:`tosaconv.fileio` writes out part by part."""
    block = _Lowering(graph).run()
    if too_big(block):
        raise EmitError(f"constant data of {block.data_bytes()} bytes exceeds the 2 GB flatbuffer limit")
    return serialize(block, stream=stream)


def to_records(graph: Graph) -> BlockRecord:
    """The block records of a static graph, as :func:`write_tosa` serializes them (the MLIR writer's input)."""
    return _Lowering(graph).run()


def location_text(loc: Location) -> str:
    if loc.fused:
        return " + ".join(location_text(p) for p in loc.fused)
    return loc.name if loc.source == "tosa" else str(loc)


class _Lowering:
    # equal graph CONSTs share one tensor (a static file); the symbolic writer keeps them apart, so that a
    # read-back program has the CONSTs the source's has, and specializes to the same program
    share_constants = True

    def __init__(self, graph: Graph, parent: _Lowering | None = None, region_name: str = "main") -> None:
        self.graph = graph
        self.block = BlockRecord(name=region_name)
        if parent is None:
            self.names, self.copies = assign_names(graph)
            self.out_names, self.regions = list(graph.output_names), self.block.regions
        else:
            self.names, self.regions = parent.names, parent.regions
            self.copies, self.out_names = assign_region_names(graph, self.names)
        self.defined = set()
        self.shared: dict = {}   # constant key (_const_key) -> the tensor name that holds it
        self.output_values = set(graph.outputs)   # a CONST returned keeps its own (output) name
        self.variable_tensors: dict = {}   # variable name -> its state tensor (emit/variables.py)
        self.known_types: dict = {}   # id of an IR type -> its written TensorType (see _type_of)
        self.kept_types: list = []

    def run(self) -> BlockRecord:
        self._inputs()
        for op in self.graph.ops:
            self._lower(op)
        for value, out_name in self.copies:
            self._identity(value, out_name)
        for value in self.graph.outputs:
            if value not in self.defined:
                raise EmitError(f"graph output value '{value.name}' is not produced by any op")
        self.block.outputs = list(self.out_names)
        return self.block

    def _inputs(self) -> None:
        # A symbolic input is reported at its first user, which has a source location.
        users = _first_users(self.graph.ops, {v.name for v in self.graph.inputs})
        for v in self.graph.inputs:
            first = users.get(v.name)
            what = f"graph input '{v.name}'" + (f" (first used by {first.op.name})" if first else "")
            self._add_tensor(self.names[v], self._type(v, what, first and first.location))
            self.defined.add(v)
        self.block.inputs = [self.names[v] for v in self.graph.inputs]

    def _lower(self, op: Operation) -> None:
        if op.op.tosa is None:
            raise EmitError(f"cannot emit {op.op.name}: it is a shape-helper or data-dependent op with no "
                            f"TOSA counterpart; specialize the graph so it folds away first", op.location)
        defined, known = self.defined, self.known_types
        ins = [known[id(v.type)] if v in defined and id(v.type) in known else self._operand(op, v)
               for v in op.operands]    # (the checks of ``_operand``, inline on the common path)
        if op.op in _STATE_OPS:
            try:
                return variables.lower(self, op, location_text(op.location))
            except ValueError as e:
                raise EmitError(f"cannot emit {op.op.name}: {e}", op.location) from None
        if Trait.REGION in op.op.traits:
            return self._region_op(op)
        if len(op.results) != 1 and op.op.name not in MULTI_RESULT_OPS:
            raise EmitError(f"cannot emit {op.op.name}: it has {len(op.results)} results", op.location)
        out = self.known_types.get(id(op.result.type))
        if out is None:
            out = self._type_of(op.result, f"result of {op.op.name}", op.location)
        try:
            if op.op is Op.CONST:
                self._const(op, out)
            else:
                self._op(op, ins, out)
        except ValueError as e:
            raise EmitError(f"cannot emit {op.op.name}: {e}", op.location) from None
        self.defined.update(op.results)

    def _operand(self, op: Operation, v: Value) -> TensorType:
        if v not in self.defined:
            raise EmitError(f"cannot emit {op.op.name}: operand '{v.name}' is not defined before it",
                            op.location)
        known = self.known_types.get(id(v.type))
        return known if known is not None else self._type_of(v, f"operand '{v.name}' of {op.op.name}", op.location)

    def _type_of(self, value: Value, what: str, location: Location) -> TensorType:
        """``_type``, remembered in ``known_types`` by the id of ``value``'s type: ``_type`` is a function of
        the type alone, and a program's values share a few type objects (``kept_types`` holds each, so
        that its id stays its own)."""
        t = self._type(value, what, location)
        self.known_types[id(value.type)] = t
        self.kept_types.append(value.type)
        return t

    def _const(self, op: Operation, out: TensorType) -> None:
        name = self.names[op.result]
        values = np.asarray(op.attrs.values)
        if values.size != math.prod(out.shape):
            raise ValueError(f"values of shape {list(values.shape)} do not fill {out}")
        if out.dtype is DType.INDEX:   # a shape value (read from a CONST_SHAPE the program returns)
            data = np.ascontiguousarray(values, dtype="<i8").view(np.uint8).reshape(-1)
            self.block.shapes.append(ShapeRecord(name, int(values.size), data))
            self._add_op("CONST_SHAPE", {}, [], [name], location_text(op.location))
            return
        data = le_array(values, out.dtype)
        key = None if op.result in self.output_values or not self.share_constants else \
            _const_key(out.dtype, out.shape, data)
        if key in self.shared:
            self.names.bind(op.result, self.shared[key])
            return
        if key is not None:
            self.shared[key] = name
        self._add_tensor(name, out, data)
        self._add_op("CONST", {}, [], [name], location_text(op.location))

    def _op(self, op: Operation, ins: list[TensorType], out: TensorType) -> None:
        codec = CODECS.get(op.op.tosa)
        if codec is None:
            raise ValueError("the emitter has no encoder for it")
        params, fields = codec.encode(op.attrs, ins, out)
        outs = list(map(self.names.of, op.results))
        inputs = list(map(self.names.of, op.operands))
        if params:
            inputs += [self._param(outs[0], p, op.location) for p in params]
        self._add_tensor(outs[0], out)
        for r, name in zip(op.results[1:], outs[1:]):
            self._add_tensor(name, self._type(r, "result", op.location))
        self._add_op(op.op.tosa, fields, inputs, outs, location_text(op.location))

    def _region_op(self, op: Operation) -> None:
        """COND_IF / WHILE_LOOP: each region becomes a region of the file, named in the attribute."""
        outs = [self.names[r] for r in op.results]
        graph_names = {}
        for field, region in op_regions(op):
            name = self.names.fresh(f"{outs[0]}/{field}")
            self.regions[name] = self._region(region, name).run()
            graph_names[field] = name
        for r, name in zip(op.results, outs):
            self._add_tensor(name, self._type(r, f"result of {op.op.name}", op.location))
        self._add_op(op.op.tosa, graph_names, self._region_operands(op), outs, location_text(op.location))
        self.defined.update(op.results)

    def _region_operands(self, op: Operation) -> list[str]:
        """The tensor names a COND_IF / WHILE_LOOP passes to its regions."""
        return [self.names[v] for v in op.operands]

    def _region(self, region: Graph, name: str) -> "_Lowering":
        """The lowering of one region of a COND_IF / WHILE_LOOP (the symbolic writer keeps its symbols)."""
        return _Lowering(region, self, name)

    def _param(self, owner: str, param: Param, location: Location) -> str:
        key = param_key(param)
        name = self.shared.get(key)
        if name is not None:
            return name
        name = self.shared[key] = self.names.fresh(f"{owner}/{param.role}")
        text = location_text(location)
        if param.dtype is None:
            data = np.ascontiguousarray(param.values, dtype="<i8").view(np.uint8)
            self.block.shapes.append(ShapeRecord(name, int(param.values.size), data))
            self._add_op("CONST_SHAPE", {}, [], [name], text)
        else:
            shape = (int(param.values.size),)
            self._add_tensor(name, TensorType(param.dtype, shape), to_le_bytes(param.values, param.dtype))
            self._add_op("CONST", {}, [], [name], text)
        return name

    def _identity(self, value: Value, out_name: str) -> None:
        self._add_tensor(out_name, value.type)
        text = f"IDENTITY '{out_name}'"
        self._add_op("IDENTITY", {}, [self.names[value]], [out_name], text)

    def _type(self, value: Value, what: str, location: Location) -> TensorType:
        """The value's type as written (static here; the symbolic writer keeps open dims as -1)."""
        return _static_type(value, what, location)

    def _add_tensor(self, name: str, type_: TensorType, data: np.ndarray | None = None) -> None:
        self.block.tensors.append(TensorRecord(name, type_.shape, type_.dtype, data))

    def _add_op(self, op: str, fields: dict, inputs: list[str], outputs: list[str], location: str) -> None:
        self.block.ops.append(OpRecord(op, fields, inputs, outputs, location))


def _first_users(ops: list[Operation], names: set[str]) -> dict[str, Operation]:
    """The first op reading a value of each name in ``names`` (the walk stops once all are found; no table
    of every value's users, which a large program would build only to read a few entries of)."""
    first: dict[str, Operation] = {}
    for op in ops:
        for v in op.operands:
            if v.name in names and v.name not in first:
                first[v.name] = op
        if len(first) == len(names):
            break
    return first


_SHARED_BY_CONTENT = 4096   # bytes: constants up to this size are shared when equal (a hash of their bytes)


def _const_key(dtype: DType, shape: tuple, data: np.ndarray) -> tuple:
    """What makes two CONSTs one: their type and bytes when small, else their type and the very
    memory they view (comparing large weights would cost a pass over them; equal ones in separate
    memory are rare, while an importer handing one buffer to several tensors is not)."""
    if data.nbytes <= _SHARED_BY_CONTENT:
        return (dtype, tuple(shape), data.dtype.str, data.tobytes())
    return (dtype, tuple(shape), data.dtype.str, data.__array_interface__["data"][0], data.strides)


def _static_type(value: Value, what: str, location: Location) -> TensorType:
    t = value.type
    if not isinstance(t, TensorType):
        raise EmitError(f"{what} is an Index value ({t}); helper ops must fold away before emission",
                        location)
    if all(type(d) is int for d in t.shape):
        return t      # already static with plain ints (the common case: no new type needed)
    # numpy integer dims count as static here, though ir's is_static() only accepts int.
    if not all(isinstance(d, (int, np.integer)) for d in t.shape):
        raise EmitError(f"{what} has symbolic type {t}; bind its symbols (specialize) before emission",
                        location)
    return TensorType(t.dtype, tuple(int(d) for d in t.shape))
