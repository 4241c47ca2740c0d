"""Parse TOSA flatbuffer bytes into a :class:`BlockRecord`, checking as it goes.

It accepts what our writer and the official tools write: identifier ``TOSA``,
version 1.0.x (final, or marked draft as the official test generator writes
1.0.2) or 1.1.0 (draft), and regions of one block each: the
first is the program (the official tools call it and its block ``main``), the
others are the graphs of COND_IF and WHILE_LOOP, returned by name in the main
record's ``regions``. Every read is bounds-checked by :mod:`fbread`, so
a damaged file gives a :class:`ReadError` that says what is wrong.
"""
from __future__ import annotations

import numpy as np

from ..limits import check_tensor
from . import schema as S
from .errors import ReadError
from .fbread import Buffer, Table
from .records import BlockRecord, OpRecord, ShapeRecord, TensorRecord


def deserialize(data: bytes | memoryview) -> BlockRecord:
    try:
        buf = Buffer(data)
    except TypeError:
        raise ReadError("a TOSA file must be given as bytes") from None
    buf.check(0, 8, "file header")
    ident = bytes(buf.data[4:8])
    if ident != S.FILE_IDENTIFIER:
        raise ReadError(f"not a TOSA flatbuffer: file identifier is {ident!r}, expected b'TOSA'")
    root = buf.root()
    _check_version(root.table(S.GraphSlot.VERSION, "Version"))
    regions = root.tables(S.GraphSlot.REGIONS, "TosaRegion")
    if not regions:
        raise ReadError("the file has no region")
    main = _block(regions[0])
    for region in regions[1:]:
        name = region.string(S.RegionSlot.NAME)
        if name in main.regions or name == regions[0].string(S.RegionSlot.NAME):
            raise ReadError(f"the file has two regions named '{name}'")
        main.regions[name] = _block(region)
    return main


def _check_version(v: Table) -> None:
    if v is None:
        raise ReadError("the file has no TOSA version")
    d = S.VersionSlot.DEFAULTS
    version = (v.i32(S.VersionSlot.MAJOR, d[0]), v.i32(S.VersionSlot.MINOR, d[1]),
               v.i32(S.VersionSlot.PATCH, d[2]), v.boolean(S.VersionSlot.DRAFT, d[3]))
    if version not in S.READ_VERSIONS and version[:2] != (1, 0):
        text = f"{version[0]}.{version[1]}.{version[2]}{' (draft)' if version[3] else ''}"
        raise ReadError(f"TOSA version {text} is not supported; expected 1.0.x or the 1.1.0 draft")


def _only(tables: list[Table], what: str) -> Table:
    if not tables:
        raise ReadError(f"the file has no {what}")
    if len(tables) > 1:
        raise ReadError(f"a region has {len(tables)} {what}s; only one-{what} regions are supported")
    return tables[0]


def _block(region: Table) -> BlockRecord:
    block = _only(region.tables(S.RegionSlot.BLOCKS, "TosaBasicBlock"), "block")
    record = BlockRecord(
        name=block.string(S.BlockSlot.NAME),
        ops=[_operator(t) for t in block.tables(S.BlockSlot.OPERATORS, "TosaOperator")],
        tensors=[_tensor(t) for t in block.tables(S.BlockSlot.TENSORS, "TosaTensor")],
        shapes=[_shape(t) for t in block.tables(S.BlockSlot.SHAPES, "TosaShape")],
        inputs=block.strings(S.BlockSlot.INPUTS),
        outputs=block.strings(S.BlockSlot.OUTPUTS))
    _check_unique(record.inputs, f"block '{record.name}' input")
    _check_unique([t.name for t in record.tensors], f"block '{record.name}' tensor")
    _check_unique([s.name for s in record.shapes], f"block '{record.name}' shape")
    return record


def _check_unique(names: list, what: str) -> None:
    seen = set()
    for name in names:
        if name in seen:
            raise ReadError(f"{what} name '{name}' appears twice; names must be unique")
        seen.add(name)


def _tensor(t: Table) -> TensorRecord:
    code = t.u32(S.TensorSlot.TYPE)
    data = t.raw_bytes(S.TensorSlot.DATA)
    name = t.string(S.TensorSlot.NAME)
    if t.u64(S.TensorSlot.OFFSET) > 1:
        raise ReadError(f"tensor '{name}' is stored outside the flatbuffer; not supported")
    array = None if data is None else np.frombuffer(data, dtype=np.uint8)
    variable = (t.string(S.TensorSlot.VARIABLE_NAME, None) or name) if t.boolean(S.TensorSlot.VARIABLE) else None
    record = TensorRecord(name, t.int32s(S.TensorSlot.SHAPE), S.DTYPE_FROM_CODE.get(code), array, code, variable)
    _check_size(record)
    return record


def _check_size(rec: TensorRecord) -> None:
    """A tensor's declared size fits --max-tensor-bytes (a ShapeError, exit 4), before anything reads it.
    (Data shorter than the shape says is refused where the data is decoded, by ``from_le_bytes``.)"""
    if rec.dtype is None or any(d < 0 for d in rec.shape):
        return   # the reader refuses these with their own message
    check_tensor(f"tensor '{rec.name}'", rec.shape, np.dtype(rec.dtype.numpy))


def _shape(t: Table) -> ShapeRecord:
    data = t.raw_bytes(S.ShapeSlot.DATA)
    array = None if data is None else np.frombuffer(data, dtype=np.uint8)
    return ShapeRecord(t.string(S.ShapeSlot.NAME), t.u32(S.ShapeSlot.RANK), array)


def _operator(t: Table) -> OpRecord:
    code = t.u32(S.OperatorSlot.OP)
    if not 0 < code < len(S.OP_NAMES):
        raise ReadError(f"operator code {code} is not a TOSA op this reader knows")
    name = S.OP_NAMES[code]
    attr_type = t.u8(S.OperatorSlot.ATTRIBUTE_TYPE)
    if not 0 <= attr_type < len(S.OP_NAMES):
        raise ReadError(f"{name} carries attribute type {attr_type}, which is not a TOSA attribute table")
    if name == "IDENTITY" and attr_type and S.OP_NAMES[attr_type] in ("VARIABLE_READ", "VARIABLE_WRITE"):
        name, code = S.OP_NAMES[attr_type], attr_type   # a variable access (see emit/variables.py)
    if attr_type not in (0, code):
        raise ReadError(f"{name} carries attribute type {attr_type}; expected {code} (its own table)")
    attr = t.table(S.OperatorSlot.ATTRIBUTE, f"{name} attribute") if attr_type else None
    loc = t.table(S.OperatorSlot.LOCATION, "OpLocation")
    return OpRecord(name, _fields(name, attr), t.strings(S.OperatorSlot.INPUTS),
                    t.strings(S.OperatorSlot.OUTPUTS),
                    None if loc is None else loc.string(S.LocationSlot.TEXT))


def _fields(op_name: str, attr: Table) -> dict:
    """The attribute table's fields that are present, by name (absent ones take codec defaults)."""
    if attr is None:
        return {}
    readers = {S.INT32: attr.i32, S.BOOL: attr.boolean, S.ENUM: attr.u32,
               S.INT32_VEC: attr.int32s, S.BYTES: attr.raw_bytes, S.STRING: lambda slot: attr.string(slot, None)}
    fields = {}
    for slot, (name, kind) in enumerate(S.attr_layout(op_name)):
        value = readers[kind](slot)
        if value is not None:
            fields[name] = value
    return fields
