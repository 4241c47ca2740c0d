"""Reading a .tflite flatbuffer into plain Python records.

The ``tflite`` package is the schema's generated Python code (pure Python, no
TensorFlow); it reads lazily, so a truncated or foreign file only fails when
a field is touched. :func:`read_model` therefore walks every subgraph once,
inside one error guard, and returns :class:`TfliteModel`: per subgraph
(:class:`Subgraph`; ``graphs[0]`` is the main one, the others are bodies of
IF, WHILE and CALL_ONCE) its tensors (dtype, shape, ``shape_signature``,
quantization parameters, constant data as zero-copy ``np.frombuffer`` views
of the file), operators (builtin name or custom code, version, inputs,
outputs, options table), inputs and outputs; the main subgraph's lists are
also the model's own ``tensors``/``ops``/``inputs``/``outputs``; and the
signature def's input and output names. A zero-element tensor that no op
computes is an empty constant. Sparse constants are densified here
(:mod:`.sparse`), so DENSIFY is a plain pass-through later.
"""
from __future__ import annotations

import functools
import math
import struct
from collections import Counter
from dataclasses import field
from ...records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import Optional

import numpy as np

from ...limits import check_tensor, max_tensor_bytes
from ...lowering.errors import ConvertError  # noqa: F401  (one error type for every importer's converters)
from . import flat
from .operand_checks import operand_problem
from .schema import tflite

BUILTIN_OPCODE2NAME = tflite.utils.BUILTIN_OPCODE2NAME

# TFLite tensor types and the numpy dtype of their buffers.
NUMPY_TYPES = {
    tflite.TensorType.FLOAT32: np.float32, tflite.TensorType.FLOAT16: np.float16,
    tflite.TensorType.FLOAT64: np.float64, tflite.TensorType.INT32: np.int32,
    tflite.TensorType.INT64: np.int64, tflite.TensorType.INT16: np.int16,
    tflite.TensorType.INT8: np.int8, tflite.TensorType.UINT8: np.uint8,
    tflite.TensorType.BOOL: np.bool_, tflite.TensorType.UINT16: np.uint16,
    tflite.TensorType.UINT32: np.uint32, tflite.TensorType.UINT64: np.uint64,
}
TYPE_NAMES = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
_ITEMSIZES = {k: np.dtype(v).itemsize for k, v in NUMPY_TYPES.items()}
_INT_LIMITS = {k: np.iinfo(v) for k, v in NUMPY_TYPES.items() if np.issubdtype(v, np.integer)}
_TINY = np.finfo(np.float32).tiny
CUSTOM = tflite.BuiltinOperator.CUSTOM
_PLACEHOLDER = tflite.BuiltinOperator.PLACEHOLDER_FOR_GREATER_OP_CODES
_F32, _I64 = np.dtype("<f4"), np.dtype("<i8")
_INT8, _UINT8, _UINT32 = flat.INT8.unpack_from, flat.UINT8.unpack_from, flat.UINT32.unpack_from


class ModelReadError(Exception):
    """The file is not a readable TFLite model."""


@dataclass(frozen=True)
class QuantParams:
    """A tensor's quantization: per-tensor (one scale) or per-channel along ``axis``."""

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1


@dataclass
class TensorInfo:
    index: int
    name: str
    type: int                        # tflite.TensorType
    shape: tuple
    signature: Optional[tuple]       # shape_signature (-1 = dynamic), when the model has one
    data: Optional[np.ndarray] = None
    quant: Optional[QuantParams] = None
    is_variable: bool = False
    own_data: bool = False           # ``data`` is memory no other tensor holds, read by one operator input (_own_data)

    @property
    def type_name(self) -> str:
        return TYPE_NAMES.get(self.type, str(self.type))


@dataclass
class OpInfo:
    index: int
    op_type: str                     # builtin name, or the custom code for CUSTOM ops
    custom: bool
    version: int
    inputs: list                     # tensor indices; -1 = optional input left out
    outputs: list
    options: object = None           # the builtin options (flat.AccessorTable), or None
    options_type: int = 0
    quantized: Optional[bool] = None   # whether it reads or writes quantized tensors (driver.quantized_op's cache)


@dataclass
class Subgraph:
    """One subgraph: its own tensors (indices are local to it), operators, inputs and outputs."""

    index: int
    name: str
    tensors: list
    ops: list
    inputs: list
    outputs: list


@dataclass
class TfliteModel:
    tensors: list
    ops: list
    inputs: list
    outputs: list
    input_names: dict = field(default_factory=dict)    # tensor index -> signature name
    output_names: dict = field(default_factory=dict)
    subgraphs: int = 1
    version: int = 3
    graphs: list = field(default_factory=list)          # every Subgraph; graphs[0] is the main one
    npu_fast: bool = False      # --npu-fast: cheaper, not bit-exact lowerings (read by every context)


def read_model(data: bytes) -> TfliteModel:
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise ModelReadError("the file has no TFLite identifier ('TFL3' at byte 4)")
    try:
        return _read(data)
    except (struct.error, IndexError, ValueError, TypeError, UnicodeDecodeError, OverflowError) as e:
        raise ModelReadError(f"the flatbuffer is damaged or truncated ({type(e).__name__}: {e})") from None


def _read(data: bytes) -> TfliteModel:
    model = flat.root(data)
    if model.length(2) < 1:
        raise ModelReadError("the model has no subgraph")
    buffers = [_buffer(b, data) for b in model.tables(4)]
    codes = [_opcode(c) for c in model.tables(1)]
    graphs = [_subgraph(sg, k, buffers, codes) for k, sg in enumerate(model.tables(2))]
    main = graphs[0]
    if len(graphs) == 1:    # (a body may capture an enclosing tensor by name: see .captures)
        _own_data(main)
    result = TfliteModel(main.tensors, main.ops, main.inputs, main.outputs, subgraphs=len(graphs),
                         version=model.scalar(0, flat.UINT32, 0), graphs=graphs)
    _read_signature(model, result)
    return result


def _subgraph(sg: flat.Table, k: int, buffers: list, codes: list) -> Subgraph:
    """Subgraph ``k`` (schema table SubGraph: tensors, inputs, outputs, operators, name)."""
    checked: set = set()
    tensors = [_tensor(sg, at, fields, i, buffers, checked)
               for i, (at, fields) in enumerate(sg.tables_fields(0, _TENSOR_SLOTS))]
    ops = [_op(sg, at, fields, i, codes) for i, (at, fields) in enumerate(sg.tables_fields(3, _OP_SLOTS))]
    inputs = list(sg.ints(1) or ())
    outputs = list(sg.ints(2) or ())
    where = "" if k == 0 else f" in subgraph {k}"
    for i in inputs + outputs + [t for op in ops for t in op.outputs]:
        if not 0 <= i < len(tensors):
            raise ModelReadError(f"tensor index {i} is out of range ({len(tensors)} tensors{where})")
    for op in ops:
        bad = next((i for i in op.inputs if not -1 <= i < len(tensors)), None)
        if bad is not None:   # -1 marks an optional input left out; nothing else may be negative
            raise ModelReadError(f"operator {op.index} ({op.op_type}) reads tensor index {bad}, out of range "
                                 f"({len(tensors)} tensors{where}; -1 marks an omitted input)")
        why = operand_problem(op, tensors)
        if why:
            raise ModelReadError(f"operator {op.index} ({op.op_type}{where}) cannot run: {why}; LiteRT refuses "
                                 "such a model too")
    _fill_empty_constants(tensors, ops, inputs)
    name = (sg.string(4) or b"").decode("utf-8", errors="replace") or f"subgraph_{k}"
    return Subgraph(k, name, tensors, ops, inputs, outputs)


def _own_data(sub: Subgraph) -> None:
    """Mark the constant tensors whose data no other tensor views (TFLite writers share one buffer between
    equal constants) and that exactly one operator input reads, and which are no graph output: a converter
    may put such data in a CONST without copying it, as no other CONST of the program can then view the
    same memory (the writer stores CONSTs that view one memory once: a copy keeps them apart)."""
    readers = Counter(i for op in sub.ops for i in op.inputs)
    held = Counter(_address(t.data) for t in sub.tensors if t.data is not None)
    outputs = set(sub.outputs)
    for t in sub.tensors:
        if t.data is not None and t.data.size and held[_address(t.data)] == 1 and readers[t.index] == 1 \
                and t.index not in outputs:
            t.own_data = True


def _address(data: np.ndarray) -> int:
    return data.__array_interface__["data"][0]


def _fill_empty_constants(tensors: list, ops: list, inputs: list) -> None:
    """A tensor with no elements that nothing computes holds its (empty) value already: the flatbuffer
    writer stores no bytes for it, so it looks like a tensor without data. TensorFlow's converter writes
    RESHAPE's target shape for a scalar result this way (onnx-tf's Squeeze in openWakeWord's models), and
    LiteRT reads it as the empty shape; give it an empty array of its type."""
    computed = {o for op in ops for o in op.outputs} | set(inputs)
    for t in tensors:
        static = t.signature is None or -1 not in t.signature
        if (t.data is None and not t.is_variable and t.index not in computed and t.type in NUMPY_TYPES
                and static and 0 in t.shape):
            t.data = np.zeros(t.shape, NUMPY_TYPES[t.type])


def _buffer(buf: flat.Table, data: bytes) -> Optional[np.ndarray]:
    """The bytes of one buffer (schema table Buffer: data, offset, size): a view into the file (inline,
    or at an offset for >2 GB models)."""
    start = buf.scalar(1, flat.UINT64, 0)
    if start > 1:
        size = buf.scalar(2, flat.UINT64, 0)
        if start + size > len(data):
            raise ModelReadError(f"a buffer at offset {start} of {size} bytes runs past the end of the file")
        return np.frombuffer(data, np.uint8, count=size, offset=start)
    values = buf.array(0, np.uint8)
    return values if values is not None and values.size else None


def _opcode(code: flat.Table) -> tuple:
    """(name, custom, version) of one OperatorCode (deprecated_builtin_code, custom_code, version,
    builtin_code): the int8 deprecated code holds codes below 127, the int32 one every code."""
    deprecated = code.scalar(0, flat.INT8, 0)
    wide = code.scalar(3, flat.INT32, 0)
    builtin = max(wide if wide >= _PLACEHOLDER else deprecated, deprecated)
    version = code.scalar(2, flat.INT32, 1)
    if builtin == CUSTOM:
        custom = code.string(1)
        return (custom.decode("utf-8", errors="replace") if custom else "?", True, version)
    return (BUILTIN_OPCODE2NAME.get(builtin, f"BUILTIN_{builtin}"), False, version)


# the Tensor fields _tensor reads, in its order: name, shape, shape_signature, quantization, type, is_variable,
# buffer, sparsity
_TENSOR_SLOTS = (3, 0, 7, 4, 1, 5, 2, 6)


def _tensor(sg: flat.Table, pos: int, fields: tuple, index: int, buffers: list, checked: set) -> TensorInfo:
    """One tensor (schema table Tensor: shape, type, buffer, name, quantization, is_variable, sparsity,
    shape_signature) of subgraph ``sg``, at ``pos`` with the offsets of :data:`_TENSOR_SLOTS` (``fields``).
    ``checked``: the (shape, type) pairs whose size is known to be within the budget. (Its fields are read
    straight at their offsets: a model has hundreds of tensors.)"""
    buf = sg.buf
    at_name, at_shape, at_signature, at_quant, at_type, at_variable, at_buffer, at_sparsity = fields
    name = (flat.string_at(buf, pos, at_name) or b"").decode("utf-8", errors="replace") or f"tensor_{index}"
    shape = flat.ints_at(buf, pos, at_shape) or ()
    signature = flat.ints_at(buf, pos, at_signature)
    quant = None
    if at_quant:
        try:
            quant = _quant(flat.table_at(buf, pos, at_quant, sg.vtables))
        except ModelReadError as e:
            raise ModelReadError(f"tensor '{name}': {e}") from None
    info = TensorInfo(index, name, _INT8(buf, pos + at_type)[0] if at_type else 0, shape, signature, quant=quant,
                      is_variable=bool(_UINT8(buf, pos + at_variable)[0]) if at_variable else False)
    if quant is not None:
        _check_zero_points(info)
    if info.type in NUMPY_TYPES and (shape, info.type) not in checked:
        # shape (not signature) dims are concrete: the budget applies as declared (once per shape and type;
        # int32 dims never pass TOSA's limit, so only a size over the budget needs the full check's words)
        if min(shape, default=0) < 0 or math.prod(shape) * _ITEMSIZES[info.type] > max_tensor_bytes():
            check_tensor(f"tensor '{name}'", [max(d, 0) for d in shape], NUMPY_TYPES[info.type])
        checked.add((shape, info.type))
    buffer = _UINT32(buf, pos + at_buffer)[0] if at_buffer else 0
    raw = buffers[buffer] if 0 < buffer < len(buffers) else None
    if raw is not None:
        info.data = _typed_data(info, raw, _sparsity(flat.table_at(buf, pos, at_sparsity, sg.vtables)))
    return info


def _sparsity(table: Optional[flat.Table]) -> Optional[tflite.SparsityParameters]:
    """The generated reader of a tensor's sparsity parameters (rare: read by .sparse)."""
    if table is None:
        return None
    return flat.generated(tflite.SparsityParameters, flat.AccessorTable(table.buf, table.pos))


def _check_zero_points(info: TensorInfo) -> None:
    """A quantized integer tensor's zero points lie in its own type's range."""
    limits = _INT_LIMITS.get(info.type)
    if info.quant is None or limits is None:
        return
    zp = info.quant.zero_point.reshape(-1)
    if zp.size == 1 and limits.min <= zp[0] <= limits.max:   # (per-tensor: the common case, without arrays)
        return
    bad = zp[(zp < limits.min) | (zp > limits.max)]
    if bad.size:
        raise ModelReadError(f"tensor '{info.name}' ({info.type_name}) has zero point {int(bad[0])}, outside "
                             f"{limits.min}..{limits.max}")


def _densified(values: np.ndarray, info: TensorInfo, sparsity: tflite.SparsityParameters) -> np.ndarray:
    """The dense values of a sparse constant; the sparse reader is imported only for one (start-up, issue 13)."""
    from .sparse import SparseError, densify
    try:
        return densify(values, info.shape, sparsity, info.name)
    except SparseError as e:
        raise ModelReadError(str(e)) from None


def _typed_data(info: TensorInfo, raw: np.ndarray, sparsity: Optional[tflite.SparsityParameters]) -> np.ndarray:
    if info.type not in NUMPY_TYPES:
        raise ModelReadError(f"constant tensor '{info.name}' has type {info.type_name}, which tosaconv cannot read")
    dtype = np.dtype(NUMPY_TYPES[info.type])
    if raw.size % dtype.itemsize:
        raise ModelReadError(f"constant tensor '{info.name}' has {raw.size} bytes, not a whole number of "
                             f"{dtype.name} values")
    values = raw.view(dtype)           # zero-copy: a view of the file's bytes
    if sparsity is not None:
        return _densified(values, info, sparsity)
    if values.size != math.prod(info.shape):
        raise ModelReadError(f"constant tensor '{info.name}' has {values.size} values for shape {list(info.shape)}")
    return values.reshape(info.shape)


def _quant(q: Optional[flat.Table]) -> Optional[QuantParams]:
    """Schema table QuantizationParameters: min, max, scale, zero_point, details, quantized_dimension."""
    scale = q.array(2, _F32) if q is not None else None
    if scale is None or scale.size == 0:
        return None
    scale = np.asarray(scale, np.float32)
    zp = q.array(3, _I64)
    zp = np.zeros(scale.shape, np.int64) if zp is None or zp.size == 0 else np.asarray(zp, np.int64)
    if scale.size == 1 and math.isfinite(scale[0]) and scale[0] >= _TINY:   # (per-tensor: without arrays)
        return QuantParams(scale, zp, q.scalar(6, flat.INT32, 0))
    ok = np.isfinite(scale) & (scale >= _TINY)
    if not np.all(ok):
        raise ModelReadError(f"a quantization scale is {scale[~ok][0]}; scales must be finite, positive "
                             "normal float32 numbers")
    return QuantParams(scale, zp, q.scalar(6, flat.INT32, 0))


_OP_SLOTS = (0, 1, 2, 4, 3)   # the Operator fields _op reads, in its order (see there)


def _op(sg: flat.Table, pos: int, fields: tuple, index: int, codes: list) -> OpInfo:
    """One operator (schema table Operator: opcode_index, inputs, outputs, builtin_options_type,
    builtin_options) of subgraph ``sg``, at ``pos`` with the offsets of :data:`_OP_SLOTS` (``fields``)."""
    buf = sg.buf
    at_code, at_inputs, at_outputs, at_options, at_type = fields
    idx = _UINT32(buf, pos + at_code)[0] if at_code else 0
    if not 0 <= idx < len(codes):
        raise ModelReadError(f"operator {index} uses opcode index {idx}, but the model has {len(codes)} codes")
    name, custom, version = codes[idx]
    inputs = list(flat.ints_at(buf, pos, at_inputs) or ())
    outputs = list(flat.ints_at(buf, pos, at_outputs) or ())
    at = pos + at_options + _UINT32(buf, pos + at_options)[0] if at_options else 0
    options, options_type = (flat.AccessorTable(buf, at) if at else None), _UINT8(buf, pos + at_type)[0] if at_type else 0
    try:
        _probe_options(options, options_type, sg.vtables)
    except (struct.error, IndexError, ValueError, TypeError, OverflowError, UnicodeDecodeError) as e:
        raise ModelReadError(f"operator {index} ({name}): its options table is damaged or reaches outside "
                             f"the file ({type(e).__name__}: {e})") from None
    return OpInfo(index, name, custom, version, inputs, outputs, options, options_type)


def _probe_options(table: Optional[flat.AccessorTable], options_type: int, vtables: Optional[dict] = None) -> None:
    """Read every field of an operator's options once, so a table reaching outside the file fails
    here (struct.error, caught by read_model) and not in a converter."""
    name = _OPTION_NAMES.get(options_type)
    if table is None or name is None or not hasattr(tflite, name):
        return
    if _scalar_fields(name) and _scalars_inside(table, vtables):
        return
    obj = flat.generated(getattr(tflite, name), table)
    for reader in _option_fields(name):
        getattr(obj, reader)()


@functools.lru_cache(maxsize=None)
def _option_fields(name: str) -> tuple:
    """The zero-argument field readers of options class ``name`` (vectors through their AsNumpy)."""
    cls = getattr(tflite, name)
    fields = []
    for attr, fn in vars(cls).items():
        if attr.startswith("_") or attr in ("Init",) or attr.startswith("GetRootAs") or not callable(fn):
            continue
        if attr.endswith(("IsNone", "Length")) or "BufferHasIdentifier" in attr:
            continue
        if fn.__code__.co_argcount == 1:
            fields.append(attr)
    return tuple(fields)


_OPTION_NAMES = {v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_")}
# the names a generated reader of one scalar field uses (besides its ``...Flags`` type and ``bool``)
_SCALAR_READ = frozenset(("flatbuffers", "number_types", "py_type", "_tab", "Offset", "Get", "Pos"))


@functools.lru_cache(maxsize=None)
def _scalar_fields(name: str) -> bool:
    """Whether options class ``name`` has fields, each a scalar (no string, vector, table or union)."""
    cls = getattr(tflite, name)
    names = [{n for n in getattr(cls, f).__code__.co_names if not n.endswith("Flags") and n != "bool"}
             for f in _option_fields(name)]
    return bool(names) and all(n == _SCALAR_READ for n in names)


def _scalars_inside(table: flat.AccessorTable, vtables: Optional[dict]) -> bool:
    """True when every scalar field of ``table`` lies inside the file (its whole vtable does, and 8 bytes
    from its last field's offset), so reading them cannot fail (the probe's reads are then skipped). A vtable
    out of the file fails here, as its first field's read would. ``vtables``: the vtables read so far (the
    model's options tables share a few)."""
    fields = table._fields = flat.Table(table.Bytes, table.Pos, vtables)   # (the converters read it again)
    return fields.padded is not None and table.Pos + max(fields.slots, default=0) + 8 <= len(table.Bytes)


def _read_signature(model: flat.Table, result: TfliteModel) -> None:
    """Names from the first signature def (SignatureDef: inputs, outputs, ..., subgraph_index) whose
    subgraph is the main one; each TensorMap holds a name and a tensor index."""
    for sig in model.tables(7):
        if sig.scalar(4, flat.UINT32, 0) != 0:
            continue
        for names, maps in ((result.input_names, sig.tables(0)), (result.output_names, sig.tables(1))):
            for m in maps:
                name = m.string(0)
                if name is not None:
                    names[m.scalar(1, flat.UINT32, 0)] = name.decode("utf-8", errors="replace")
        return
