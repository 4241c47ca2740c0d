"""Files the command line reads and writes: atomic outputs and ``.npz`` arrays.

Every output goes through an :class:`OutputBatch`: its bytes are first
written to a hidden temporary file in the destination's own directory and
fsynced, and only when the whole command has succeeded does ``commit`` move
each one into place with ``os.replace``. So a failed run leaves no partial
``.tosa``, ``.tosair``, ``.npz`` or ``.json`` behind, and an existing file is
never clobbered by a run that fails. ``.npz`` files are written with fixed
zip timestamps so that the same arrays give the same bytes, and read with
errors that name the file and say what is wrong with it.
"""
from __future__ import annotations

import hashlib
import io
import os
import tempfile
import zipfile
from dataclasses import dataclass, field

import numpy as np

from .diagnostics import UsageError

_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)   # the earliest zip date; fixed so .npz bytes are reproducible


@dataclass(frozen=True)
class WrittenFile:
    path: str
    kind: str
    size: int
    sha256: str


@dataclass
class OutputBatch:
    """Outputs staged in temporary files, moved into place together by ``commit``."""

    _staged: list = field(default_factory=list)   # (temp path, final path)
    written: list = field(default_factory=list)   # WrittenFile, in staging order

    def stage(self, path: str, data: bytes, kind: str) -> WrittenFile:
        """Write ``data`` next to ``path`` (not yet visible under that name)."""
        final = os.path.abspath(path)
        os.makedirs(os.path.dirname(final), exist_ok=True)
        self._staged.append((_write_temp(final, data), final))
        entry = WrittenFile(path, kind, len(data), hashlib.sha256(data).hexdigest())
        self.written.append(entry)
        return entry

    def commit(self):
        """Move every staged file into place."""
        while self._staged:
            temp, final = self._staged.pop(0)
            os.replace(temp, final)

    def discard(self):
        """Remove every staged file that was not committed."""
        while self._staged:
            temp, _ = self._staged.pop()
            _unlink_quietly(temp)


def _write_temp(final: str, data: bytes) -> str:
    directory, base = os.path.split(final)
    fd, temp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _unlink_quietly(temp)
        raise
    return temp


def _unlink_quietly(path: str):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def npz_bytes(arrays: dict) -> bytes:
    """An uncompressed ``.npz`` holding ``arrays`` under their own names, byte-reproducible."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zf:
        for name, array in arrays.items():
            member = io.BytesIO()
            # C order always: the official tools' npy reader refuses Fortran-order arrays.
            np.lib.format.write_array(member, np.asarray(array, order="C"), allow_pickle=False)
            zf.writestr(zipfile.ZipInfo(f"{name}.npy", _ZIP_EPOCH), member.getvalue())
    return buffer.getvalue()


def load_npz(path: str) -> dict:
    """The arrays of an ``.npz`` file by name; a UsageError if it is missing or unreadable."""
    if not os.path.isfile(path):
        raise UsageError.one("E-NPZ-READ", f"inputs file '{path}' does not exist",
                             hint="pass an .npz written by numpy.savez or by 'tosaconv run'")
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {name: npz[name] for name in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise UsageError.one("E-NPZ-READ", f"cannot read '{path}' as an .npz file: {e}",
                             hint="pass an .npz written by numpy.savez or by 'tosaconv run'") from None


def read_bytes(path: str, what: str) -> bytes:
    """The bytes of an option file, with a UsageError naming it if it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise UsageError.one("E-FILE-READ", f"cannot read {what} '{path}': {e.strerror or e}") from None
