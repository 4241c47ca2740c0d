"""A bounds-checked view of flatbuffer tables, for reading untrusted files.

The ``flatbuffers`` runtime trusts its input: a truncated or corrupt file
makes it raise ``IndexError``/``struct.error`` or read garbage. :class:`Table`
reads the same layout (a table starts with an int32 offset back to its
vtable; the vtable lists uint16 field offsets by slot; strings, vectors and
sub-tables are reached through uint32 forward offsets) but checks every
position against the buffer first and raises :class:`ReadError` instead.
Slots are those of ``schema.py``; an absent field yields its default.
"""
from __future__ import annotations

import struct
from typing import Any

import numpy as np

from .errors import ReadError

_U8, _U16, _I32, _U32, _U64 = (struct.Struct(f) for f in ("<B", "<H", "<i", "<I", "<Q"))


class Buffer:
    """The whole file, with checked fixed-size reads."""

    def __init__(self, data: bytes | memoryview) -> None:
        self.data = memoryview(data).cast("B")
        self.size = len(self.data)

    def check(self, pos: int, length: int, what: str) -> None:
        if pos < 0 or length < 0 or pos + length > self.size:
            raise ReadError(f"truncated or corrupt TOSA flatbuffer: {what} at byte {pos} "
                            f"(+{length}) lies outside the {self.size}-byte file")

    def unpack(self, fmt: struct.Struct, pos: int, what: str) -> Any:
        self.check(pos, fmt.size, what)
        return fmt.unpack_from(self.data, pos)[0]

    def follow(self, pos: int, what: str) -> int:
        """The position a uint32 forward offset stored at ``pos`` points to."""
        return pos + self.unpack(_U32, pos, what)

    def root(self) -> "Table":
        self.check(0, 8, "file header")
        return Table(self, self.follow(0, "root offset"), "TosaGraph")


class Table:
    """One table of a :class:`Buffer`; accessors take a slot number."""

    def __init__(self, buf: Buffer, pos: int, name: str) -> None:
        self.buf, self.pos, self.name = buf, pos, name
        self.vtable = pos - buf.unpack(_I32, pos, f"{name} table")
        self.vt_size = buf.unpack(_U16, self.vtable, f"{name} vtable")
        buf.check(self.vtable, self.vt_size, f"{name} vtable")

    def _field(self, slot: int) -> int | None:
        entry = 4 + 2 * slot
        if entry + 2 > self.vt_size:
            return None
        off = self.buf.unpack(_U16, self.vtable + entry, f"{self.name} vtable")
        return self.pos + off if off else None

    def _scalar(self, slot: int, fmt: struct.Struct, default: Any) -> Any:
        pos = self._field(slot)
        return default if pos is None else self.buf.unpack(fmt, pos, f"{self.name} field {slot}")

    def u8(self, slot: int, default: int = 0) -> int:
        return self._scalar(slot, _U8, default)

    def boolean(self, slot: int, default: bool = False) -> bool:
        return bool(self._scalar(slot, _U8, int(default)))

    def i32(self, slot: int, default: int = 0) -> int:
        return self._scalar(slot, _I32, default)

    def u32(self, slot: int, default: int = 0) -> int:
        return self._scalar(slot, _U32, default)

    def u64(self, slot: int, default: int = 0) -> int:
        return self._scalar(slot, _U64, default)

    def _vector(self, slot: int, elem_size: int) -> tuple[int, int] | None:
        """(start of elements, count) of a vector field, or None when absent."""
        pos = self._field(slot)
        if pos is None:
            return None
        what = f"{self.name} field {slot}"
        start = self.buf.follow(pos, what)
        count = self.buf.unpack(_U32, start, what)
        self.buf.check(start + 4, count * elem_size, what)
        return start + 4, count

    def table(self, slot: int, name: str) -> Table | None:
        pos = self._field(slot)
        return None if pos is None else Table(self.buf, self.buf.follow(pos, name), name)

    def string(self, slot: int, default: str = "") -> str:
        vec = self._vector(slot, 1)
        if vec is None:
            return default
        start, count = vec
        try:
            return bytes(self.buf.data[start:start + count]).decode("utf-8")
        except UnicodeDecodeError:
            raise ReadError(f"{self.name} field {slot} is not valid UTF-8 text") from None

    def raw_bytes(self, slot: int) -> memoryview | None:
        """A zero-copy memoryview of a [ubyte] field, or None when absent."""
        vec = self._vector(slot, 1)
        return None if vec is None else self.buf.data[vec[0]:vec[0] + vec[1]]

    def int32s(self, slot: int) -> tuple:
        vec = self._vector(slot, 4)
        if vec is None:
            return ()
        start, count = vec
        return tuple(int(x) for x in np.frombuffer(self.buf.data, "<i4", count, start))

    def tables(self, slot: int, name: str) -> list:
        vec = self._vector(slot, 4)
        if vec is None:
            return []
        start, count = vec
        return [Table(self.buf, self.buf.follow(start + 4 * i, name), name) for i in range(count)]

    def strings(self, slot: int) -> list:
        vec = self._vector(slot, 4)
        if vec is None:
            return []
        start, count = vec
        return [_String(self.buf, self.buf.follow(start + 4 * i, self.name)).text() for i in range(count)]


class _String:
    """A string reached through a vector of offsets (not through a table slot)."""

    def __init__(self, buf: Buffer, pos: int) -> None:
        self.buf, self.pos = buf, pos

    def text(self) -> str:
        count = self.buf.unpack(_U32, self.pos, "string")
        self.buf.check(self.pos + 4, count, "string")
        try:
            return bytes(self.buf.data[self.pos + 4:self.pos + 4 + count]).decode("utf-8")
        except UnicodeDecodeError:
            raise ReadError("a name in the file is not valid UTF-8 text") from None
