"""Serialize a :class:`BlockRecord` as a TOSA flatbuffer with ``flatbuffers.Builder``.

Tables are written bottom-up (children before parents, as flatbuffers
requires) in a fixed order, so the same records always give the same bytes.
Slots come from ``schema.py``. Constant data is not copied more than needed:
the builder is sized up front so it never regrows, and each array's ``uint8``
view goes in through a single ``tobytes``, 8-byte aligned as the schema's
``force_align`` asks. Scalars equal to their schema default are left out, as
flatbuffers does. Every string (tensor names, which each op's input and
output lists repeat, and locations) is written once and shared
(``CreateSharedString``), which saves both bytes and time; so are tables and
vectors whose content repeats (shape vectors, attribute tables without
vectors, locations): flatbuffers lets several parents point at one child.
"""
from __future__ import annotations

import struct

import flatbuffers
import numpy as np

from . import schema as S
from .errors import EmitError
from .records import BlockRecord, OpRecord, ShapeRecord, TensorRecord

_MAX_BYTES = 2**31 - 2**20  # flatbuffers' 2 GB limit, with room for the tables


class _Builder(flatbuffers.Builder):
    """flatbuffers' builder plus the offsets of children already written, by content."""

    __slots__ = ("written",)

    def __init__(self, size: int):
        super().__init__(size)
        self.written: dict = {}

    def once(self, key: tuple, make) -> int:
        """The offset of the child ``key`` names, written by ``make()`` the first time."""
        off = self.written.get(key)
        if off is None:
            off = self.written[key] = make()
        return off


def serialize(block: BlockRecord, version: "tuple | None" = None) -> bytes:
    """The flatbuffer bytes of a TOSA 1.0 graph: region ``main`` with ``block``, then its other regions
    (the then/else and cond/body graphs of control flow), one block each. ``version`` is
    ``S.WRITE_VERSION_SHAPE`` (1.1 draft) for a program that uses the EXT-SHAPE operators."""
    b = _Builder(_size_estimate(block))
    named = [("main", block)] + sorted(block.regions.items())
    regions = _offsets(b, [_region(b, name, _block(b, blk)) for name, blk in named])
    version = _version(b, version or S.WRITE_VERSION)
    b.StartObject(S.GraphSlot.COUNT)
    b.PrependUOffsetTRelativeSlot(S.GraphSlot.VERSION, version, 0)
    b.PrependUOffsetTRelativeSlot(S.GraphSlot.REGIONS, regions, 0)
    b.Finish(b.EndObject(), S.FILE_IDENTIFIER)
    return bytes(memoryview(b.Bytes)[b.Head():])  # one copy (Output() would make two)


def _size_estimate(block: BlockRecord) -> int:
    """Enough room that the builder never regrows (each regrowth copies all data written so far)."""
    records = block.record_count()
    names = sum(len(t.name) for blk in [block, *block.regions.values()] for t in blk.tensors + blk.shapes)
    return min(block.data_bytes() + 512 * records + 4 * names + 65536, flatbuffers.Builder.MAX_BUFFER_SIZE)


def too_big(block: BlockRecord) -> bool:
    return block.data_bytes() > _MAX_BYTES


def _region(b, region_name: str, block: int) -> int:
    # The official tools name the first region and its block "main"; the reference model requires it.
    name, blocks = b.CreateSharedString(region_name), _offsets(b, [block])
    b.StartObject(S.RegionSlot.COUNT)
    b.PrependUOffsetTRelativeSlot(S.RegionSlot.NAME, name, 0)
    b.PrependUOffsetTRelativeSlot(S.RegionSlot.BLOCKS, blocks, 0)
    return b.EndObject()


def _version(b, version: tuple) -> int:
    major, minor, patch, draft = version
    b.StartObject(S.VersionSlot.COUNT)
    b.PrependInt32Slot(S.VersionSlot.MAJOR, major, -1)
    b.PrependInt32Slot(S.VersionSlot.MINOR, minor, -1)
    b.PrependInt32Slot(S.VersionSlot.PATCH, patch, -1)
    b.PrependBoolSlot(S.VersionSlot.DRAFT, draft, True)
    return b.EndObject()


def _block(b, block: BlockRecord) -> int:
    tensors = _offsets(b, [_tensor(b, t) for t in block.tensors])
    shapes = _offsets(b, [_shape(b, s) for s in block.shapes])
    operators = _offsets(b, [_operator(b, op) for op in block.ops])
    inputs, outputs = _strings(b, block.inputs), _strings(b, block.outputs)
    name = b.CreateSharedString(block.name)
    b.StartObject(S.BlockSlot.COUNT)
    b.PrependUOffsetTRelativeSlot(S.BlockSlot.NAME, name, 0)
    b.PrependUOffsetTRelativeSlot(S.BlockSlot.OPERATORS, operators, 0)
    b.PrependUOffsetTRelativeSlot(S.BlockSlot.TENSORS, tensors, 0)
    b.PrependUOffsetTRelativeSlot(S.BlockSlot.INPUTS, inputs, 0)
    b.PrependUOffsetTRelativeSlot(S.BlockSlot.OUTPUTS, outputs, 0)
    b.PrependUOffsetTRelativeSlot(S.BlockSlot.SHAPES, shapes, 0)
    return b.EndObject()


def _tensor(b, t: TensorRecord) -> int:
    if any(not -(1 << 31) <= int(d) < (1 << 31) for d in t.shape):
        raise EmitError(f"tensor '{t.name}' has shape {list(t.shape)}, beyond TOSA's int32 dims")
    data = None if t.data is None else _aligned_bytes(b, t.data)
    dims = tuple(int(d) for d in t.shape)
    shape = b.once(("shape", dims), lambda: _int32s(b, dims))
    name = b.CreateSharedString(t.name)
    variable_name = None if t.variable_name is None else b.CreateSharedString(t.variable_name)
    b.StartObject(S.TensorSlot.COUNT)
    b.PrependUOffsetTRelativeSlot(S.TensorSlot.NAME, name, 0)
    b.PrependUOffsetTRelativeSlot(S.TensorSlot.SHAPE, shape, 0)
    b.PrependUint32Slot(S.TensorSlot.TYPE, t.type_code or S.dtype_code(t.dtype), 0)
    if data is not None:
        b.PrependUOffsetTRelativeSlot(S.TensorSlot.DATA, data, 0)
    if variable_name is not None:
        b.PrependBoolSlot(S.TensorSlot.VARIABLE, True, False)
        b.PrependUOffsetTRelativeSlot(S.TensorSlot.VARIABLE_NAME, variable_name, 0)
    return b.EndObject()


def _shape(b, s: ShapeRecord) -> int:
    data = None if s.data is None else _aligned_bytes(b, s.data)
    name = b.CreateSharedString(s.name)
    b.StartObject(S.ShapeSlot.COUNT)
    b.PrependUOffsetTRelativeSlot(S.ShapeSlot.NAME, name, 0)
    b.PrependUint32Slot(S.ShapeSlot.RANK, s.rank, 0)
    if data is not None:
        b.PrependUOffsetTRelativeSlot(S.ShapeSlot.DATA, data, 0)
    return b.EndObject()


def _operator(b, op: OpRecord) -> int:
    _check_int32_fields(op)
    attribute = _attribute(b, op.attribute or op.op, op.fields)
    inputs, outputs = _strings(b, op.inputs), _strings(b, op.outputs)
    location = None if op.location is None else b.once(("location", op.location), lambda: _location(b, op.location))
    code = S.OP_CODE[op.op]
    b.StartObject(S.OperatorSlot.COUNT)
    b.PrependUint32Slot(S.OperatorSlot.OP, code, 0)
    # union member N belongs to op N (a variable access is an IDENTITY with a variable's table)
    b.PrependUint8Slot(S.OperatorSlot.ATTRIBUTE_TYPE, S.OP_CODE[op.attribute or op.op], 0)
    b.PrependUOffsetTRelativeSlot(S.OperatorSlot.ATTRIBUTE, attribute, 0)
    b.PrependUOffsetTRelativeSlot(S.OperatorSlot.INPUTS, inputs, 0)
    b.PrependUOffsetTRelativeSlot(S.OperatorSlot.OUTPUTS, outputs, 0)
    if location is not None:
        b.PrependUOffsetTRelativeSlot(S.OperatorSlot.LOCATION, location, 0)
    return b.EndObject()


def _location(b, text: str) -> int:
    text_offset = b.CreateSharedString(text)
    b.StartObject(S.LocationSlot.COUNT)
    b.PrependUOffsetTRelativeSlot(S.LocationSlot.TEXT, text_offset, 0)
    return b.EndObject()


def _check_int32_fields(op: OpRecord) -> None:
    """Every int32 attribute value fits int32 (a model's 2^40 stride or pad is refused, not wrapped)."""
    for name, kind in S.attr_layout(op.attribute or op.op):
        if name not in op.fields or kind not in (S.INT32, S.INT32_VEC):
            continue
        values = [op.fields[name]] if kind == S.INT32 else list(op.fields[name])
        bad = next((int(v) for v in values if not -(1 << 31) <= int(v) < (1 << 31)), None)
        if bad is not None:
            where = f" at {op.location}" if op.location else ""
            raise EmitError(f"{op.op}{where}: attribute '{name}' holds {bad}, which does not fit TOSA's int32")


def _attribute(b, op_name: str, fields: dict) -> int:
    layout = S.attr_layout(op_name)
    if not any(kind in (S.INT32_VEC, S.BYTES, S.STRING) and name in fields for name, kind in layout):
        scalars = tuple((name, fields[name]) for name, _ in layout if name in fields)
        return b.once(("attribute", op_name, scalars), lambda: _attribute_table(b, layout, fields, {}))
    vectors = {name: _field_vector(b, kind, fields[name])
               for name, kind in layout if kind in (S.INT32_VEC, S.BYTES, S.STRING) and name in fields}
    return _attribute_table(b, layout, fields, vectors)


def _attribute_table(b, layout, fields: dict, vectors: dict) -> int:
    b.StartObject(len(layout))
    for slot, (name, kind) in enumerate(layout):
        if name in vectors:
            b.PrependUOffsetTRelativeSlot(slot, vectors[name], 0)
        elif name in fields and kind == S.BOOL:
            b.PrependBoolSlot(slot, bool(fields[name]), False)
        elif name in fields and kind == S.INT32:
            b.PrependInt32Slot(slot, int(fields[name]), 0)
        elif name in fields and kind == S.ENUM:
            b.PrependUint32Slot(slot, int(fields[name]), 0)
    return b.EndObject()


def _field_vector(b, kind: str, value) -> int:
    if kind == S.INT32_VEC:
        return _int32s(b, value)
    if kind == S.STRING:
        return b.CreateSharedString(value)
    return _aligned_bytes(b, np.frombuffer(bytes(value), dtype=np.uint8))


def _aligned_bytes(b, data: np.ndarray) -> int:
    # Pad first so the bytes end up 8-byte aligned (force_align: 8); the vector's
    # own 4-byte alignment is then already met. ``tobytes`` is the one copy made
    # (CreateNumpyVector would copy a uint8 array twice).
    b.Prep(8, data.size)
    return b.CreateByteVector(data.tobytes())


def _int32s(b, values) -> int:
    return b.CreateNumpyVector(np.asarray([int(v) for v in values], dtype="<i4"))


def _strings(b, strings) -> int:
    return _offsets(b, [b.CreateSharedString(s) for s in strings])


def _offsets(b, offsets: list) -> int:
    """A vector of offsets, written in one ``pack_into`` (as ``CreateNumpyVector`` writes its data) instead
    of one ``PrependUOffsetTRelative`` each. Element i, at ``4 * (n - i)`` bytes past the vector's start
    offset ``start``, stores the distance to its target: ``start + 4 * (n - i) - offsets[i]``."""
    n = len(offsets)
    start = b.StartVector(4, n, 4)
    b.head = b.Head() - 4 * n
    struct.pack_into(f"<{n}I", b.Bytes, b.Head(), *[start + 4 * (n - i) - off for i, off in enumerate(offsets)])
    return b.EndVector()
