"""The lean flatbuffer writer produces exactly the bytes of the official ``flatbuffers.Builder``.

Each case writes the same strings, vectors and tables with both, in the same
order, and compares the finished buffers byte for byte: alignment, padding,
vtable sharing and the root/identifier all have to agree. A tiny starting
size makes the writer regrow its buffer on the way.
"""
from __future__ import annotations

import flatbuffers
import numpy as np
import pytest

from tosaconv.emit.fbwrite import FlatWriter, TableLayout


def _official(script) -> bytes:
    b = flatbuffers.Builder(16)
    strings = {}
    offsets = []
    for kind, *args in script:
        if kind == "string":
            if args[0] not in strings:
                strings[args[0]] = b.CreateString(args[0])
            offsets.append(strings[args[0]])
        elif kind == "bytes":
            b.Prep(8, len(args[0]))
            offsets.append(b.CreateByteVector(args[0]))
        elif kind == "ints":
            offsets.append(b.CreateNumpyVector(np.asarray(args[0], dtype="<i4")))
        elif kind == "offsets":
            picked = [offsets[i] for i in args[0]]
            b.StartVector(4, len(picked), 4)
            for off in reversed(picked):
                b.PrependUOffsetTRelative(off)
            offsets.append(b.EndVector())
        else:
            slots, fields = args
            b.StartObject(slots)
            for slot, fmt, value in fields:
                if fmt == "U":
                    b.PrependUOffsetTRelativeSlot(slot, offsets[value], 0)
                elif fmt == "B":
                    b.PrependUint8Slot(slot, value, 255)   # a default never used: always written
                elif fmt == "i":
                    b.PrependInt32Slot(slot, value, 12345)
                else:
                    b.PrependUint32Slot(slot, value, 12345)
            offsets.append(b.EndObject())
    b.Finish(offsets[-1], b"TOSA")
    return bytes(b.Output())


def _ours(script, stream_min: int = 0, layouts: bool = False) -> bytes:
    """The script written with :class:`FlatWriter`; ``layouts``: tables through ``put`` and a
    :class:`TableLayout` per field layout (made once, as the serializer's module constants are)."""
    w = FlatWriter(16, stream_min)
    made: dict = {}
    offsets = []
    for kind, *args in script:
        if kind == "string":
            offsets.append(w.string(args[0]))
        elif kind == "bytes":
            offsets.append(w.byte_vector(args[0], 8))
        elif kind == "ints":
            offsets.append(w.int32_vector(list(args[0])))
        elif kind == "offsets":
            offsets.append(w.offset_vector([offsets[i] for i in args[0]]))
        else:
            slots, fields = args
            values = [offsets[v] if f == "U" else v for s, f, v in fields]
            if layouts:
                key = (slots, tuple((s, f) for s, f, _ in fields))
                layout = made.setdefault(key, TableLayout(*key))
                offsets.append(w.put(layout, values))
            else:
                offsets.append(w.table(slots, [(s, f, v) for (s, f, _), v in zip(fields, values)]))
    out = w.finish(offsets[-1], b"TOSA")
    return out if isinstance(out, bytearray) else out.tobytes()


def _random_script(seed: int) -> list:
    rng = np.random.default_rng(seed)
    script = []
    for _ in range(200):
        choice = rng.integers(0, 5) if script else 0
        if choice == 0:
            script.append(("string", "t" * int(rng.integers(0, 9)) + str(int(rng.integers(0, 30)))))
        elif choice == 1:
            script.append(("bytes", rng.integers(0, 256, int(rng.integers(0, 20))).astype(np.uint8).tobytes()))
        elif choice == 2:
            script.append(("ints", [int(v) for v in rng.integers(-2**31, 2**31, int(rng.integers(0, 6)))]))
        elif choice == 3:
            script.append(("offsets", [int(i) for i in rng.integers(0, len(script), int(rng.integers(0, 5)))]))
        else:
            script.append(("table", *_random_table(rng, len(script))))
    slots = 2
    script.append(("table", slots, [(0, "U", len(script) - 1), (1, "i", 7)]))
    return script


def _random_table(rng, written: int) -> tuple:
    slots = int(rng.integers(1, 8))
    fields = []
    for slot in rng.permutation(slots)[:int(rng.integers(0, slots + 1))]:
        fmt = "UBiI"[int(rng.integers(0, 4))]
        value = {"U": int(rng.integers(0, written)), "B": int(rng.integers(0, 255)),
                 "i": int(rng.integers(-2**31, 2**31)), "I": int(rng.integers(0, 2**32))}[fmt]
        fields.append((int(slot), fmt, value if value != 12345 else 1))
    return slots, fields


@pytest.mark.parametrize("seed", range(20))
def test_same_bytes_as_the_official_builder(seed):
    script = _random_script(seed)
    assert _ours(script) == _official(script)


@pytest.mark.parametrize("seed", range(20))
def test_tables_put_by_layout_give_the_official_builders_bytes(seed):
    """``put`` with a precomputed layout: the same bytes at every alignment a table can start at (the
    random strings and byte vectors leave all four), vtables shared with ``table``'s as the builder shares
    them; also when streaming."""
    script = _random_script(seed)
    assert _ours(script, layouts=True) == _official(script)
    assert _ours(script, stream_min=8, layouts=True) == _official(script)


def test_repeated_field_layouts_share_one_vtable():
    script = [("string", "a"), ("table", 3, [(0, "U", 0), (2, "I", 5)]), ("table", 3, [(0, "U", 0), (2, "I", 9)]),
              ("offsets", [1, 2]), ("table", 1, [(0, "U", 3)])]
    ours = _ours(script)
    assert ours == _official(script)
    # the two tables' one vtable: 3 slots, so 10 bytes, then the table size 12 (offset, uint32, uoffset)
    assert ours.count(bytes([10, 0, 12, 0])) == 1


@pytest.mark.parametrize("array", [
    np.arange(12, dtype=np.float32).reshape(3, 4).T,             # a transposed view: written in C order
    np.arange(24, dtype=np.int16).reshape(2, 3, 4)[:, ::2, 1:],  # strided
    np.zeros((0, 3), np.float32), np.float32(2.5) * np.ones(()), np.arange(7, dtype=np.int8),
])
def test_constant_data_is_the_arrays_c_order_bytes(array):
    from tosaconv.emit.serialize import _aligned_bytes, _Writer
    w = _Writer(16)
    off = _aligned_bytes(w, array)
    buf = bytes(w.buf)
    at = len(buf) - off
    n = int.from_bytes(buf[at:at + 4], "little")
    assert buf[at + 4:at + 4 + n] == np.ascontiguousarray(array).tobytes()
    assert (off - 4) % 8 == 0      # the data starts 8-aligned (counted from the end, as flatbuffers aligns)


@pytest.mark.parametrize("seed", range(10))
def test_streamed_vectors_give_the_official_builders_bytes(seed):
    """With streaming, every byte vector of 8 bytes or more is kept as a piece of its own (its padding,
    the buffer sealed before it, a fresh buffer after it): the joined pieces are still the builder's bytes."""
    script = _random_script(seed)
    assert _ours(script, stream_min=8) == _official(script)


def _arrays_file(arrays, stream_min: int):
    w = FlatWriter(16, stream_min)
    offsets = [w.array_vector(a, 8) for a in arrays]
    vector = w.offset_vector(offsets)
    return w.finish(w.table(1, [(0, "U", vector)]), b"TOSA")


def test_streamed_strided_arrays_are_written_in_c_order(monkeypatch, tmp_path):
    """Strided arrays (transposed weights) streamed in blocks smaller than a row, a few rows, or whole:
    the file written part by part, and its sha256, are those of the unstreamed buffer."""
    import hashlib

    from tosaconv.emit.fbwrite import FlatPieces
    from tosaconv.fileio import OutputBatch
    arrays = [np.arange(4 * 6 * 5, dtype=np.float32).reshape(4, 6, 5).transpose(2, 0, 1),
              np.arange(300, dtype=np.int16).reshape(20, 15).T[:, ::2],
              np.arange(50, dtype=np.int8), np.arange(9, dtype=np.float32).reshape(3, 3).T[None]]
    expected = bytes(_arrays_file(arrays, 0))
    for block in (16, 64, 1 << 22):
        monkeypatch.setattr(FlatPieces, "BLOCK", block)
        pieces = _arrays_file(arrays, 1)
        assert isinstance(pieces, FlatPieces) and len(pieces) == len(expected)
        assert pieces.tobytes() == expected
        batch = OutputBatch()
        written = batch.stage(str(tmp_path / f"m{block}.tosa"), pieces, "tosa")
        batch.commit()
        assert (tmp_path / f"m{block}.tosa").read_bytes() == expected
        assert written.sha256 == hashlib.sha256(expected).hexdigest() and written.size == len(expected)


@pytest.mark.parametrize("tile", [1, 3, 32])
def test_strided_arrays_copied_column_tiles_at_a_time_keep_c_order(monkeypatch, tile):
    """A big array whose last axis is strided (a transposed weight) is copied a few columns at a time
    (fbwrite._c_order_copy); its streamed bytes are numpy's own C-order bytes of it (``tobytes``), for
    tiles that divide the columns or not, whole rows or rows split, and a reversed or sliced last axis."""
    from tosaconv.emit import fbwrite
    from tosaconv.emit.fbwrite import FlatPieces
    monkeypatch.setattr(fbwrite, "_TILE", tile)
    monkeypatch.setattr(fbwrite, "_TILED_MIN", 0)
    monkeypatch.setattr(fbwrite, "_FAR", 0)        # every array here goes through the column tiles
    rng = np.random.default_rng(7)
    w = rng.integers(-1000, 1000, size=(37, 11, 8)).astype(np.int16)
    arrays = [w.transpose(2, 1, 0), w.transpose(0, 2, 1)[:, :, ::-1], w.T[:, :, 1::3],
              rng.random((50, 9), dtype=np.float32).T, w.astype(np.float64).transpose(1, 2, 0)]
    for block in (16, 200, 1 << 22):
        monkeypatch.setattr(FlatPieces, "BLOCK", block)
        for a in arrays:
            assert b"".join(FlatPieces([a])) == a.tobytes()
    assert bytes(_arrays_file(arrays, 1).tobytes()) == bytes(_arrays_file(arrays, 0))
