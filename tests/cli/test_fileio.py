"""Unit tests of tosaconv.fileio: staged atomic outputs and .npz files."""
from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from tosaconv.diagnostics import UsageError
from tosaconv.fileio import OutputBatch, load_npz, npz_bytes


def test_staged_files_appear_only_on_commit(tmp_path):
    batch = OutputBatch()
    entry = batch.stage(str(tmp_path / "sub" / "a.tosa"), b"abc", "tosa")
    assert entry.size == 3 and len(entry.sha256) == 64
    assert not (tmp_path / "sub" / "a.tosa").exists()
    batch.commit()
    assert (tmp_path / "sub" / "a.tosa").read_bytes() == b"abc"
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["a.tosa"]   # no temporary file left


def test_discard_keeps_the_old_file(tmp_path):
    target = tmp_path / "a.tosa"
    target.write_bytes(b"old")
    batch = OutputBatch()
    batch.stage(str(target), b"new", "tosa")
    batch.discard()
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.tosa"]


def test_npz_round_trip_and_reproducible_bytes(tmp_path):
    arrays = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "input:y": np.array([True, False])}
    data = npz_bytes(arrays)
    assert data == npz_bytes(arrays)
    path = tmp_path / "a.npz"
    path.write_bytes(data)
    back = load_npz(str(path))
    assert set(back) == set(arrays)
    for name, a in arrays.items():
        assert back[name].dtype == a.dtype and np.array_equal(back[name], a)


@pytest.mark.parametrize("content", [b"", b"not a zip file", None])
def test_load_npz_errors_are_usage_errors(tmp_path, content):
    path = tmp_path / "in.npz"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(UsageError, match="in.npz"):
        load_npz(str(path))


def test_load_npz_truncated(tmp_path):
    path = tmp_path / "in.npz"
    data = npz_bytes({"x": np.zeros((100, 100), np.float32)})
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(UsageError, match="cannot read"):
        load_npz(str(path))


@pytest.mark.parametrize("umask, expected", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_new_outputs_get_the_umask_mode(tmp_path, umask, expected):
    old = os.umask(umask)
    try:
        batch = OutputBatch()
        batch.stage(str(tmp_path / "m.tosa"), b"x", "tosa")
        batch.commit()
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "m.tosa").st_mode) == expected


def test_replacing_keeps_the_existing_mode(tmp_path):
    target = tmp_path / "m.tosa"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    old = os.umask(0o077)
    try:
        batch = OutputBatch()
        batch.stage(str(target), b"new", "tosa")
        batch.commit()
    finally:
        os.umask(old)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_temporary_files_are_new_private_and_beside_the_output(tmp_path, monkeypatch):
    """Like tempfile.mkstemp: a hidden 0600 file in the output's directory, never an existing one."""
    from tosaconv import fileio
    names = iter([b"\x00" * 6, b"\x00" * 6, b"\x01" * 6, b"\x02" * 6])
    monkeypatch.setattr(fileio.os, "urandom", lambda n: next(names))
    fd1, first = fileio._new_temp(str(tmp_path), "m.tosa")
    fd2, second = fileio._new_temp(str(tmp_path), "m.tosa")   # the first name is taken: the next one
    os.close(fd1), os.close(fd2)
    assert (first, second) == (str(tmp_path / ".m.tosa.000000000000.tmp"), str(tmp_path / ".m.tosa.010101010101.tmp"))
    assert stat.S_IMODE(os.stat(first).st_mode) == 0o600
    with pytest.raises(FileNotFoundError):
        fileio._new_temp(str(tmp_path / "missing"), "m.tosa")
