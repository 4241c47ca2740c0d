"""Writing small .tflite models with the ``tflite`` package's flatbuffers builder functions.

No TensorFlow: the sample-model generator and the tests describe a model op
by op and get the flatbuffer bytes::

    m = ModelBuilder()
    x = m.input("x", [1, 8, 8, 3], signature=[-1, 8, 8, 3])
    w = m.const("w", weights)
    y = m.tensor("y", [1, 8, 8, 4])
    m.op("CONV_2D", [x, w, -1], [y], "Conv2DOptions", Padding=0, StrideH=1, StrideW=1)
    m.output(y)
    data = m.finish()

Option fields use the schema's CamelCase names (``StrideW``); a list value is
written as an int32 vector (``NewShape``, ``SqueezeDims``) and a str as a
string (``SharedName``). Constant buffers are 16-byte aligned like the
official converter writes them. ``m.subgraph("body")`` starts another
subgraph (for IF, WHILE and CALL_ONCE; its ``index`` goes in their options)
with tensors, ops, inputs and outputs of its own; resource tensors (VAR_HANDLE's
result) are ``m.tensor("h", [], "RESOURCE")``. ``m.sparse_const`` stores a constant in
TFLite's sparse form (the input of DENSIFY).
"""
from __future__ import annotations

from dataclasses import field
from ...records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

import flatbuffers
import numpy as np
import tflite
from tflite.utils import BUILTIN_OPCODE2NAME

from .sparse import encode

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from numpy.typing import DTypeLike

_BUILTIN = {v: k for k, v in BUILTIN_OPCODE2NAME.items()}
_TYPES = {np.dtype(np.float32): "FLOAT32", np.dtype(np.float16): "FLOAT16", np.dtype(np.int32): "INT32",
          np.dtype(np.int64): "INT64", np.dtype(np.int8): "INT8", np.dtype(np.uint8): "UINT8",
          np.dtype(np.int16): "INT16", np.dtype(np.bool_): "BOOL"}


@dataclass
class _Tensor:
    name: str
    shape: list
    dtype: str
    buffer: int
    signature: Optional[list] = None
    quant: Optional[tuple] = None          # (scales, zero_points, axis)
    sparsity: Optional[tuple] = None       # (levels, traversal order, block map), see sparse.encode


@dataclass
class _Op:
    code: tuple
    inputs: list
    outputs: list
    options: Optional[str] = None
    fields: dict = field(default_factory=dict)


class ModelBuilder:
    def __init__(self, description: str = "tosaconv test model"):
        self.description = description
        self.buffers: list = [b""]          # buffer 0 is the empty sentinel
        self.tensors: list = []
        self.ops: list = []
        self.codes: list = []               # (builtin code, custom code or None, version)
        self.inputs: list = []
        self.outputs: list = []
        self.signature: Optional[tuple] = None   # (input names, output names)
        self.name, self.index, self.subgraphs = "main", 0, []   # the other subgraphs (main builder only)

    def subgraph(self, name: str) -> "ModelBuilder":
        """A new subgraph, numbered ``index`` in the model; it shares this builder's buffers and op codes."""
        sub = ModelBuilder(self.description)
        sub.buffers, sub.codes = self.buffers, self.codes
        sub.name, sub.index = name, len(self.subgraphs) + 1
        self.subgraphs.append(sub)
        return sub

    # -- tensors -----------------------------------------------------------------
    def tensor(self, name: str, shape: Sequence[int], dtype: str = "FLOAT32", signature: Optional[Sequence[int]] = None, quant: Optional[tuple] = None) -> int:
        self.tensors.append(_Tensor(name, [int(d) for d in shape], dtype, 0,
                                    None if signature is None else [int(d) for d in signature], quant))
        return len(self.tensors) - 1

    def input(self, name: str, shape: Sequence[int], dtype: str = "FLOAT32", signature: Optional[Sequence[int]] = None, quant: Optional[tuple] = None) -> int:
        t = self.tensor(name, shape, dtype, signature, quant)
        self.inputs.append(t)
        return t

    def output(self, *tensors: int) -> None:
        self.outputs.extend(tensors)

    def const(self, name: str, array: ArrayLike, dtype: Optional[str] = None, quant: Optional[tuple] = None) -> int:
        arr = np.asarray(array)
        self.buffers.append(np.ascontiguousarray(arr).tobytes())
        t = self.tensor(name, arr.shape, dtype or _TYPES[arr.dtype], quant=quant)
        self.tensors[t].buffer = len(self.buffers) - 1
        return t

    def sparse_const(self, name: str, dense: ArrayLike, formats: Sequence[str], order: Optional[Sequence[int]] = None, blocks: Sequence[tuple[int, int]] = (), quant: Optional[tuple] = None) -> int:
        """A constant stored sparse (``formats``, ``order``, ``blocks`` as :func:`.sparse.encode` takes them)."""
        values, levels, order, block_map = encode(np.asarray(dense), formats, order, blocks)
        t = self.const(name, values, quant=quant)
        self.tensors[t].shape = [int(d) for d in np.shape(dense)]
        self.tensors[t].sparsity = (levels, order, block_map)
        return t

    # -- operators -------------------------------------------------------------------
    def op(self, op_type: str, inputs: Sequence[int], outputs: Sequence[int], options: Optional[str] = None, version: int = 1, **fields) -> None:
        code = (_BUILTIN[op_type], None, version)
        self.ops.append(_Op(self._code(code), list(inputs), list(outputs), options, fields))

    def custom_op(self, custom_code: str, inputs: Sequence[int], outputs: Sequence[int]) -> None:
        code = (tflite.BuiltinOperator.CUSTOM, custom_code, 1)
        self.ops.append(_Op(self._code(code), list(inputs), list(outputs)))

    def _code(self, code: tuple) -> int:
        if code not in self.codes:
            self.codes.append(code)
        return self.codes.index(code)

    def sign(self, input_names: Sequence[str], output_names: Sequence[str]) -> None:
        """Add a signature def 'serving_default' naming the inputs and outputs (in order)."""
        self.signature = (list(input_names), list(output_names))

    # -- serialization --------------------------------------------------------------------
    def finish(self) -> bytes:
        b = flatbuffers.Builder(1024)
        buffers = [_buffer(b, data) for data in self.buffers]
        subgraphs = [self._subgraph(b)] + [sub._subgraph(b) for sub in self.subgraphs]
        codes = [_opcode(b, c) for c in self.codes]
        signature = self._signature(b)
        desc = b.CreateString(self.description)
        v_sub, v_codes, v_buf = _vector(b, subgraphs), _vector(b, codes), _vector(b, buffers)
        v_sig = _vector(b, [signature]) if signature is not None else None
        tflite.ModelStart(b)
        tflite.ModelAddVersion(b, 3)
        tflite.ModelAddOperatorCodes(b, v_codes)
        tflite.ModelAddSubgraphs(b, v_sub)
        tflite.ModelAddDescription(b, desc)
        tflite.ModelAddBuffers(b, v_buf)
        if v_sig is not None:
            tflite.ModelAddSignatureDefs(b, v_sig)
        b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    def _subgraph(self, b: flatbuffers.Builder) -> int:
        tensors = [_tensor(b, t) for t in self.tensors]
        ops = [_operator(b, op) for op in self.ops]
        name = b.CreateString(self.name)
        sg_tensors, sg_ops = _vector(b, tensors), _vector(b, ops)
        sg_in, sg_out = _ints(b, self.inputs), _ints(b, self.outputs)
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, sg_tensors)
        tflite.SubGraphAddOperators(b, sg_ops)
        tflite.SubGraphAddInputs(b, sg_in)
        tflite.SubGraphAddOutputs(b, sg_out)
        tflite.SubGraphAddName(b, name)
        return tflite.SubGraphEnd(b)

    def _signature(self, b: flatbuffers.Builder) -> Optional[int]:
        if self.signature is None:
            return None
        maps = []
        for names, indices in zip(self.signature, (self.inputs, self.outputs)):
            entries = []
            for n, i in zip(names, indices):
                s = b.CreateString(n)
                tflite.TensorMapStart(b)
                tflite.TensorMapAddName(b, s)
                tflite.TensorMapAddTensorIndex(b, i)
                entries.append(tflite.TensorMapEnd(b))
            maps.append(_vector(b, entries))
        key = b.CreateString("serving_default")
        tflite.SignatureDefStart(b)
        tflite.SignatureDefAddInputs(b, maps[0])
        tflite.SignatureDefAddOutputs(b, maps[1])
        tflite.SignatureDefAddSignatureKey(b, key)
        tflite.SignatureDefAddSubgraphIndex(b, 0)
        return tflite.SignatureDefEnd(b)


def _vector(b: flatbuffers.Builder, offsets: list) -> int:
    b.StartVector(4, len(offsets), 4)
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _ints(b: flatbuffers.Builder, values: Iterable[float], dtype: DTypeLike = np.int32) -> int:
    return b.CreateNumpyVector(np.asarray(list(values), dtype))


def _buffer(b: flatbuffers.Builder, data: bytes) -> int:
    vec = None
    if data:
        b.StartVector(1, len(data), 16)
        b.head = b.Head() - len(data)
        b.Bytes[b.Head():b.Head() + len(data)] = data
        b.vectorNumElems = len(data)
        vec = b.EndVector()
    tflite.BufferStart(b)
    if vec is not None:
        tflite.BufferAddData(b, vec)
    return tflite.BufferEnd(b)


def _tensor(b: flatbuffers.Builder, t: _Tensor) -> int:
    name = b.CreateString(t.name)
    shape = _ints(b, t.shape)
    signature = _ints(b, t.signature) if t.signature is not None else None
    quant = _quant(b, t.quant) if t.quant is not None else None
    sparsity = _sparsity(b, t.sparsity) if t.sparsity is not None else None
    tflite.TensorStart(b)
    tflite.TensorAddShape(b, shape)
    tflite.TensorAddType(b, getattr(tflite.TensorType, t.dtype))
    tflite.TensorAddBuffer(b, t.buffer)
    tflite.TensorAddName(b, name)
    if signature is not None:
        tflite.TensorAddShapeSignature(b, signature)
    if quant is not None:
        tflite.TensorAddQuantization(b, quant)
    if sparsity is not None:
        tflite.TensorAddSparsity(b, sparsity)
    return tflite.TensorEnd(b)


def _sparsity(b: flatbuffers.Builder, sparsity: tuple) -> int:
    levels, order, block_map = sparsity
    metas = [_dim_metadata(b, level) for level in levels]
    v_order, v_map, v_meta = _ints(b, order), _ints(b, block_map), _vector(b, metas)
    tflite.SparsityParametersStart(b)
    tflite.SparsityParametersAddTraversalOrder(b, v_order)
    tflite.SparsityParametersAddBlockMap(b, v_map)
    tflite.SparsityParametersAddDimMetadata(b, v_meta)
    return tflite.SparsityParametersEnd(b)


def _dim_metadata(b: flatbuffers.Builder, level: tuple) -> int:
    vectors = [_int32_vector(b, v) for v in level[1:]] if level[0] == "CSR" else None
    tflite.DimensionMetadataStart(b)
    if vectors is None:
        tflite.DimensionMetadataAddFormat(b, tflite.DimensionType.DENSE)
        tflite.DimensionMetadataAddDenseSize(b, level[1])
    else:
        tflite.DimensionMetadataAddFormat(b, tflite.DimensionType.SPARSE_CSR)
        tflite.DimensionMetadataAddArraySegmentsType(b, tflite.SparseIndexVector.Int32Vector)
        tflite.DimensionMetadataAddArraySegments(b, vectors[0])
        tflite.DimensionMetadataAddArrayIndicesType(b, tflite.SparseIndexVector.Int32Vector)
        tflite.DimensionMetadataAddArrayIndices(b, vectors[1])
    return tflite.DimensionMetadataEnd(b)


def _int32_vector(b: flatbuffers.Builder, values: Sequence[int]) -> int:
    v = _ints(b, values)
    tflite.Int32VectorStart(b)
    tflite.Int32VectorAddValues(b, v)
    return tflite.Int32VectorEnd(b)


def _quant(b: flatbuffers.Builder, quant: tuple) -> int:
    scales, zps, axis = quant
    s, z = _ints(b, scales, np.float32), _ints(b, zps, np.int64)
    tflite.QuantizationParametersStart(b)
    tflite.QuantizationParametersAddScale(b, s)
    tflite.QuantizationParametersAddZeroPoint(b, z)
    tflite.QuantizationParametersAddQuantizedDimension(b, axis)
    return tflite.QuantizationParametersEnd(b)


def _operator(b: flatbuffers.Builder, op: _Op) -> int:
    inputs, outputs = _ints(b, op.inputs), _ints(b, op.outputs)
    options = _options(b, op.options, op.fields) if op.options else None
    tflite.OperatorStart(b)
    tflite.OperatorAddOpcodeIndex(b, op.code)
    tflite.OperatorAddInputs(b, inputs)
    tflite.OperatorAddOutputs(b, outputs)
    if options is not None:
        tflite.OperatorAddBuiltinOptionsType(b, getattr(tflite.BuiltinOptions, op.options))
        tflite.OperatorAddBuiltinOptions(b, options)
    return tflite.OperatorEnd(b)


def _options(b: flatbuffers.Builder, name: str, fields: dict) -> int:
    vectors = {k: _ints(b, v) for k, v in fields.items() if isinstance(v, (list, tuple))}
    vectors.update({k: b.CreateString(v) for k, v in fields.items() if isinstance(v, str)})
    getattr(tflite, f"{name}Start")(b)
    for key, value in fields.items():
        getattr(tflite, f"{name}Add{key}")(b, vectors.get(key, value))
    return getattr(tflite, f"{name}End")(b)


def _opcode(b: flatbuffers.Builder, code: tuple) -> int:
    builtin, custom, version = code
    custom_str = b.CreateString(custom) if custom is not None else None
    tflite.OperatorCodeStart(b)
    tflite.OperatorCodeAddBuiltinCode(b, builtin)
    tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(builtin, 127))
    if custom_str is not None:
        tflite.OperatorCodeAddCustomCode(b, custom_str)
    tflite.OperatorCodeAddVersion(b, version)
    return tflite.OperatorCodeEnd(b)
