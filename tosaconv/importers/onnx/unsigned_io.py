"""uint8/uint16, int64 and float64 model inputs and outputs in the ONNX importer.

TOSA 1.0 has no unsigned tensors: only RESCALE reads or writes int8/int16
storage as unsigned (``input_unsigned`` / ``output_unsigned``). An image model
that takes uint8 pixels therefore gets an INT8 program input holding the
same bits (:mod:`.ops.qtypes` explains the convention), recorded as unsigned
so every reader interprets it right: the quantized ops already do, and Cast
turns it into its true value with one unsigned RESCALE (``input_unsigned``,
exact) before converting it (:func:`true_value`). A uint8 *output* (a Cast
to uint8, a QuantizeLinear to uint8) is likewise the INT8 bits.

:func:`check_readers` refuses, before anything converts, a uint8/uint16
input read directly by an op that would compute on the stored bits (an Add,
a Conv...), naming each one; layout ops in between are followed.

The model's own type of every such edge (and of int64 and float64 edges,
which TOSA stores as int32 and float32) is recorded in
``graph.input_dtypes`` / ``graph.output_dtypes``, so the report says so and a
run takes and saves arrays in those types (:mod:`tosaconv.io_dtypes`).
"""
from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Iterator

import onnx

from ...diagnostics import ConversionError, Diagnostic
from ...ir import attrs as A
from ...ir.dtypes import DType
from ...ir.location import Location
from ...ir.ops import Op
from ...lowering.limits import Limit, LimitKind, limit_note
from .registry import EVERY_OP, publish
from .ops.qtypes import UINT8, UINT16, QTensor, mark_unsigned, signed_value, stored_qtype

if TYPE_CHECKING:
    from ...ir.graph import Graph, Value
    from .context import ImportContext

T = onnx.TensorProto
MODEL_DTYPES = {T.UINT8: "uint8", T.UINT16: "uint16", T.UINT32: "uint32", T.UINT64: "uint64", T.INT64: "int64",
                T.DOUBLE: "float64", T.INT4: "int4", T.UINT4: "uint4", T.INT2: "int2", T.UINT2: "uint2"}
_UNSIGNED = {T.UINT8: UINT8, T.UINT16: UINT16}
NARROW = (T.INT4, T.UINT4, T.INT2, T.UINT2)   # 4- and 2-bit integers: INT8 holding their true values
# the IR types an edge of each model type may be stored in: uint8/uint16 as the same bits, or widened to INT32
# holding the true values (see :func:`input_dtype`); uint32/uint64 and int64 as INT32 true values
_STORED = {"uint8": (DType.INT8, DType.INT32), "uint16": (DType.INT16, DType.INT32), "uint32": (DType.INT32,),
           "uint64": (DType.INT32,), "int64": (DType.INT32,), "float64": (DType.FP32,),
           **{narrow: (DType.INT8,) for narrow in ("int4", "uint4", "int2", "uint2")}}   # INT8 true values

# ops whose converters read unsigned storage correctly (Shape and Size read no values), and layout ops that
# carry it unchanged
READERS = {"Cast", "DequantizeLinear", "QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger", "MaxPool",
           "ArgMax", "ArgMin", "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax",
           "QLinearConcat", "QLinearWhere", "QLinearGlobalAveragePool", "QLinearAveragePool", "QLinearReduceMean",
           "QGemm", "Shape", "Size"}
LAYOUT = {"Transpose", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Slice"}
# readers that work on true int32 values as well (a widened input), and readers that need the stored bits
# (the quantized ops, and QuantizeLinear, whose zero point's type is its output type)
VALUE_READERS = {"Cast", "MaxPool", "ArgMax", "ArgMin", "Shape", "Size"}
BITS_READERS = (READERS - VALUE_READERS) | {"QuantizeLinear"}


def input_dtype(g: onnx.GraphProto, name: str, elem_type: int, stored: DType) -> DType:
    """The IR type of graph input ``name`` of ONNX type ``elem_type`` (``stored`` by default): a uint8/uint16
    input that ops computing on values read directly (an Add, a Greater), and no op that needs its bits
    (the quantized ops), is widened to INT32 holding its true values, so those ops compute on them exactly
    (unless the model has uint8/uint16 constants, which stay bits and would meet it in those ops);
    uint32/uint64 are INT32 true values (a run checks that they fit, as for int64)."""
    if elem_type in (T.UINT32, T.UINT64):
        return DType.INT32
    if elem_type not in _UNSIGNED:
        return stored
    bad, bits = _readers(g, name)
    return DType.INT32 if bad and not bits and not _unsigned_constants(g) else stored


def _unsigned_constants(g: onnx.GraphProto) -> bool:
    """Whether ``g`` has a uint8/uint16 initializer or Constant (in subgraphs too)."""
    if any(t.data_type in _UNSIGNED for t in g.initializer):
        return True
    return any(a.t.data_type in _UNSIGNED for n in _nodes(g) if n.op_type == "Constant" for a in n.attribute
               if a.type == onnx.AttributeProto.TENSOR)


def declared_input(ctx: ImportContext, v: Value, elem_type: int) -> Value:
    """Graph input ``v`` of ONNX type ``elem_type``: its model type recorded, unsigned bits marked."""
    if elem_type in MODEL_DTYPES:
        ctx.graph.input_dtypes[v.name] = MODEL_DTYPES[elem_type]
    if elem_type in _UNSIGNED and v.type.dtype is not DType.INT32:
        mark_unsigned(ctx, v, _UNSIGNED[elem_type])
    return v


def check_readers(g: onnx.GraphProto, graph: Graph) -> None:
    """Refuse (one error listing all) every op that reads the bits of a uint8/uint16 input stored as
    INT8/INT16 bits (one that an op needing those bits reads too) as signed data."""
    diags = []
    stored = {v.name: v.type.dtype for v in graph.inputs}
    for name, dtype in graph.input_dtypes.items():
        if dtype in ("uint8", "uint16") and stored.get(name) is not DType.INT32:
            diags += [_problem(name, dtype, node) for node in _readers(g, name)[0]]
    if diags:
        raise ConversionError(diags)


def all_readers(g: onnx.GraphProto, name: str) -> list:
    """Every node that reads ``name`` (through layout ops; in subgraphs too), layout ops excepted."""
    found, queue, seen, nodes = [], deque([name]), {name}, list(_nodes(g))
    while queue:
        tensor = queue.popleft()
        for node in nodes:
            if tensor not in node.input:
                continue
            if node.op_type in LAYOUT and node.input[0] == tensor:
                queue.extend(o for o in node.output if o and o not in seen)
                seen.update(node.output)
            else:
                found.append(node)
    return found


def _readers(g: onnx.GraphProto, name: str) -> tuple:
    """(nodes that read ``name`` and are not unsigned-aware readers, nodes that read it and need its bits)."""
    nodes = all_readers(g, name)
    return [n for n in nodes if n.op_type not in READERS], [n for n in nodes if n.op_type in BITS_READERS]


def _nodes(g: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """The nodes of ``g`` and of the subgraphs nested in it (a branch may read an outer input)."""
    for node in g.node:
        yield node
        for a in node.attribute:
            for sub in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
                yield from _nodes(sub)


UNSIGNED_READER = publish(EVERY_OP, Limit(
    "unsigned-input", LimitKind.DTYPE, "a model input",
    ("UINT8 or UINT16, read directly by an op that takes no unsigned data while a quantized op (DequantizeLinear, "
     "QLinear*, ConvInteger, MatMulInteger, QuantizeLinear's zero point) needs its bits or the model has uint8/uint16 "
     "constants",),
    "TOSA stores it as signed bits then, and tosaconv computes on unsigned bits only through Cast, the quantized "
    "ops, MaxPool, ArgMax/ArgMin and layout ops (otherwise the input is widened to INT32 holding its true values)",
    "insert a Cast to int32 or float after the input"))


def _problem(name: str, dtype: str, node: onnx.NodeProto) -> Diagnostic:
    where = node.name or (node.output[0] if node.output else node.op_type)
    return Diagnostic(
        "E-INPUT-TYPE", f"input '{name}' is {dtype}, which TOSA stores as signed bits; {node.op_type} '{where}' "
        "reads it directly, and tosaconv computes on unsigned data only through Cast, the quantized ops "
        "(DequantizeLinear, QLinear*, ConvInteger, MatMulInteger), MaxPool, ArgMax/ArgMin and layout ops",
        Location(node.op_type, where, "onnx"), notes=(limit_note(UNSIGNED_READER.key),),
        hint=f"insert a Cast of '{name}' to int32 or float before {node.op_type}")


def true_value(ctx: ImportContext, x: Value) -> Value:
    """``x`` as int32 holding its true values when it stores unsigned bits (an exact unsigned RESCALE to
    the signed form ``q - offset``, then CAST and ADD offset), else ``x`` itself."""
    qtype = stored_qtype(ctx, x) if x.type.dtype in (DType.INT8, DType.INT16) else None
    if qtype is None or not qtype.unsigned:
        return x
    signed = signed_value(ctx, QTensor(qtype, value=x))
    wide = ctx.b.emit(Op.CAST, signed, attrs=A.CastAttrs(DType.INT32))
    return ctx.b.emit(Op.ADD, wide, ctx.b.scalar_like(qtype.offset, wide.type))


def record_outputs(ctx: ImportContext, g: onnx.GraphProto) -> None:
    """The model type of every uint8/uint16/uint32/uint64/int64/float64 graph output stored in another IR type (an output
    that --int-io made signed int8 is not uint8 bits, and keeps its io record only)."""
    for vi, v in zip(g.output, ctx.graph.outputs):
        dtype = MODEL_DTYPES.get(vi.type.tensor_type.elem_type)
        quant = ctx.graph.output_quant.get(vi.name)
        if dtype is None or v.type.dtype not in _STORED[dtype] or (quant is not None and not quant.unsigned):
            continue
        ctx.graph.output_dtypes[vi.name] = dtype
