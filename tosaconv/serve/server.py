"""The server process: warm up once, then accept commands and fork a worker for each.

:func:`serve` claims the socket (a lock file makes one server per socket), imports the
modules that commands use and freezes them out of the collector's way, then listens.
It accepts a connection only from its own uid. A command it may serve gets a fresh
fork (:mod:`.worker`). It declines a command that runs the numpy interpreter, or whose
environment differs in what imports read, or that arrives after tosaconv's own files
changed (the server then stops, and the next command starts a new one). When a worker
is killed, the server tells the client which signal killed it. The server stops when
asked (``tosaconv server stop``, SIGTERM, SIGINT) and after ``idle`` seconds without a
command. Either way it lets running workers finish, then removes its socket.
"""
from __future__ import annotations

import fcntl
import gc
import marshal
import os
import selectors
import signal
import socket
import time
from collections.abc import Callable
from typing import Any

from .. import __version__
from . import wire, worker


class ServerError(Exception):
    """The server cannot run (the socket's directory is not private, the socket cannot be made)."""


def ensure_private_dir(path: str) -> None:
    """Make the socket's directory (0700) when missing, and refuse one that others could enter."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as e:
        raise ServerError(f"cannot make the server's directory '{path}': {e.strerror}") from None
    problem = wire.private_dir_problem(path)
    if problem:
        raise ServerError(f"the server's directory '{path}' is not private: {problem}; remove it, or set "
                          f"{wire.DIR_ENV} to a directory only you can enter")


def claim(path: str) -> int | None:
    """The lock of the socket at ``path`` (held for the server's life), or None when a server holds it."""
    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def fingerprint(root: str) -> int:
    """A hash of the name, size and mtime of every source and data file under ``root``."""
    found = []
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                elif entry.name.endswith((".py", ".json")):
                    st = entry.stat()
                    found.append((entry.path, st.st_size, st.st_mtime_ns))
    return hash(tuple(sorted(found)))


class Server:
    """The accept loop and its workers (see the module docstring)."""

    def __init__(self, run: worker.Runner, idle: float, path: str, lock: int):
        self.run, self.idle, self.path, self.lock = run, idle, path, lock
        self.package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.identity, self.env = wire.identity(), wire.import_env(dict(os.environ))
        self.files = fingerprint(self.package)
        self.workers: dict[int, socket.socket] = {}
        self.started = time.time()
        self.served = self.declined = 0
        self.last_declined = self.last_error = ""
        self.stopping = False

    def status(self) -> dict[str, Any]:
        """What ``tosaconv server status`` shows."""
        return {"pid": os.getpid(), "socket": self.path, "version": __version__, "idle_seconds": self.idle,
                "uptime_seconds": round(time.time() - self.started, 1), "served": self.served,
                "declined": self.declined, "last_declined": self.last_declined, "last_error": self.last_error,
                "workers": len(self.workers), "stopping": self.stopping}

    def listen(self) -> None:
        """Bind the socket (a stale one from a dead server is replaced: we hold the lock)."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.listener.bind(self.path)
            os.chmod(self.path, 0o600)
            self.listener.listen(128)
        except OSError as e:
            raise ServerError(f"cannot listen on '{self.path}': {e.strerror}") from None
        self.inode = os.stat(self.path).st_ino

    def loop(self) -> None:
        """Accept commands until stopped or idle, then let the workers finish."""
        selector = selectors.DefaultSelector()
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.private = [self.listener.fileno(), wake_r, wake_w, self.lock, selector.fileno()]
        selector.register(self.listener, selectors.EVENT_READ)
        selector.register(wake_r, selectors.EVENT_READ)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)   # a handler, so that SIGCHLD writes to the wake pipe
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, self._stop)
        last = time.monotonic()
        while not self.stopping:
            timeout = None if self.workers else max(0.0, last + self.idle - time.monotonic())
            events = selector.select(timeout)
            _drain(wake_r)
            if self.reap():
                last = time.monotonic()
            if any(key.fileobj is self.listener for key, _ in events):
                self.accept()
                last = time.monotonic()
            elif not events and not self.workers and time.monotonic() - last >= self.idle:
                break
        self.close(selector)

    def _stop(self, signum: int, frame: object) -> None:
        self.stopping = True

    def accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        try:
            self.handle(conn)
        except Exception as e:   # a server outlives any one bad request
            self.last_error = f"{type(e).__name__}: {e}"
            conn.close()

    def handle(self, conn: socket.socket) -> None:
        """Read one request; answer a control request, decline, or fork its worker."""
        conn.settimeout(5.0)
        fds: list[int] = []
        try:
            if wire.peer_uid(conn) != os.getuid():
                raise ValueError("a connection from another user")
            request, fds = wire.recv_request(conn)
            if "control" in request:
                return self.control(conn, request["control"])
            reason = self.decline(request)
            if reason:
                self.declined += 1
                self.last_declined = reason
                return wire.send_frame(conn, b"F", 0, reason.encode())
            conn.settimeout(None)
            self.fork(conn, fds, request)
            conn = None   # type: ignore[assignment]   # kept for the worker's end
        except (OSError, ValueError, EOFError, TypeError, KeyError):
            pass
        finally:
            for fd in fds:
                os.close(fd)
            if conn is not None:
                conn.close()

    def decline(self, request: dict[str, Any]) -> str:
        """Why the command must run in-process instead, or ''."""
        argv = request["argv"]
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
            raise ValueError("argv is not a list of strings")
        if request.get("identity") != self.identity:
            return "the command runs another tosaconv or interpreter"
        if not wire.runs_no_interpreter(argv):
            return f"'{wire.command_of(argv)}' runs the numpy interpreter, which the server does not serve"
        differ = _differences(wire.import_env(request["env"]), self.env)
        if differ:
            return f"the command's environment sets {', '.join(differ)} otherwise than the server's"
        if fingerprint(self.package) != self.files:
            self.stopping = True
            return f"tosaconv's files under {self.package} changed since the server started; it stops"
        return ""

    def fork(self, conn: socket.socket, fds: list[int], request: dict[str, Any]) -> None:
        pid = os.fork()
        if pid == 0:
            try:
                inherited = self.private + [c.fileno() for c in self.workers.values()]
                worker.become_and_run(conn, fds, request, self.run, inherited)
            finally:
                os._exit(1)   # never back into the server's loop
        self.workers[pid] = conn
        self.served += 1

    def reap(self) -> bool:
        """Collect the workers that ended; whether any did."""
        ended = False
        while self.workers:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            ended = True
            self._ended(pid, status)
        return ended

    def _ended(self, pid: int, status: int) -> None:
        """Tell a worker's client how it ended: the signal that killed it, else its exit code (which the worker
        has sent too, unless it died before)."""
        conn = self.workers.pop(pid, None)
        if conn is None:
            return
        ending = (b"S", os.WTERMSIG(status)) if os.WIFSIGNALED(status) else (b"X", os.waitstatus_to_exitcode(status))
        try:
            wire.send_frame(conn, *ending)
        except OSError:
            pass
        conn.close()

    def control(self, conn: socket.socket, what: object) -> None:
        if what == "stop":
            self.stopping = True
        wire.send_frame(conn, b"I", 0, marshal.dumps(self.status()))

    def close(self, selector: selectors.BaseSelector) -> None:
        """Stop listening (removing our socket, not a newer server's), then wait for the workers."""
        selector.close()
        try:
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        except FileNotFoundError:
            pass
        self.listener.close()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        while self.workers:
            self._wait_one()
        os.close(self.lock)

    def _wait_one(self) -> None:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            self.workers.clear()
            return
        except InterruptedError:
            return
        self._ended(pid, status)


def _differences(got: tuple[tuple[str, str], ...], ours: tuple[tuple[str, str], ...]) -> list[str]:
    """Names of the variables set differently in two :func:`wire.import_env` results."""
    a, b = dict(got), dict(ours)
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def serve(run: worker.Runner, warm: Callable[[], None], idle: float, ready: Callable[[dict[str, Any]], None]) -> bool:
    """Run a server until it stops; False when another server already holds the socket. ``warm`` imports
    what commands use; ``ready`` gets the server's status once it listens. Raises ServerError when it
    cannot run."""
    directory = wire.socket_dir()
    ensure_private_dir(directory)
    path = wire.socket_path()
    lock = claim(path)
    if lock is None:
        return False
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # as `python -m tosaconv` for the commands served
    warm()
    server = Server(run, idle, path, lock)
    server.listen()
    gc.collect()
    gc.freeze()   # what start-up made lives as long as the server: keep the workers' collections off it
    ready(server.status())
    server.loop()
    return True
