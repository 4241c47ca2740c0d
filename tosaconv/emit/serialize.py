"""Serialize a :class:`BlockRecord` as a TOSA flatbuffer with :class:`~.fbwrite.FlatWriter`.

The writer lays tables out exactly as ``flatbuffers.Builder`` would (the same
bytes; tests/emit/test_fbwrite.py compares them) at a fraction of its per-field
cost. Tables are written bottom-up (children before parents, as flatbuffers
requires) in a fixed order, so the same records always give the same bytes.
Slots come from ``schema.py``. Constant data is not copied more than needed:
the buffer is sized up front so it never regrows, and each array's bytes go
in with one copy, straight from the array, 8-byte aligned as the schema's
``force_align`` asks. Scalars equal to their schema default are left out, as
flatbuffers does. Every string (tensor names, which each op's input and
output lists repeat, and locations) is written once and shared, which saves
both bytes and time; so are tables and vectors whose content repeats (shape
vectors, attribute tables without vectors, locations): flatbuffers lets
several parents point at one child.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable
import numpy as np

from . import schema as S
from .errors import EmitError
from .fbwrite import FlatWriter, TableLayout
from .records import BlockRecord, OpRecord, ShapeRecord, TensorRecord

if TYPE_CHECKING:
    from .fbwrite import FlatPieces

_MAX_BYTES = 2**31 - 2**20  # flatbuffers' 2 GB limit, with room for the tables
STREAM_MIN = 1 << 16        # stream=True: constants of at least this size are streamed, not copied


def serialize(block: BlockRecord, version: "tuple | None" = None, stream: bool = False) -> bytes | FlatPieces:
    """The flatbuffer bytes of a TOSA 1.0 graph: region ``main`` with ``block``, then its other regions
    (the then/else and cond/body graphs of control flow), one block each. ``version`` is
    ``S.WRITE_VERSION_SHAPE`` (1.1 draft) for a program that uses the EXT-SHAPE operators.
    With ``stream`` the constants of at least :data:`STREAM_MIN` bytes are not copied: the result is a
    :class:`~.fbwrite.FlatPieces` (the same bytes, as parts to write out) when there is one."""
    below = STREAM_MIN if stream else None
    w = _Writer(_size_estimate(block, below), STREAM_MIN if stream else 0)
    named = [("main", block)] + sorted(block.regions.items())
    regions = w.offset_vector([_region(w, name, _block(w, blk)) for name, blk in named])
    version = _version(w, version or S.WRITE_VERSION)
    root = w.table(S.GraphSlot.COUNT, ((S.GraphSlot.VERSION, "U", version), (S.GraphSlot.REGIONS, "U", regions)))
    return w.finish(root, S.FILE_IDENTIFIER)


class _Writer(FlatWriter):
    """The flatbuffer writer plus the offsets of children already written, by content."""

    __slots__ = ("written", "locations")

    def __init__(self, size: int, stream_min: int = 0) -> None:
        super().__init__(size, stream_min)
        self.written: dict = {}
        self.locations: dict[str, int] = {}   # location text -> its table (keyed by the text alone: one per op)

    def once(self, key: tuple, make: Callable[[], int]) -> int:
        """The offset of the child ``key`` names, written by ``make()`` the first time."""
        off = self.written.get(key)
        if off is None:
            off = self.written[key] = make()
        return off


def _size_estimate(block: BlockRecord, below: "int | None" = None) -> int:
    """Enough room that the buffer never regrows (each regrowth copies all data written so far);
    ``below``: only the constants smaller than that are copied into it."""
    records = block.record_count()
    names = sum(len(t.name) for blk in [block, *block.regions.values()] for t in blk.tensors + blk.shapes)
    return min(block.data_bytes(below) + 160 * records + 4 * names + 65536, 2**31 - 1)


def too_big(block: BlockRecord) -> bool:
    return block.data_bytes() > _MAX_BYTES


def _region(w: _Writer, region_name: str, block: int) -> int:
    # The official tools name the first region and its block "main"; the reference model requires it.
    name, blocks = w.string(region_name), w.offset_vector([block])
    return w.table(S.RegionSlot.COUNT, ((S.RegionSlot.NAME, "U", name), (S.RegionSlot.BLOCKS, "U", blocks)))


def _version(w: _Writer, version: tuple) -> int:
    values = zip((S.VersionSlot.MAJOR, S.VersionSlot.MINOR, S.VersionSlot.PATCH, S.VersionSlot.DRAFT),
                 ("i", "i", "i", "B"), version, S.VersionSlot.DEFAULTS)
    return w.table(S.VersionSlot.COUNT, [(slot, fmt, int(v)) for slot, fmt, v, default in values if v != default])


def _block(w: _Writer, block: BlockRecord) -> int:
    tensors = w.offset_vector([_tensor(w, t) for t in block.tensors])
    shapes = w.offset_vector([_shape(w, s) for s in block.shapes])
    operators = w.offset_vector([_operator(w, op) for op in block.ops])
    inputs, outputs = _strings(w, block.inputs), _strings(w, block.outputs)
    name = w.string(block.name)
    return w.table(S.BlockSlot.COUNT, (
        (S.BlockSlot.NAME, "U", name), (S.BlockSlot.OPERATORS, "U", operators), (S.BlockSlot.TENSORS, "U", tensors),
        (S.BlockSlot.INPUTS, "U", inputs), (S.BlockSlot.OUTPUTS, "U", outputs), (S.BlockSlot.SHAPES, "U", shapes)))


def _tensor(w: _Writer, t: TensorRecord) -> int:
    shape = w.written.get(("shape", t.shape))   # a shape seen before was checked then (equal dims, equal key)
    if shape is None:
        dims = tuple(int(d) for d in t.shape)
        if any(not -(1 << 31) <= d < (1 << 31) for d in dims):
            raise EmitError(f"tensor '{t.name}' has shape {list(t.shape)}, beyond TOSA's int32 dims")
    data = None if t.data is None else _aligned_bytes(w, t.data)
    if shape is None:
        shape = w.written[("shape", dims)] = w.int32_vector(dims)
    code = t.type_code or S.dtype_code(t.dtype)
    if t.variable_name is None and code:     # the common tensors: one of two fixed layouts
        if data is None:
            return w.put(_TENSOR, (w.string(t.name), shape, code))
        return w.put(_CONSTANT, (w.string(t.name), shape, code, data))
    fields = [(S.TensorSlot.NAME, "U", w.string(t.name)), (S.TensorSlot.SHAPE, "U", shape)]
    if code:
        fields.append((S.TensorSlot.TYPE, "I", code))
    if data is not None:
        fields.append((S.TensorSlot.DATA, "U", data))
    if t.variable_name is not None:
        fields += [(S.TensorSlot.VARIABLE, "B", 1), (S.TensorSlot.VARIABLE_NAME, "U", w.string(t.variable_name))]
    return w.table(S.TensorSlot.COUNT, fields)


def _shape(w: _Writer, s: ShapeRecord) -> int:
    data = None if s.data is None else _aligned_bytes(w, s.data)
    fields = [(S.ShapeSlot.NAME, "U", w.string(s.name))]
    if s.rank:
        fields.append((S.ShapeSlot.RANK, "I", s.rank))
    if data is not None:
        fields.append((S.ShapeSlot.DATA, "U", data))
    return w.table(S.ShapeSlot.COUNT, fields)


def _operator(w: _Writer, op: OpRecord) -> int:
    if op.fields:
        _check_int32_fields(op)
    table = op.attribute or op.op
    attribute = _attribute(w, table, op.fields) if op.fields else w.written.get(("attribute", table, ()))
    if attribute is None:   # (an attribute table without fields, the first time: see _attribute)
        attribute = _attribute(w, table, op.fields)
    known = w.strings
    try:     # (every name is a tensor's, written before the ops: both vectors at once)
        inputs, outputs = w.offset_vector_pair([known[s] for s in op.inputs], [known[s] for s in op.outputs])
    except KeyError:   # (a name not written yet: its string goes between the vectors, as ever)
        inputs, outputs = _strings(w, op.inputs), _strings(w, op.outputs)
    # union member N belongs to op N (a variable access is an IDENTITY with a variable's table)
    values = [S.OP_CODE[op.op], S.OP_CODE[op.attribute or op.op], attribute, inputs, outputs]
    if op.location is None:
        return w.put(_OPERATOR, values)
    location = w.locations.get(op.location)
    if location is None:
        location = w.locations[op.location] = _location(w, op.location)
    return w.put(_LOCATED_OPERATOR, [*values, location])


def _location(w: _Writer, text: str) -> int:
    return w.put(_LOCATION, (w.string(text),))


# The field layouts of the tables a program has one of per op (the others are written field by field).
_TENSOR = TableLayout(S.TensorSlot.COUNT, ((S.TensorSlot.NAME, "U"), (S.TensorSlot.SHAPE, "U"), (S.TensorSlot.TYPE, "I")))
_CONSTANT = TableLayout(S.TensorSlot.COUNT, (*_TENSOR.fields, (S.TensorSlot.DATA, "U")))
_OPERATOR = TableLayout(S.OperatorSlot.COUNT, (
    (S.OperatorSlot.OP, "I"), (S.OperatorSlot.ATTRIBUTE_TYPE, "B"), (S.OperatorSlot.ATTRIBUTE, "U"),
    (S.OperatorSlot.INPUTS, "U"), (S.OperatorSlot.OUTPUTS, "U")))
_LOCATED_OPERATOR = TableLayout(S.OperatorSlot.COUNT, (*_OPERATOR.fields, (S.OperatorSlot.LOCATION, "U")))
_LOCATION = TableLayout(S.LocationSlot.COUNT, ((S.LocationSlot.TEXT, "U"),))


def _check_int32_fields(op: OpRecord) -> None:
    """Every int32 attribute value fits int32 (a model's 2^40 stride or pad is refused, not wrapped)."""
    fields = op.fields
    for name, scalar in _int32_fields(op.attribute or op.op):
        if name not in fields:
            continue
        values = (fields[name],) if scalar else fields[name]
        if len(values) and (min(values) < -(1 << 31) or max(values) >= (1 << 31)):
            bad = next(int(v) for v in values if not -(1 << 31) <= int(v) < (1 << 31))
            where = f" at {op.location}" if op.location else ""
            raise EmitError(f"{op.op}{where}: attribute '{name}' holds {bad}, which does not fit TOSA's int32")


_INT32_FIELDS: dict[str, tuple] = {}   # op name -> (field name, whether a scalar) of its int32 fields


def _int32_fields(op_name: str) -> tuple:
    found = _INT32_FIELDS.get(op_name)
    if found is None:
        found = _INT32_FIELDS[op_name] = tuple(
            (name, kind == S.INT32) for name, kind in S.attr_layout(op_name) if kind in (S.INT32, S.INT32_VEC))
    return found


def _attribute(w: _Writer, op_name: str, fields: dict) -> int:
    layout = S.attr_layout(op_name)
    if not fields or _vector_fields(op_name).isdisjoint(fields):
        scalars = tuple((name, fields[name]) for name, _ in layout if name in fields)
        key = ("attribute", op_name, scalars)
        off = w.written.get(key)
        if off is None:
            off = w.written[key] = _attribute_table(w, layout, fields, {})
        return off
    written, values = [], []   # (each vector written in slot order, then the table: as _attribute_table writes them)
    for slot, (name, kind) in enumerate(layout):
        if name not in fields:
            continue
        if kind in _SCALAR_FORMATS:
            value = bool(fields[name]) if kind == S.BOOL else int(fields[name])
            if value:
                written.append((slot, _SCALAR_FORMATS[kind]))
                values.append(int(value))
        elif kind in _VECTOR_KINDS:
            written.append((slot, "U"))
            values.append(_field_vector(w, kind, fields[name]))
    return w.put(_table_layout(len(layout), tuple(written)), values)


_VECTOR_KINDS = frozenset((S.INT32_VEC, S.BYTES, S.STRING))
_TABLE_LAYOUTS: dict[tuple, TableLayout] = {}   # (slots, written fields) -> its layout: a few per op kind


def _table_layout(slots: int, written: tuple) -> TableLayout:
    """The :class:`TableLayout` of an attribute table with ``written`` fields (``put`` then writes what
    ``table`` would, from a plan made once)."""
    layout = _TABLE_LAYOUTS.get((slots, written))
    if layout is None:
        layout = _TABLE_LAYOUTS[(slots, written)] = TableLayout(slots, written)
    return layout


_VECTOR_FIELDS: dict[str, frozenset] = {}   # op name -> its attribute fields that are vectors (not shared)


def _vector_fields(op_name: str) -> frozenset:
    names = _VECTOR_FIELDS.get(op_name)
    if names is None:
        names = _VECTOR_FIELDS[op_name] = frozenset(
            name for name, kind in S.attr_layout(op_name) if kind in (S.INT32_VEC, S.BYTES, S.STRING))
    return names


_SCALAR_FORMATS = {S.BOOL: "B", S.INT32: "i", S.ENUM: "I"}


def _attribute_table(w: _Writer, layout: tuple, fields: dict, vectors: dict) -> int:
    """Vectors by offset; scalars unless equal to their default (0 / false), as flatbuffers leaves them out."""
    entries = []
    for slot, (name, kind) in enumerate(layout):
        if name in vectors:
            entries.append((slot, "U", vectors[name]))
        elif name in fields and kind in _SCALAR_FORMATS:
            value = bool(fields[name]) if kind == S.BOOL else int(fields[name])
            if value:
                entries.append((slot, _SCALAR_FORMATS[kind], int(value)))
    return w.table(len(layout), entries)


def _field_vector(w: _Writer, kind: str, value: object) -> int:
    if kind == S.INT32_VEC:
        return w.int32_vector([int(v) for v in value])
    if kind == S.STRING:
        return w.string(value)
    return w.byte_vector(bytes(value), 8)


def _aligned_bytes(w: _Writer, data: np.ndarray) -> int:
    # 8-byte aligned as the schema's force_align: 8 asks; the elements are copied once, into the output
    # (a transposed view is transposed on the way, never materialized apart).
    if data.size == 0:
        return w.byte_vector(b"", 8)
    if data.flags.c_contiguous:
        return w.byte_vector(memoryview(data).cast("B"), 8)
    return w.array_vector(data, 8)


def _strings(w: _Writer, strings: Iterable[str]) -> int:
    known = w.strings
    return w.offset_vector([known[s] if s in known else w.string(s) for s in strings])
