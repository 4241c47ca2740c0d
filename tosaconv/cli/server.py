"""``tosaconv server start|stop|status``: the conversion server that ``TOSACONV_SERVER=1`` commands use.

``start`` runs a server in the background, detached from the terminal and the build. It
returns once the server listens. ``--foreground`` keeps it in this process, for a service
manager. ``stop`` asks the server to stop after its running commands. ``status`` shows its
pid, uptime and counts, or that none runs; with ``--json`` it prints one JSON document.
The design is in :mod:`tosaconv.serve`.
"""
from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import click

from ..diagnostics import EXIT_USAGE
from ..serve import client, wire

# The server imports once what commands import: every module of these packages (tflite's generated
# accessors included), and these. Its workers then start from a process that has all of them.
WARM_PACKAGES = ("tosaconv", "tflite")
WARM_MODULES = ("numpy", "onnx", "rich.console", "rich.table", "rich.progress", "rich.text", "difflib")
STOP_TIMEOUT = 60.0   # seconds `stop` waits for the server to stop listening


@click.group("server")
def server() -> None:
    """Start, stop or query the conversion server that TOSACONV_SERVER=1 commands use."""


@server.command("start")
@click.option("--idle", type=click.IntRange(1, 7 * 24 * 3600), default=600, show_default=True,
              help="Stop after this many seconds without a command.")
@click.option("--foreground", is_flag=True, help="Run in this process (for a service manager).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on success.")
def start(idle: int, foreground: bool, quiet: bool) -> int:
    """Start the server (nothing to do when one runs)."""
    if not wire.supported():
        click.echo("tosaconv server: needs unix sockets with peer credentials (Linux); commands run in-process",
                   err=True)
        return EXIT_USAGE
    running = client.control("status")
    if running is not None:
        _say(quiet, f"tosaconv server: already running (pid {running['pid']}, socket {running['socket']})")
        return 0
    return _foreground(idle, quiet) if foreground else _background(idle, quiet)


@server.command("stop")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing.")
def stop(quiet: bool) -> int:
    """Stop the server once its running commands end."""
    got = client.control("stop")
    if got is None:
        _say(quiet, "tosaconv server: not running")
        return 0
    end = time.monotonic() + STOP_TIMEOUT
    while os.path.exists(got["socket"]) and time.monotonic() < end:   # it removes its socket as it stops
        time.sleep(0.01)
    _say(quiet, f"tosaconv server: stopped (pid {got['pid']}; running commands finish)")
    return 0


@server.command("status")
@click.option("--json", "json_mode", is_flag=True, help="Print one JSON document.")
def status(json_mode: bool) -> int:
    """Show whether a server runs for this tosaconv, with its pid, uptime and counts."""
    got = client.control("status")
    doc = {"running": got is not None, "socket": wire.socket_path(), **(got or {})}
    if json_mode:
        click.echo(json.dumps(doc, indent=2, sort_keys=True))
    elif got is None:
        click.echo(f"tosaconv server: not running (socket {doc['socket']})")
    else:
        click.echo("\n".join(f"{key}: {doc[key]}" for key in sorted(doc)))
    return 0


def _say(quiet: bool, text: str) -> None:
    if not quiet:
        click.echo(text)


def _run_command(argv: list[str]) -> int:
    """A served command, run as ``python -m tosaconv`` runs it."""
    from . import cli
    return int(cli.main(argv, prog_name="tosaconv", standalone_mode=False) or 0)


def warm_up() -> None:
    """Import what commands use (see WARM_PACKAGES) and compile what their first use would compile."""
    import importlib

    from .. import records
    for name in WARM_MODULES:
        importlib.import_module(name)
    for package in WARM_PACKAGES:
        for name in _modules_under(package):
            if not name.startswith(("tosaconv.__main__", "tosaconv.serve")):
                importlib.import_module(name)
    records.compile_waiting()


def _modules_under(package: str) -> list[str]:
    """Every module of ``package`` found on disk (pkgutil skips ``importers/onnx``, a namespace package)."""
    import importlib
    root = os.path.dirname(importlib.import_module(package).__file__ or "")
    names = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        relative = os.path.relpath(directory, root)
        prefix = ".".join([package, *([] if relative == "." else relative.split(os.sep))])
        names += [f"{prefix}.{f[:-3]}" if f != "__init__.py" else prefix for f in sorted(files) if f.endswith(".py")]
    return names


def _failure(e: Exception) -> tuple[int, str]:
    """The exit code and message of a server that could not run: usage (2) when it says why (ServerError),
    else an internal error (1) named by its type."""
    from ..serve.server import ServerError
    if isinstance(e, ServerError):
        return EXIT_USAGE, str(e)
    return 1, f"{type(e).__name__}: {e}"


def _foreground(idle: int, quiet: bool) -> int:
    from ..serve.server import serve

    def ready(stats: dict[str, Any]) -> None:
        _say(quiet, f"tosaconv server: listening on {stats['socket']} (pid {stats['pid']})")
        sys.stdout.flush()
    try:
        if not serve(_run_command, warm_up, idle, ready):
            _say(quiet, "tosaconv server: already running")
    except Exception as e:   # ServerError and what importing the modules could raise
        code, text = _failure(e)
        click.echo(f"tosaconv server: {text}", err=True)
        return code
    return 0


def _background(idle: int, quiet: bool) -> int:
    """Fork a detached server (own session, /dev/null for stdio); return once it listens or failed."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        _daemon(idle, write)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read().decode(errors="replace")   # the daemon closes it once listening or failed
    kind, _, text = said.partition(":")
    if kind == "ok":
        _say(quiet, f"tosaconv server: started ({text})")
        return 0
    if kind == "running":
        _say(quiet, "tosaconv server: already running")
        return 0
    click.echo(f"tosaconv server: {text or 'the server ended before it listened'}", err=True)
    return EXIT_USAGE if kind == "usage" else 1


def _daemon(idle: int, write: int) -> None:
    """The forked child: detach twice, then serve; tell the starter through ``write``. Never returns."""
    os.setsid()
    if os.fork():
        os._exit(0)
    os.chdir("/")   # pin no directory (a mount, a build tree being deleted); workers take their command's
    null = os.open(os.devnull, os.O_RDWR)
    for fd in wire.STREAMS:
        os.dup2(null, fd)
    os.closerange(3, write)
    os.closerange(write + 1, os.sysconf("SC_OPEN_MAX"))
    from ..serve.server import serve

    def ready(stats: dict[str, Any]) -> None:
        os.write(write, f"ok:pid {stats['pid']}, socket {stats['socket']}".encode())
        os.close(write)
    code = 0
    try:
        if not serve(_run_command, warm_up, idle, ready):
            os.write(write, b"running:")
    except Exception as e:
        code, text = _failure(e)
        try:
            os.write(write, f"{'usage' if code == EXIT_USAGE else 'error'}:{text}".encode())
        except OSError:
            pass
    os._exit(code)
