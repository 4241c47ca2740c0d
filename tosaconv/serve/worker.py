"""The forked worker: become the command's process, run its command line, report the exit code.

Between the fork and the first byte of output the worker takes on the command's state:

- default signal handling;
- the command's resource limits;
- its working directory, umask and environment;
- its stdin, stdout and stderr, with their encodings.

Only then does it tell the client it runs (``R``). A setup step that fails (a working
directory gone, a limit the server cannot give) answers ``F`` instead, and the
command runs in-process. The exit code goes back as ``X``. How a killed worker
ended, the server reports.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from . import wire

if TYPE_CHECKING:
    import socket

Runner = Callable[[list[str]], int]


def become_and_run(conn: socket.socket, fds: list[int], request: dict[str, Any], run: Runner,
                   inherited: list[int]) -> NoReturn:
    """In the forked child: serve ``request`` on ``conn`` and exit with its code (never returns)."""
    try:
        _take_over(fds, request, inherited)
    except (OSError, ValueError, TypeError, KeyError) as e:
        _send(conn, b"F", 0, f"the worker could not take the command's state: {type(e).__name__}: {e}".encode())
        os._exit(0)
    _send(conn, b"R", os.getpid())
    code = _run(run, request["argv"])
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a reader that went away (``tosaconv ... | head``)
            pass
    _send(conn, b"X", code)
    os._exit(code)


def _send(conn: socket.socket, kind: bytes, value: int, tail: bytes = b"") -> None:
    try:
        wire.send_frame(conn, kind, value, tail)
    except OSError:
        pass   # the client went away; the command's files are written (or not) all the same


def _run(run: Runner, argv: list[str]) -> int:
    """The command's exit code, as ``python -m tosaconv`` would exit."""
    try:
        code = run(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except KeyboardInterrupt:
        code = 130
    except BaseException:   # the command line reports its own errors; this is a last resort
        import traceback
        traceback.print_exc()
        code = 1
    return int(code or 0) & 0xFF


def _take_over(fds: list[int], request: dict[str, Any], inherited: list[int]) -> None:
    """Make this process the command's (see the module docstring)."""
    import signal
    signal.set_wakeup_fd(-1)
    for signum in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for fd in inherited:
        _close(fd)
    _take_limits(request["limits"])
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    _environment_changed()
    _take_streams(fds, request["encodings"])
    sys.argv = ["tosaconv", *request["argv"]]
    sys.path[0] = request["path0"]   # the script's directory, or the working directory under `python -m`


def _take_limits(limits: dict[str, tuple[int, int]]) -> None:
    """The command's resource limits; ValueError when its hard limit is above ours (we cannot raise it)."""
    import resource
    for name, (soft, hard) in limits.items():
        which = getattr(resource, name, None)
        if which is None:
            continue
        if _above(hard, resource.getrlimit(which)[1]):
            raise ValueError(f"{name} hard limit {hard} is above the server's")
        resource.setrlimit(which, (soft, hard))


def _above(a: int, b: int) -> bool:
    """``a > b`` for resource limits, where RLIM_INFINITY is the largest."""
    import resource
    infinity = resource.RLIM_INFINITY
    return a != b and (a == infinity or (b != infinity and a > b))


def _environment_changed() -> None:
    """What the standard library derived from the server's environment: the time zone, the temp directory."""
    import time
    time.tzset()
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None:
        tempfile.tempdir = None   # type: ignore[attr-defined]


def _take_streams(fds: list[int], encodings: list[tuple[str, str] | None]) -> None:
    """The command's stdin, stdout and stderr, with its encodings (stdout line-buffered on a terminal)."""
    if len(fds) != len(wire.STREAMS):
        raise ValueError(f"{len(fds)} standard streams passed, not {len(wire.STREAMS)}")
    for fd, target in zip(fds, wire.STREAMS):
        os.dup2(fd, target)
        if fd not in wire.STREAMS:
            _close(fd)
    names = ("stdin", "stdout", "stderr")
    for target, name, encoding in zip(wire.STREAMS, names, encodings):
        if encoding is None:
            setattr(sys, name, None)
            continue
        line = name == "stderr" or (name == "stdout" and os.isatty(target))
        setattr(sys, name, open(target, "r" if target == 0 else "w", encoding=encoding[0], errors=encoding[1],
                                closefd=False, buffering=1 if line else -1))


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
