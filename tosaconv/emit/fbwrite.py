"""A lean flatbuffer writer: the ``flatbuffers.Builder`` layout at a fraction of its cost.

The generic builder spends about twenty Python calls per table field
(alignment, bounds checks, number checks, slot bookkeeping); a 100k-node
program has half a million fields. :class:`FlatWriter` writes the same bytes
the builder would, in the same back-to-front order, with the same rules:

- a value of ``size`` bytes is preceded (at its end) by zero padding so that
  its offset from the buffer's end is a multiple of ``size`` (``Prep``);
  the buffer starts zeroed and each byte is written at most once, so padding
  is just a move of the write position;
- a table is its fields in the order given, then an int32 offset to its
  vtable; a vtable (uint16: its own size, the table's size, then each slot's
  field offset, trailing empty slots trimmed) is shared with an earlier table
  whose field offsets are the same, as the Python builder shares them;
- strings are NUL-terminated byte vectors and vectors are prefixed by their
  uint32 length, 4-byte aligned (data vectors as aligned as asked);
- ``finish`` aligns to the largest alignment used and writes the root offset
  after the 4-byte file identifier.

Offsets handed out are distances from the buffer's end, as the builder's.
A field is ``(slot, format, value)`` with a ``struct`` format of one
character (``"B"``, ``"i"``, ``"I"``) or ``"U"`` for an offset to a child.

Streaming (``stream_min`` > 0): a data vector of at least that many bytes is
not copied into the buffer. The bytes written so far are sealed as one piece,
the array itself becomes the next piece, and writing goes on in a fresh,
small buffer whose offsets continue where the array ends (``base``: the
offset at the start of the current buffer). ``finish`` then gives
:class:`FlatPieces`, the file's bytes as a list of parts that is written
straight to a file: the weights go from the model's buffers to the output
without a copy of the whole program in memory. The bytes are the same.
"""
from __future__ import annotations

import struct
from operator import sub as _sub
from typing import Iterator, Sequence

import numpy as np

_SIZES = {"B": 1, "b": 1, "H": 2, "i": 4, "I": 4, "U": 4}
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_PACK = {f: struct.Struct("<" + ("I" if f == "U" else f)).pack_into for f in _SIZES}
_VECTORS: dict = {}   # (length, element format) -> its struct.Struct: vectors of a few lengths recur per op


_LENGTH_AND_OFFSETS = [struct.Struct(f"<{n + 1}I") for n in range(65)]   # an offset vector's length and items


def _vector_format(n: int, fmt: str) -> struct.Struct:
    packer = _VECTORS.get((n, fmt))
    if packer is None:
        packer = struct.Struct(f"<{n}{fmt}")
        if n <= 64:          # the short ones recur; a long one is made once per program anyway
            _VECTORS[(n, fmt)] = packer
    return packer


class FlatWriter:
    """Writes flatbuffer tables, vectors and strings back to front into one pre-sized buffer."""

    __slots__ = ("buf", "cap", "off", "minalign", "vtables", "strings", "base", "stream_min", "pieces")

    def __init__(self, size: int, stream_min: int = 0) -> None:
        self.buf = bytearray(max(size, 64))
        self.cap = len(self.buf)  # the offset of the current buffer's first byte (its length plus ``base``)
        self.off = 0            # bytes written, counted from the buffer's end
        self.minalign = 1
        self.vtables: dict = {}
        self.strings: dict = {}
        self.base = 0           # the offset of the current buffer's end (streaming: where the last array began)
        self.stream_min = stream_min   # data vectors at least this long are streamed (0: never)
        self.pieces: list = []  # streaming: the sealed buffers and the arrays, last part of the file first

    def prep(self, size: int, additional: int) -> None:
        """Pad so that a ``size``-aligned value can follow ``additional`` bytes (flatbuffers' ``Prep``)."""
        if size > self.minalign:
            self.minalign = size
        pad = -(self.off + additional) & (size - 1)
        self.off += pad
        if self.off + size + additional > self.cap:
            self._grow(size + additional)

    def _grow(self, need: int) -> None:
        size = new = self.cap - self.base
        while self.off - self.base + need > new:
            new *= 2
        self.buf[:0] = bytes(new - size)   # the data keeps its distance from the end
        self.cap += new - size

    def string(self, text: str) -> int:
        """A NUL-terminated UTF-8 string, written once however often it is asked for."""
        off = self.strings.get(text)
        if off is None:
            off = self.strings[text] = self._string(text.encode("utf-8"))
        return off

    def _string(self, data: bytes) -> int:
        """``_vector_bytes(data, 1, 4, trailing=1)`` for a short ``bytes`` (a name): copied by a slice
        assignment, which for bytes costs less than a memoryview."""
        n = len(data)
        self.prep(4, n + 1)
        end = self.cap - self.off - 1
        self.buf[end - n:end] = data
        self.off += n + 5
        _U32.pack_into(self.buf, self.cap - self.off, n)
        return self.off

    def byte_vector(self, data: bytes | memoryview | np.ndarray, align: int) -> int:
        """The bytes of ``data`` (a bytes-like object) as a ``[ubyte]``, its first byte ``align``-aligned."""
        if self.stream_min and len(data) >= self.stream_min:
            return self._streamed(data, len(data), align)
        self.prep(align, len(data))
        return self._vector_bytes(data, 1, 4)

    def array_vector(self, arr: np.ndarray, align: int) -> int:
        """The bytes of ``arr``'s elements in C order as a ``[ubyte]``, copied from any strides."""
        n = arr.nbytes
        if self.stream_min and n >= self.stream_min:
            return self._streamed(arr, n, align)
        self.prep(align, n)
        self.prep(4, n)
        self.off += n
        target = np.frombuffer(self.buf, arr.dtype, count=arr.size, offset=self.cap - self.off)
        np.copyto(target.reshape(arr.shape), arr)
        del target
        self.off += 4
        _U32.pack_into(self.buf, self.cap - self.off, n)
        return self.off

    def _streamed(self, data: bytes | memoryview | np.ndarray, n: int, align: int) -> int:
        """A ``[ubyte]`` of ``data``'s ``n`` bytes (C order) kept as a piece of its own: the padding
        ``byte_vector`` would write, then the current buffer is sealed, then ``data``, then its length
        in a new buffer."""
        for size in (align, 4):   # prep(align, n); prep(4, n), without making room for the data
            self.minalign = max(self.minalign, size)
            self.off += -(self.off + n) & (size - 1)
        if self.off > self.cap:
            self._grow(0)
        self.pieces.append(bytes(memoryview(self.buf)[self.cap - self.off:]))
        self.pieces.append(data)
        self.off += n
        self.base = self.off
        self.buf = bytearray(1 << 16)
        self.cap = self.base + len(self.buf)
        self.off += 4
        _U32.pack_into(self.buf, self.cap - self.off, n)
        return self.off

    def _vector_bytes(self, data: bytes | memoryview | np.ndarray, elem: int, align: int, trailing: int = 0) -> int:
        n = len(data)
        self.prep(align, n + trailing)
        off = self.off + trailing + n
        end = self.cap - self.off - trailing
        with memoryview(self.buf) as target:   # (a bytearray slice assignment would copy ``data`` first)
            target[end - n:end] = data
        self.off = off + 4
        _U32.pack_into(self.buf, self.cap - self.off, n // elem)
        return self.off

    def int32_vector(self, values: Sequence[int]) -> int:
        """A ``[int]`` of Python ints."""
        n = len(values)
        self.prep(4, 4 * n)
        self.off += 4 * n
        _vector_format(n, "i").pack_into(self.buf, self.cap - self.off, *values)
        self.off += 4
        _U32.pack_into(self.buf, self.cap - self.off, n)
        return self.off

    def offset_vector(self, offsets: list) -> int:
        """A vector of offsets to children already written."""
        n = len(offsets)
        if self.minalign < 4:       # ``prep(4, 4 * n)``, inline: a program has two of these per op
            self.minalign = 4
        start = self.off = (self.off + 3) & -4
        if start + 4 * n + 4 > self.cap:
            self._grow(4 * n + 4)
        end = self.off = start + 4 * n + 4
        # the length, then each offset relative to its own slot, packed at once
        packer = _LENGTH_AND_OFFSETS[n] if n < len(_LENGTH_AND_OFFSETS) else struct.Struct(f"<{n + 1}I")
        packer.pack_into(self.buf, self.cap - end, n, *[start + 4 * (n - i) - o for i, o in enumerate(offsets)])
        return end

    def offset_vector_pair(self, first: list, second: list) -> tuple[int, int]:
        """``offset_vector(first)``, then ``offset_vector(second)`` (an op's inputs and outputs): the same
        bytes, packed with one ``struct`` call (the second follows the first with no padding: both end
        4-aligned). The two offsets."""
        n, m = len(first), len(second)
        if self.minalign < 4:
            self.minalign = 4
        start = (self.off + 3) & -4
        if start + 4 * (n + m + 2) > self.cap:
            self.off = start
            self._grow(4 * (n + m + 2))
        mid = start + 4 * n + 4
        end = self.off = mid + 4 * m + 4
        # each offset relative to its own slot: item i of a vector of n from ``start`` sits at start + 4 * (n - i)
        _vector_format(n + m + 2, "I").pack_into(
            self.buf, self.cap - end, m, *map(_sub, range(mid + 4 * m, mid, -4), second),
            n, *map(_sub, range(start + 4 * n, start, -4), first))
        return mid, end

    def table(self, slots: int, fields: Sequence[tuple]) -> int:
        """A table of ``slots`` slots holding ``fields`` (written in the order given); its offset.

        ``prep`` is inlined here (fields are at most 4 bytes, so one room check covers the table
        and its vtable), since a program writes a few tables per op."""
        if self.off + 8 * len(fields) + 2 * slots + 16 > self.cap:
            self._grow(8 * len(fields) + 2 * slots + 16)
        buf, cap = self.buf, self.cap
        off = object_end = self.off
        where = [0] * slots
        for slot, fmt, value in fields:
            if fmt == "U":
                off = ((off + 3) & -4) + 4
                _U32.pack_into(buf, cap - off, off - value)
            elif fmt == "B":
                off += 1
                buf[cap - off] = value
            else:
                off = ((off + 3) & -4) + 4
                _PACK[fmt](buf, cap - off, value)
            where[slot] = off
        obj = off = ((off + 3) & -4) + 4
        if self.minalign < 4:
            self.minalign = 4
        while where and not where[-1]:
            where.pop()
        key = tuple([obj - w if w else 0 for w in where])
        vtable = self.vtables.get(key)
        if vtable is None:
            entries = ((len(key) + 2) * 2, obj - object_end, *key)
            off += 2 * len(entries)
            struct.pack_into(f"<{len(entries)}H", buf, cap - off, *entries)
            vtable = self.vtables[key] = off
        self.off = off
        _I32.pack_into(buf, cap - obj, vtable - obj)
        return obj

    def put(self, layout: TableLayout, values: Sequence[int]) -> int:
        """``table(layout.slots, fields)`` for the fields ``layout`` names holding ``values`` (offsets for
        ``"U"``): the same bytes, with the field offsets, padding and vtable worked out once per layout
        and alignment, and the table packed with one ``struct`` call."""
        start = self.off
        plan = layout.plans[start & 3] or layout.plan(start & 3)
        if start + plan.room > self.cap:
            self._grow(plan.room)
        obj = start + plan.size
        vtable = self.vtables.get(plan.key)
        if vtable is None:
            vtable = self.vtables[plan.key] = self.off = obj + plan.vtable.size
            plan.vtable.pack_into(self.buf, self.cap - vtable, *plan.entries)
        else:
            self.off = obj     # (a vtable written before lies nearer the end)
        if self.minalign < 4:
            self.minalign = 4
        plan.packer.pack_into(self.buf, self.cap - obj, vtable - obj,   # (the fields last-written first)
                              *[start + rel - v if rel else v for rel, v in zip(plan.rels_last_first, reversed(values))])
        return obj

    def finish(self, root: int, identifier: bytes) -> bytearray:
        """The finished buffer: root offset, file identifier, then everything written. The unused front
        of the buffer is dropped in place (CPython moves a bytearray's start), so the data, weights
        included, is not copied again."""
        self.prep(self.minalign, 8)
        self.prep(4, 4)
        self.off += 4
        self.buf[self.cap - self.off:self.cap - self.off + 4] = identifier
        self.prep(4, 0)
        self.off += 4
        _U32.pack_into(self.buf, self.cap - self.off, self.off - root)
        buf = self.buf
        del buf[:self.cap - self.off]
        pieces = self.pieces
        self.buf, self.cap, self.off, self.base, self.pieces = bytearray(), 0, 0, 0, []
        return FlatPieces([buf, *reversed(pieces)]) if pieces else buf


class _Plan:
    """Where :meth:`FlatWriter.put` puts a layout's fields when the table starts at one alignment."""

    __slots__ = ("rels_last_first", "size", "room", "key", "entries", "vtable", "packer")

    def __init__(self, layout: TableLayout, residue: int) -> None:
        off = residue
        offs, where = [], [0] * layout.slots
        for slot, fmt in layout.fields:     # the offsets ``table`` gives each field (distances from the end)
            off = off + 1 if fmt == "B" else ((off + 3) & -4) + 4
            offs.append(off)
            where[slot] = off
        obj = ((off + 3) & -4) + 4
        while where and not where[-1]:
            where.pop()
        self.key = tuple([obj - w if w else 0 for w in where])
        self.entries = ((len(self.key) + 2) * 2, obj - residue, *self.key)
        self.vtable = struct.Struct(f"<{len(self.entries)}H")
        self.size = obj - residue
        self.room = 8 * len(layout.fields) + 2 * layout.slots + 16      # as ``table`` makes room
        # where each "U" field sits from the table's start (0: not an offset), the last-written field first
        self.rels_last_first = tuple(o - residue if fmt == "U" else 0 for o, (_, fmt) in zip(offs, layout.fields))[::-1]
        self.packer = struct.Struct(_table_format(layout.fields, offs, obj))


def _table_format(fields: Sequence[tuple], offs: list, obj: int) -> str:
    """The struct format of a table's bytes from its start (the vtable offset) to its end: its fields
    last-written first, zero padding between."""
    parts, at = ["<i"], 4
    for (_, fmt), off in reversed(list(zip(fields, offs))):
        pos = obj - off
        parts.append("x" * (pos - at) + ("B" if fmt == "B" else "I" if fmt in "UI" else "i"))
        at = pos + (1 if fmt == "B" else 4)
    return "".join(parts)   # (the alignment padding after the first field is left as it is: zero)


class TableLayout:
    """The slots of a table kind and the fields one of its tables sets, in writing order: ``(slot, format)``
    pairs as :meth:`FlatWriter.table` takes them. Made once (a module constant), used by
    :meth:`FlatWriter.put` for every table of that kind."""

    __slots__ = ("slots", "fields", "plans")

    def __init__(self, slots: int, fields: Sequence[tuple[int, str]]) -> None:
        self.slots = slots
        self.fields = tuple(fields)
        self.plans: list[_Plan | None] = [None] * 4   # by the table's start offset modulo 4

    def plan(self, residue: int) -> _Plan:
        plan = self.plans[residue] = _Plan(self, residue)
        return plan


class FlatPieces:
    """A finished flatbuffer as parts in file order: bytes-like objects and numpy arrays (their elements
    in C order, whatever their strides). ``len`` is the file's size; iterating gives contiguous blocks
    of at most a few MB, so a strided array is copied a block at a time on its way to a file."""

    __slots__ = ("parts",)
    BLOCK = 1 << 22

    def __init__(self, parts: list):
        self.parts = parts

    def __len__(self) -> int:
        return sum(p.nbytes if isinstance(p, (np.ndarray, memoryview)) else len(p) for p in self.parts)

    def __iter__(self):
        for part in self.parts:
            if isinstance(part, np.ndarray):
                yield from _blocks(part, self.BLOCK)
            else:
                yield part

    def tobytes(self) -> bytes:
        """The whole file in one ``bytes`` (what the unstreamed writer returns)."""
        return b"".join(self)


def _blocks(arr: np.ndarray, block: int) -> Iterator[memoryview]:
    """The bytes of ``arr``'s elements in C order, as contiguous pieces of about ``block`` bytes or less
    (a strided array is copied a run of whole rows at a time; a row too big is split the same way)."""
    if arr.flags.c_contiguous:
        yield memoryview(arr).cast("B")
        return
    row = arr[0].nbytes if len(arr) else 0
    if row > block and arr.ndim > 1:
        for sub in arr:
            yield from _blocks(sub, block)
        return
    rows = max(1, block // max(1, row))
    for i in range(0, len(arr), rows):
        yield memoryview(_c_order_copy(arr[i:i + rows])).cast("B")


_TILE = 32        # columns copied at a time from an array whose last axis is strided (see _c_order_copy)
_TILED_MIN = 1 << 18
_FAR = 256        # bytes between neighbours of a row from which a row's elements are each a cache miss


def _c_order_copy(part: np.ndarray) -> np.ndarray:
    """``np.ascontiguousarray(part)``, copied a few columns at a time when its last axis is strided (a
    transposed weight, as MATMUL's or a TRANSPOSE's folded constant): a whole row at once reads one
    element of each of thousands of source rows, a cache miss each; 32 columns at a time read each
    source cache line while it is still cached (a 1024 x 8210 float32 transpose: 72 -> 28 ms). Rows
    whose neighbours are near (a convolution weight's OIHW -> OHWI: 36 bytes apart) are copied whole,
    which is faster for them. The same elements in the same order."""
    if part.nbytes < _TILED_MIN or part.ndim < 2 or abs(part.strides[-1]) < _FAR or part.shape[-1] <= _TILE:
        return np.ascontiguousarray(part)
    out = np.empty(part.shape, part.dtype)
    for j in range(0, part.shape[-1], _TILE):
        out[..., j:j + _TILE] = part[..., j:j + _TILE]
    return out
