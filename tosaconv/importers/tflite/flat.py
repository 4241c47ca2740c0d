"""Direct reads of flatbuffer tables, for the fields the TFLite reader walks per tensor and per operator.

The schema's generated code (``tflite``) reads one field through about six Python calls (vtable look-up,
range checks, a ``memoryview`` per read); a model of a few hundred operators spent most of its reading
time there (issue 13). :class:`Table` reads a table's vtable once, with one ``struct`` call, and then
each field with one more. Offsets follow the flatbuffers format: a table starts with a signed offset back
to its vtable (``uint16`` size of the vtable, ``uint16`` size of the table, one ``uint16`` field offset
per slot, 0 for an absent field); references to strings, vectors and sub-tables are ``uint32`` offsets
forward from where they are stored; a vector or string starts with its ``uint32`` length.

A damaged file fails here as it does in the generated code: ``struct.error`` for a read past the end,
``ValueError`` for an offset that points before the start (both caught by ``read_model``).
"""
from __future__ import annotations

import struct
from operator import itemgetter
from typing import Callable, Iterator, Optional

import numpy as np
from flatbuffers import table as generated_table

_ABSENT = (0,) * 16    # the offsets of undeclared slots, after a vtable's own (see Table.offsets)
_PICKS: dict = {}      # the slots a reader wants -> their itemgetter
_U16 = struct.Struct("<H").unpack_from
_I32 = struct.Struct("<i").unpack_from
_U32 = struct.Struct("<I").unpack_from


class Table:
    """One table of the buffer ``buf`` at ``pos``, its field offsets read from its vtable once.

    ``vtables`` (shared by every table reached from one root) remembers each vtable read: a writer stores
    one vtable for all tables with the same fields, so a model's tensors and operators share a handful."""

    __slots__ = ("buf", "pos", "slots", "declared", "padded", "vtables")

    def __init__(self, buf: bytes, pos: int, vtables: Optional[dict] = None) -> None:
        vtable = pos - _I32(buf, pos)[0]
        vtables = {} if vtables is None else vtables
        known = vtables.get(vtable)
        if known is None:
            known = vtables[vtable] = _vtable(buf, pos, vtable)
        self.declared, self.slots, self.padded = known
        self.buf, self.pos, self.vtables = buf, pos, vtables

    def offset(self, slot: int) -> int:
        """The field's offset from the table's start, 0 when the field is absent."""
        slots = self.slots
        if slot < len(slots):
            return slots[slot]
        if slot < self.declared:
            raise struct.error(f"the vtable entry of field {slot} lies past the end of the file")
        return 0

    def offsets(self, wanted: tuple) -> tuple:
        """:meth:`offset` of each slot in ``wanted``, in one call (a reader that wants most of a table's
        fields then reads them with :func:`string_at`, :func:`ints_at` and a ``struct`` at ``pos`` + offset)."""
        padded = self.padded
        if padded is not None and len(padded) > max(wanted):
            pick = _PICKS.get(wanted) or _PICKS.setdefault(wanted, itemgetter(*wanted))
            return pick(padded)
        return tuple(self.offset(s) for s in wanted)

    def scalar(self, slot: int, unpack: struct.Struct, default: object) -> object:
        """A scalar field read with ``unpack``, or ``default`` when absent."""
        o = self.offset(slot)
        return unpack.unpack_from(self.buf, self.pos + o)[0] if o else default

    def ref(self, slot: int) -> int:
        """Where the string, vector or table that the field refers to starts (0 when absent)."""
        o = self.offset(slot)
        if not o:
            return 0
        at = self.pos + o
        return at + _U32(self.buf, at)[0]

    def table(self, slot: int) -> Optional["Table"]:
        """The sub-table (or union member) in the field, None when absent."""
        at = self.ref(slot)
        return Table(self.buf, at, self.vtables) if at else None

    def string(self, slot: int) -> Optional[bytes]:
        """The string's bytes (cut at the end of the file, as the generated code does), None when absent."""
        return string_at(self.buf, self.pos, self.offset(slot))

    def ints(self, slot: int) -> Optional[tuple]:
        """An ``int32`` vector as a tuple of ints, None when absent."""
        return ints_at(self.buf, self.pos, self.offset(slot))

    def array(self, slot: int, dtype: type) -> Optional[np.ndarray]:
        """A vector of ``dtype`` (little-endian) as a zero-copy array view of the buffer, None when absent."""
        at = self.ref(slot)
        if not at:
            return None
        return np.frombuffer(self.buf, dtype, count=_U32(self.buf, at)[0], offset=at + 4)

    def tables(self, slot: int) -> Iterator["Table"]:
        """The tables of a vector of tables, in order (none when absent). Each is opened when the walk
        reaches it, so a damaged entry fails after the entries before it were read, as in the generated code."""
        at = self.ref(slot)
        if not at:
            return
        buf = self.buf
        for j in range(_U32(buf, at)[0]):
            entry = at + 4 + 4 * j
            yield Table(buf, entry + _U32(buf, entry)[0], self.vtables)

    def tables_fields(self, slot: int, wanted: tuple) -> Iterator[tuple]:
        """``(position, offsets of the fields wanted)`` of each table of a vector of tables, in order, as
        :meth:`tables` then :meth:`offsets` give them, without a Table object each (a model's hundreds of
        tensors and operators)."""
        at = self.ref(slot)
        if not at:
            return
        buf, vtables = self.buf, self.vtables
        pick = _PICKS.get(wanted) or _PICKS.setdefault(wanted, itemgetter(*wanted))
        need = max(wanted)
        for j in range(_U32(buf, at)[0]):
            entry = at + 4 + 4 * j
            pos = entry + _U32(buf, entry)[0]
            vtable = pos - _I32(buf, pos)[0]
            known = vtables.get(vtable)
            if known is None:
                known = vtables[vtable] = _vtable(buf, pos, vtable)
            padded = known[2]
            if padded is not None and len(padded) > need:
                yield pos, pick(padded)
            else:    # a vtable cut by the end of the file: each field as :meth:`offset` reads (and fails) it
                yield pos, Table(buf, pos, vtables).offsets(wanted)

    def element(self, slot: int, j: int) -> "Table":
        """Table ``j`` of the vector of tables in the field (which holds more than ``j``), as :meth:`tables`
        opens it."""
        at = self.ref(slot) + 4 + 4 * j
        return Table(self.buf, at + _U32(self.buf, at)[0], self.vtables)

    def length(self, slot: int) -> int:
        """The number of elements of a vector field (0 when absent)."""
        at = self.ref(slot)
        return _U32(self.buf, at)[0] if at else 0


def string_at(buf: bytes, pos: int, offset: int) -> Optional[bytes]:
    """The string field at ``offset`` (from :meth:`Table.offsets`) of the table at ``pos``; None when 0 (absent)."""
    if not offset:
        return None
    at = pos + offset
    at += _U32(buf, at)[0]
    return bytes(buf[at + 4:at + 4 + _U32(buf, at)[0]])


def ints_at(buf: bytes, pos: int, offset: int) -> Optional[tuple]:
    """The ``int32`` vector field at ``offset`` of the table at ``pos``, as a tuple; None when 0 (absent)."""
    if not offset:
        return None
    at = pos + offset
    at += _U32(buf, at)[0]
    return struct.unpack_from(f"<{_U32(buf, at)[0]}i", buf, at + 4)


def table_at(buf: bytes, pos: int, offset: int, vtables: dict) -> Optional[Table]:
    """The sub-table field at ``offset`` of the table at ``pos``; None when 0 (absent)."""
    if not offset:
        return None
    at = pos + offset
    return Table(buf, at + _U32(buf, at)[0], vtables)


class AccessorTable(generated_table.Table):
    """A table for the schema's generated classes (an operator's options, read field by field by the
    converters): their accessors call ``Offset`` and ``Get``, which here read the vtable once (when the
    first field is asked for, so a damaged vtable fails there) and each value with one ``struct`` call.
    Attach it with :func:`generated`."""

    __slots__ = ("_fields",)

    def __init__(self, buf: bytes, pos: int) -> None:
        super().__init__(buf, pos)
        self._fields: Optional[Table] = None

    def Offset(self, vtableOffset: int) -> int:   # noqa: N802, N803  (the generated code's names)
        fields = self._fields
        if fields is None:
            fields = self._fields = Table(self.Bytes, self.Pos)
        return fields.offset((vtableOffset - 4) >> 1)

    def scalar_field(self, slot: int, unpack: Callable, py_type: type, default: object) -> object:
        """The scalar in field ``slot`` (``default`` when absent), as a generated accessor reads it through
        ``Offset`` and ``Get`` (see :func:`.node._direct`)."""
        fields = self._fields
        if fields is None:
            fields = self._fields = Table(self.Bytes, self.Pos)
        o = fields.offset(slot)
        return py_type(unpack(self.Bytes, self.Pos + o)[0]) if o else default

    def Get(self, flags: object, off: int) -> object:   # noqa: N802
        if off < 0:
            raise TypeError(f"offset {off} is negative")
        return flags.py_type(flags.packer_type.unpack_from(self.Bytes, off)[0])   # type: ignore[attr-defined]


def generated(cls: type, table: AccessorTable) -> object:
    """An object of generated class ``cls`` (e.g. ``tflite.Conv2DOptions``) reading ``table``."""
    obj = cls()
    obj._tab = table      # what the generated ``Init`` sets, with the faster table
    return obj


def _vtable(buf: bytes, pos: int, vtable: int) -> tuple:
    """(declared slots, the offsets of those inside the file, the offsets followed by :data:`_ABSENT` or None
    when some declared entry lies past the end of the file) of the vtable at ``vtable``. Slot s is declared
    when its entry (at 4 + 2s) starts inside the vtable's declared size; one past the end of the file fails
    only when it is asked for (:meth:`Table.offset`)."""
    if vtable < 0:
        raise ValueError(f"a table at {pos} points to its vtable before the start of the file")
    declared = max(_U16(buf, vtable)[0] - 3, 0) // 2
    count = min(declared, max(len(buf) - vtable - 4, 0) // 2)
    slots = struct.unpack_from(f"<{count}H", buf, vtable + 4)
    return declared, slots, slots + _ABSENT if count == declared else None


def root(buf: bytes) -> Table:
    """The root table of a flatbuffer."""
    return Table(buf, _U32(buf, 0)[0])


UINT8 = struct.Struct("<B")
INT8 = struct.Struct("<b")
INT32 = struct.Struct("<i")
UINT32 = struct.Struct("<I")
UINT64 = struct.Struct("<Q")
