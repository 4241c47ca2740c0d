"""Files the command line reads and writes: atomic outputs and ``.npz`` arrays.

Every output goes through an :class:`OutputBatch`: its bytes are first
written to a hidden temporary file in the destination's own directory, and
only when the whole command has succeeded does ``commit`` move each one into
place with ``os.replace``. The files are not fsynced: like a compiler's or a
linker's outputs, they are as durable as the file system makes any write
(an fsync cost 80 ms of a 50 MB model's 0.6 s conversion, issue 13). So a failed run leaves no partial
``.tosa``, ``.tosair``, ``.npz`` or ``.json`` behind, and an existing file is
never clobbered by a run that fails. ``.npz`` files are written with fixed
zip timestamps so that the same arrays give the same bytes, and read with
errors that name the file and say what is wrong with it.
"""
from __future__ import annotations

import io
import os
from dataclasses import field
from .records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import IO, TYPE_CHECKING, Any, Callable

import numpy as np

from .diagnostics import UsageError
from .limits import check_tensor, nbytes

if TYPE_CHECKING:
    import zipfile
    from collections.abc import Iterable
    from typing import Union

    from .emit.fbwrite import FlatPieces

    _Data = Union[bytes, bytearray, memoryview, FlatPieces]   # what an output is written from

Expect = Callable[[str, tuple[int, ...], "np.dtype[Any]"], None]   # sees a member's name, shape and dtype before its data

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

    _staged: list[tuple[str, str]] = field(default_factory=list)   # (temp path, final path)
    written: list[WrittenFile] = field(default_factory=list)   # in staging order
    hash_outputs: bool = True   # False: no report lists the files, so their sha256 is left empty

    def stage(self, path: str, data: _Data, kind: str) -> WrittenFile:
        """Write ``data`` next to ``path`` (not yet visible under that name). ``data`` is bytes-like, or
        an object with ``len`` whose iteration gives the bytes-like parts (emit.fbwrite.FlatPieces)."""
        final = os.path.abspath(path)
        os.makedirs(os.path.dirname(final), exist_ok=True)
        self._staged.append((_write_temp(final, data), final))
        entry = WrittenFile(path, kind, len(data), _sha256(data) if self.hash_outputs else "")
        self.written.append(entry)
        return entry

    def commit(self) -> None:
        """Move every staged file into place."""
        while self._staged:
            temp, final = self._staged.pop(0)
            os.replace(temp, final)

    def discard(self) -> None:
        """Remove every staged file that was not committed."""
        while self._staged:
            temp, _ = self._staged.pop()
            _unlink_quietly(temp)


def _parts(data: _Data) -> Iterable[bytes | bytearray | memoryview]:
    return (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data


def _sha256(data: _Data) -> str:
    import hashlib   # here: a conversion without --report hashes nothing (start-up, issue 13)
    digest = hashlib.sha256()
    for part in _parts(data):
        digest.update(part)
    return digest.hexdigest()


def _write_temp(final: str, data: _Data) -> str:
    directory, base = os.path.split(final)
    fd, temp = _new_temp(directory, base)
    try:
        os.fchmod(fd, _final_mode(final))
        with os.fdopen(fd, "wb") as f:
            for part in _parts(data):
                f.write(part)
    except BaseException:
        _unlink_quietly(temp)
        raise
    return temp


_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _new_temp(directory: str, base: str) -> tuple[int, str]:
    """A new 0600 file ``.BASE.RANDOM.tmp`` in ``directory``, opened exclusively, as tempfile.mkstemp
    makes it (not imported: tempfile costs a convert ~5 ms of start-up, issue 13)."""
    for _ in range(100):
        temp = os.path.abspath(os.path.join(directory, f".{base}.{os.urandom(6).hex()}.tmp"))
        try:
            return os.open(temp, _TEMP_FLAGS, 0o600), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"no unused temporary file name for '{base}' in '{directory or '.'}'")


def _final_mode(final: str) -> int:
    """The mode the output should have: an existing file's own, else 0666 less the umask.

    mkstemp creates 0600 files, and ``os.replace`` keeps the temporary file's
    mode, so without this every output would be private to its owner.
    """
    try:
        return os.stat(final).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def sha256_file(path: str) -> str:
    import hashlib   # here: a conversion without --report hashes nothing (start-up, issue 13)
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def npz_bytes(arrays: dict[str, Any]) -> bytes:
    """An uncompressed ``.npz`` holding ``arrays`` under their own names, byte-reproducible."""
    import zipfile   # here and in load_npz: a convert reads and writes no .npz (start-up, issue 13)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zf:
        for name, array in arrays.items():
            member = io.BytesIO()
            # C order always: the official tools' npy reader refuses Fortran-order arrays.
            np.lib.format.write_array(member, np.asarray(array, order="C"),  # type: ignore[no-untyped-call]
                                      allow_pickle=False)
            zf.writestr(zipfile.ZipInfo(f"{name}.npy", _ZIP_EPOCH), member.getvalue())
    return buffer.getvalue()


_NPZ_HINT = "pass an .npz written by numpy.savez or by 'tosaconv run'"
_ARRAY_KINDS = "biuf"   # bool, signed and unsigned integers, floats: the dtypes a model input can have


def load_npz(path: str, expect: Expect | None = None) -> dict[str, np.ndarray[Any, Any]]:
    """The arrays of an ``.npz`` file by name; a UsageError if it is missing or unreadable.

    The archive is checked before any array is read: every member must be an uncompressed or
    deflated ``.npy`` whose header declares a plain numeric dtype (nothing is unpickled), and whose
    declared size fits ``--max-tensor-bytes`` (a ShapeError, exit 4, otherwise). Then exactly the
    declared bytes are read, so a small member that would inflate to gigabytes never does.
    ``expect(name, shape, dtype)``, when given, sees each member's header before its data is read
    (the run's check against the model's declared inputs).
    """
    import zipfile
    import zlib   # (its error type only)
    if not os.path.isfile(path):
        raise UsageError.one("E-NPZ-READ", f"inputs file '{path}' does not exist", hint=_NPZ_HINT)
    if not zipfile.is_zipfile(path):
        raise _npz_error(path, _not_zip_reason(path))
    try:
        with zipfile.ZipFile(path) as zf:
            members = _npz_members(path, zf)
            return {name[:-4]: _read_member(path, zf, info, expect) for name, info in members.items()}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError) as e:
        raise _npz_error(path, str(e) or type(e).__name__) from None


def _npz_error(path: str, reason: str, member: str = "") -> UsageError:
    where = f"'{path}'" + (f" (member '{member}')" if member else "")
    return UsageError.one("E-NPZ-READ", f"cannot read {where} as an .npz file: {reason}", hint=_NPZ_HINT)


def _not_zip_reason(path: str) -> str:
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic == b"\x93NUMPY":
        return "it is a single .npy array, not an .npz archive (save it with numpy.savez(path, name=array))"
    return "it is not a zip archive"


def _npz_members(path: str, zf: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    import zipfile   # loaded by load_npz already
    members: dict[str, zipfile.ZipInfo] = {}
    for info in zf.infolist():
        if not info.filename.endswith(".npy"):
            raise _npz_error(path, "every member must be a .npy array", info.filename)
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _npz_error(path, f"zip compression method {info.compress_type} is not supported "
                             "(only stored and deflated, as numpy.savez and savez_compressed write)", info.filename)
        if info.flag_bits & 0x1:   # zip's "encrypted" flag: reading it needs a password
            raise _npz_error(path, "the member is encrypted (numpy.savez never encrypts)", info.filename)
        if info.filename in members:
            raise _npz_error(path, "the archive holds this member twice", info.filename)
        members[info.filename] = info
    return members


def _read_member(path: str, zf: zipfile.ZipFile, info: zipfile.ZipInfo,
                 expect: Expect | None = None) -> np.ndarray[Any, Any]:
    name = info.filename[:-4]
    with zf.open(info) as f:
        shape, fortran, dtype = _npy_header(path, info.filename, f)
        if expect is not None:
            expect(name, shape, dtype)
        check_tensor(f"array '{name}' of '{path}'", shape, dtype)
        size = nbytes(shape, dtype.itemsize)
        data = f.read(size)
    if len(data) != size:
        raise _npz_error(path, f"the header declares {size} bytes of data but the member holds {len(data)}",
                         info.filename)
    array = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    return np.ascontiguousarray(array, dtype=dtype.newbyteorder("="))


def _npy_header(path: str, member: str, f: IO[bytes]) -> tuple[tuple[int, ...], bool, np.dtype[Any]]:
    """(shape, fortran order, dtype) from the header of one ``.npy`` member, checked."""
    version = np.lib.format.read_magic(f)   # type: ignore[no-untyped-call]
    if version not in ((1, 0), (2, 0), (3, 0)):
        raise _npz_error(path, f".npy format version {version} is not supported", member)
    reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = reader(f)   # type: ignore[no-untyped-call]
    if dtype.hasobject or dtype.kind not in _ARRAY_KINDS or dtype.fields is not None:
        raise _npz_error(path, f"dtype {dtype} is not a numeric array type (bool, integer or float)", member)
    return tuple(shape), bool(fortran), dtype


def read_bytes(path: str, what: str) -> bytes:
    """The bytes of an option file, with a UsageError naming it if it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise UsageError.one("E-FILE-READ", f"cannot read {what} '{path}': {e.strerror or e}") from None
