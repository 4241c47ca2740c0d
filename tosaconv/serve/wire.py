"""What the conversion server and its clients share: the socket's place, the servable commands, the frames.

The client imports this module on every command run with ``TOSACONV_SERVER=1``, so it imports only
modules the interpreter has already loaded or that are built in (``_socket``, ``marshal``,
``struct``, ``zlib``). ``socket`` and ``signal`` would each cost milliseconds: they build enums.

One connection carries one command:

- The client sends a request: a 4-byte length, then a ``marshal``-ed dict. The first ``sendmsg``
  also carries its stdin, stdout and stderr as ``SCM_RIGHTS`` descriptors. The dict holds the
  argv, cwd, environment, umask, resource limits and stream encodings, or ``{"control": ...}``
  for ``tosaconv server stop|status``.
- The server and its worker answer with 9-byte frames: a kind byte and a signed 64-bit value.
  - ``F`` (fall back; value = the length of a UTF-8 reason that follows): run in-process instead.
  - ``R`` (running; the worker's pid).
  - ``X`` (exited; the exit code).
  - ``S`` (killed by this signal).
  - ``I`` (info; the length of a ``marshal``-ed status dict that follows).
"""
from __future__ import annotations

import _socket
import marshal
import os
import struct
import sys
import zlib

TYPE_CHECKING = False   # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

SERVER_ENV = "TOSACONV_SERVER"       # "1": use the server, starting it when none runs
DIR_ENV = "TOSACONV_SERVER_DIR"      # where the socket lives (default $XDG_RUNTIME_DIR/tosaconv or /tmp/tosaconv-UID)

# Commands that never run the numpy interpreter on a model's inputs, and the options that make convert run it.
# The server serves only these, with one OpenBLAS thread, as `python -m tosaconv` runs them (tosaconv.__main__).
NO_RUN_COMMANDS = ("convert", "import", "specialize", "inspect", "ops")
RUN_OPTIONS = ("--run", "--outputs")

# Environment variables that module imports read (the interpreter, numpy, OpenBLAS, the locale): a command whose
# values differ from the server's runs in-process. OPENBLAS_NUM_THREADS counts as "1" when unset, as above.
IMPORT_ENV_PREFIXES = ("PYTHON", "OPENBLAS_", "GOTO_", "OMP_", "MKL_", "NPY_", "NUMPY_", "LC_", "LANG")

FRAME = struct.Struct("!cq")
LENGTH = struct.Struct("!I")
MAX_REQUEST = 16 << 20   # bytes of one request: an environment of a few hundred kB is already unusual
STREAMS = (0, 1, 2)
MAX_SOCKET_PATH = 108   # bytes of a unix socket's path, with its NUL (sun_path)
MISSING = "it does not exist"   # private_dir_problem of a directory not made yet: the server makes it


def command_of(argv: list[str]) -> str | None:
    """The subcommand's name: the first argument that is not an option (the group's options take no value)."""
    return next((a for a in argv if not a.startswith("-")), None)


def runs_no_interpreter(argv: list[str]) -> bool:
    """Whether ``tosaconv ARGV`` is a command that never runs the numpy interpreter on the model's inputs."""
    runs = any(a in RUN_OPTIONS or a.startswith("--outputs=") for a in argv)
    return command_of(argv) in NO_RUN_COMMANDS and not runs


def supported() -> bool:
    """Unix sockets with peer credentials (Linux): elsewhere every command runs in-process."""
    return hasattr(_socket, "AF_UNIX") and hasattr(_socket, "SO_PEERCRED") and hasattr(os, "fork")


def socket_dir() -> str:
    """The directory of the server's socket: ``$TOSACONV_SERVER_DIR``, else a private one per user."""
    chosen = os.environ.get(DIR_ENV)
    if chosen:
        return chosen
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return os.path.join(runtime, "tosaconv") if runtime else f"/tmp/tosaconv-{os.getuid()}"


def identity() -> str:
    """What a server must share with a command to run it: tosaconv's version and place, the interpreter and
    its module path. Not ``sys.path[0]``: the console script's directory, or the working directory under
    ``python -m``, which would otherwise make a server per directory."""
    from .. import __version__
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return "\0".join([__version__, package, sys.executable, sys.version, repr(tuple(sys.flags)), *sys.path[1:]])


def socket_path(ident: str | None = None) -> str:
    """The socket of the server for this tosaconv and interpreter: a hash of :func:`identity` (``ident`` when the
    caller has it already)."""
    return os.path.join(socket_dir(), f"{zlib.crc32((ident or identity()).encode()):08x}.sock")


def private_dir_problem(path: str) -> str | None:
    """Why ``path`` may not hold our socket, or None: it must be a real directory that only we own and enter.
    Another user could otherwise make the directory first and receive our commands, files and environment."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return MISSING
    except OSError as e:
        return f"it cannot be read ({e.strerror})"
    if (st.st_mode & 0o170000) != 0o040000:
        return "it is not a directory"
    if st.st_uid != os.getuid():
        return f"it belongs to uid {st.st_uid}, not to this user ({os.getuid()})"
    if st.st_mode & 0o077:
        return f"its mode {st.st_mode & 0o777:o} lets others in (it must be 700)"
    return None


def import_env(environ: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The environment variables that imports read (:data:`IMPORT_ENV_PREFIXES`), in a comparable form."""
    chosen = {k: v for k, v in environ.items() if k.startswith(IMPORT_ENV_PREFIXES)}
    chosen.setdefault("OPENBLAS_NUM_THREADS", "1")
    return tuple(sorted(chosen.items()))


def peer_uid(sock: _socket.socket) -> int:
    """The uid of the process at the other end of a unix socket (``SO_PEERCRED``: pid, uid, gid)."""
    raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", raw)[1])


def send_request(sock: _socket.socket, request: dict[str, Any], fds: tuple[int, ...] = ()) -> None:
    """One request, with ``fds`` passed along the first bytes."""
    body = marshal.dumps(request)
    data = LENGTH.pack(len(body)) + body
    ancillary = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))] if fds else []
    sent = sock.sendmsg([data], ancillary)
    if sent < len(data):
        sock.sendall(data[sent:])


def recv_request(sock: _socket.socket) -> tuple[dict[str, Any], list[int]]:
    """The request and the descriptors that came with it. Raises ValueError on a malformed one."""
    fds: list[int] = []
    head, ancillary, _, _ = sock.recvmsg(LENGTH.size, _socket.CMSG_SPACE(len(STREAMS) * struct.calcsize("i")))
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            usable = len(data) - len(data) % struct.calcsize("i")
            fds += struct.unpack(f"{usable // struct.calcsize('i')}i", data[:usable])
    if len(head) < LENGTH.size:
        head += recv_exactly(sock, LENGTH.size - len(head))
    (size,) = LENGTH.unpack(head)
    if size > MAX_REQUEST:
        raise ValueError(f"a request of {size} bytes (at most {MAX_REQUEST})")
    request = marshal.loads(recv_exactly(sock, size))
    if not isinstance(request, dict):
        raise ValueError("a request that is not a dict")
    return request, fds


def recv_exactly(sock: _socket.socket, size: int) -> bytes:
    """``size`` bytes, or ValueError when the peer closes first."""
    parts: list[bytes] = []
    got = 0
    while got < size:
        part = sock.recv(min(size - got, 1 << 20))
        if not part:
            raise ValueError(f"the connection closed after {got} of {size} bytes")
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def send_frame(sock: _socket.socket, kind: bytes, value: int, tail: bytes = b"") -> None:
    """One frame; ``F`` and ``I`` frames carry ``tail`` (their value is its length)."""
    sock.sendall(FRAME.pack(kind, len(tail) if tail else value) + tail)


def recv_frame(sock: _socket.socket) -> tuple[bytes, int, bytes]:
    """(kind, value, tail) of the next frame; (b"", 0, b"") when the peer has closed."""
    try:
        head = recv_exactly(sock, FRAME.size)
    except ValueError:
        return b"", 0, b""
    kind, value = FRAME.unpack(head)
    tail = recv_exactly(sock, value) if kind in (b"F", b"I") else b""
    return kind, value, tail
