"""The command's side of the conversion server: hand the command line over, relay signals, take the exit code.

:func:`served` runs a command on the server and returns its exit code. It returns None
when the command must run in-process: no server runs (one is then started in the
background for the next command), the command is not servable, or the server declined.
It imports only built-in modules (see :mod:`.wire`): the point is to skip start-up.
"""
from __future__ import annotations

import _signal  # type: ignore[import-not-found]   # signal without its enums (~1 ms)
import _socket
import os
import sys

from . import wire

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EXIT_INTERRUPTED = 130   # as tosaconv.cli
FIRST_FRAME_TIMEOUT = 60.0   # seconds for the server to fork the worker; longer means it is wedged: run in-process
_FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
# The limits the worker takes from the command (tosaconv.serve.worker); resource is a small C module.
LIMITS = ("RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_FSIZE", "RLIMIT_CPU", "RLIMIT_NOFILE", "RLIMIT_STACK", "RLIMIT_CORE")


def served(argv: list[str]) -> int | None:
    """Run ``tosaconv ARGV`` on the server: its exit code, or None to run it in-process."""
    if not wire.supported() or not wire.runs_no_interpreter(argv):
        return None
    problem = wire.private_dir_problem(wire.socket_dir())
    ident = wire.identity()
    path = wire.socket_path(ident)
    if problem not in (None, wire.MISSING) or len(path.encode()) >= wire.MAX_SOCKET_PATH:
        return None   # no server can run there: `tosaconv server start` says why
    sock = None if problem else _connect(path)
    if sock is None:
        if not _server_starting(path):
            _start_server()
        return None
    try:
        return _converse(sock, argv, ident)
    except KeyboardInterrupt:   # before the worker ran (after, signals go to it)
        return EXIT_INTERRUPTED
    finally:
        sock.close()


def _connect(path: str) -> _socket.socket | None:
    """A connection to the server at ``path`` if one listens there and runs as this user."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
        if wire.peer_uid(sock) == os.getuid():
            return sock
    except OSError:
        pass
    sock.close()
    return None


def _server_starting(path: str) -> bool:
    """Whether a server holds the socket's lock (one is importing its modules): then start no other."""
    import fcntl
    try:
        fd = os.open(path + ".lock", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)   # closing drops a lock we took


def _converse(sock: _socket.socket, argv: list[str], ident: str) -> int | None:
    """Send the request and follow the worker to its end."""
    try:
        wire.send_request(sock, request(argv, ident), wire.STREAMS)
        sock.settimeout(FIRST_FRAME_TIMEOUT)
        kind, pid, _ = wire.recv_frame(sock)
    except (OSError, ValueError):
        return None   # nothing ran yet
    if kind != b"R":
        return None   # declined (F) before any output: run in-process
    sock.settimeout(None)
    _forward_signals(pid)
    try:
        kind, value, _ = wire.recv_frame(sock)
    except (OSError, ValueError):
        kind, value = b"", 0
    if kind == b"X":
        return value
    if kind == b"S":
        return _die_by(value)
    return _lost(pid)


def request(argv: list[str], ident: str) -> dict[str, Any]:
    """What the worker needs to act as this process (``ident``: :func:`wire.identity`)."""
    umask = os.umask(0o22)
    os.umask(umask)
    return {"argv": list(argv), "identity": ident, "path0": sys.path[0], "cwd": os.getcwd(),
            "env": dict(os.environ), "umask": umask,
            "limits": _limits(), "encodings": [(s.encoding, s.errors) if s is not None else None
                                               for s in (sys.stdin, sys.stdout, sys.stderr)]}


def _limits() -> dict[str, tuple[int, int]]:
    import resource
    return {name: resource.getrlimit(getattr(resource, name)) for name in LIMITS if hasattr(resource, name)}


def _forward_signals(pid: int) -> None:
    """Pass the signals a terminal or a build tool sends us on to the worker."""
    def forward(signum: int, frame: object) -> None:
        try:
            os.kill(pid, signum)
        except OSError:
            pass
    for name in _FORWARDED:
        _signal.signal(getattr(_signal, name), forward)


def _die_by(signum: int) -> int:
    """End as the worker ended: killed by ``signum``. A shell then sees 128 + signum, which is also what
    returns when the signal does not end a process by default."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        _signal.signal(signum, _signal.SIG_DFL)   # SIGKILL and SIGSTOP have no handler to reset
    except (OSError, ValueError):
        pass
    os.kill(os.getpid(), signum)
    return 128 + signum


def _lost(pid: int) -> int:
    """The server and the worker both went away without a word: an internal error."""
    print(f"tosaconv: internal error: the conversion server's worker{f' (pid {pid})' if pid else ''} ended without "
          f"an exit code (see `tosaconv server status`; unset {wire.SERVER_ENV} to convert in-process)",
          file=sys.stderr)
    return 1


# The server's command line: this process's interpreter and module path, sys.path[0] included (the console
# script's directory, or the working directory under `python -m`), so that it imports the tosaconv this
# command imported. `python -m tosaconv` would look in the working directory first: run in a source
# checkout, the console script's server would import the checkout's tosaconv and never be found.
_SERVER_MAIN = "import sys; sys.path[0] = sys.argv.pop(1); from tosaconv.__main__ import run; run()"


def _start_server() -> None:
    """Start a server in the background for the next command, detached from ours: its own session and
    /dev/null for stdio, so no pipe of ours (a build log, ``$(shell ...)``) waits on it."""
    null = os.devnull
    actions = [(os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0), (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0)]
    argv = [sys.executable, "-c", _SERVER_MAIN, sys.path[0], "server", "start", "--quiet"]
    try:
        os.posix_spawn(sys.executable, argv, os.environ, file_actions=actions, setsid=True)
    except OSError:
        pass   # the command still runs in-process; `tosaconv server start` reports why a server cannot


def control(what: str) -> dict[str, Any] | None:
    """Ask the server (``"status"`` or ``"stop"``): its status, or None when none runs."""
    import marshal
    if not wire.supported() or wire.private_dir_problem(wire.socket_dir()) is not None:
        return None
    sock = _connect(wire.socket_path())
    if sock is None:
        return None
    try:
        wire.send_request(sock, {"control": what})
        sock.settimeout(10.0)
        kind, _, tail = wire.recv_frame(sock)
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
    got = marshal.loads(tail) if kind == b"I" else None
    return got if isinstance(got, dict) else None
