"""The conversion server (``TOSACONV_SERVER=1``, ``tosaconv server``): a served command acts as the in-process one.

Each test compares the two ways of running one command in real processes:
``python -m tosaconv`` with ``TOSACONV_SERVER=1`` against a running server, and without it.
They must agree on the exit code, stdout and stderr (timings aside), the written bytes and the
file mode. The server's own counts show which commands it served and which it declined.
The server's socket lives in the test's temporary directory (``TOSACONV_SERVER_DIR``).
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tosaconv.serve import wire

REPO = Path(__file__).resolve().parents[2]
TFLITE = str(REPO / "sample_models" / "tflite" / "small_cnn.tflite")
ONNX = str(REPO / "sample_models" / "tiny_transformer.onnx")
TIMES = re.compile(r"\d+\.\d+ ?(s|ms)\b")   # the report's timings differ from run to run


def environment(directory: Path, served: bool, env: dict | None = None) -> dict:
    environ = {"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
               wire.DIR_ENV: str(directory), **(env or {})}
    if served:
        environ[wire.SERVER_ENV] = "1"
    return environ


def tosaconv(args: list, directory: Path, served: bool, cwd: Path | None = None, umask: int = -1,
             env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tosaconv", *args], capture_output=True, text=True,
                          env=environment(directory, served, env), cwd=cwd or REPO, umask=umask, timeout=timeout)


def status(directory: Path, env: dict | None = None, cwd: Path | None = None) -> dict:
    got = tosaconv(["server", "status", "--json"], directory, served=False, env=env, cwd=cwd)
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)


@pytest.fixture
def server(tmp_path):
    """A running server for this test's directory; stopped (and waited for) afterwards."""
    directory = tmp_path / "srv"
    started = tosaconv(["server", "start", "--idle", "300"], directory, served=False)
    assert started.returncode == 0 and "started" in started.stdout, started.stderr
    yield directory
    pid = status(directory).get("pid")
    tosaconv(["server", "stop"], directory, served=False)
    _wait_gone(pid)


def _wait_gone(pid: int | None, limit: float = 60.0) -> None:
    """Wait until process ``pid`` has ended (a zombie counts: this container's init reaps slowly)."""
    end = time.monotonic() + limit
    while pid and time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except FileNotFoundError:
            return
        if state == "Z":
            return
        time.sleep(0.02)
    assert not pid, f"process {pid} still runs"


def _same(a: subprocess.CompletedProcess, b: subprocess.CompletedProcess) -> None:
    assert (a.returncode, TIMES.sub("T", a.stdout), TIMES.sub("T", a.stderr)) == \
           (b.returncode, TIMES.sub("T", b.stdout), TIMES.sub("T", b.stderr))


def _json_same(a: subprocess.CompletedProcess, b: subprocess.CompletedProcess) -> None:
    assert a.returncode == b.returncode and a.stderr == b.stderr
    docs = [json.loads(p.stdout) for p in (a, b)]
    for doc in docs:
        doc.pop("timings", None)
    assert docs[0] == docs[1]


COMMANDS = [
    ["convert", TFLITE, "-o", "{out}/m.tosa"],
    ["convert", ONNX, "--bind", "batch=2", "--bind", "seq=16", "-o", "{out}/m.tosa", "-q"],
    ["convert", ONNX, "--bind", "batch=2", "--bind", "seq=16", "-o", "{out}/m.mlir"],
    ["convert", ONNX, "-o", "{out}/m.tosa"],                                  # unbound symbols: exit 4
    ["convert", ONNX, "--bind", "batch=0", "-o", "{out}/m.tosa"],            # a bad binding
    ["convert", str(REPO / "README.md"), "-o", "{out}/m.tosa"],              # not a model: exit 3
    ["convert", ONNX, "--bind-grid", "seq=8,16", "--bind", "batch=1", "-o", "{out}/m_{{seq}}.tosa", "--jobs", "2"],
    ["import", TFLITE, "-o", "{out}/m.tosair"],
    ["convert", "--no-such-option"],                                         # usage: exit 2
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(Path(x).name for x in a[:4]))
def test_a_served_command_acts_as_the_in_process_one(server, tmp_path, args):
    before = status(server)["served"]
    out, runs = tmp_path / "out", {}
    for served in (False, True):   # one output directory, so that both print the same paths
        out.mkdir()
        runs[served] = tosaconv([a.format(out=out) for a in args], server, served)
        out.rename(tmp_path / str(served))
    _same(runs[False], runs[True])
    direct, served_files = (sorted(p.name for p in (tmp_path / n).iterdir()) for n in ("False", "True"))
    assert direct == served_files
    for name in direct:
        assert (tmp_path / "False" / name).read_bytes() == (tmp_path / "True" / name).read_bytes()
    assert status(server)["served"] == before + 1


def test_json_reports_and_inspect_agree(server, tmp_path):
    for args in (["convert", TFLITE, "-o", str(tmp_path / "m.tosa"), "--json"], ["inspect", ONNX, "--json"]):
        _json_same(*(tosaconv(args, server, served) for served in (False, True)))
    assert status(server)["served"] == 2


def test_relative_paths_umask_and_environment_are_the_commands(server, tmp_path):
    """The worker works in the command's directory, creates files with its umask and sees its environment
    (NO_COLOR and a debug flag read by the CLI)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "m.tflite").write_bytes(Path(TFLITE).read_bytes())
    got = tosaconv(["convert", "m.tflite", "-o", "out/../m.tosa"], server, served=True, cwd=work, umask=0o027,
                   env={"NO_COLOR": "1"})
    want = tosaconv(["convert", "m.tflite", "-o", "../direct.tosa"], server, served=False, cwd=work, umask=0o027,
                    env={"NO_COLOR": "1"})
    assert got.returncode == 0 == want.returncode, got.stderr
    assert (work / "m.tosa").stat().st_mode & 0o777 == 0o640 == (tmp_path / "direct.tosa").stat().st_mode & 0o777
    assert (work / "m.tosa").read_bytes() == (tmp_path / "direct.tosa").read_bytes()
    assert status(server)["served"] == 1


def test_what_the_server_declines_runs_in_process(server, tmp_path):
    """Commands that run the interpreter, and an environment that imports read otherwise, run in-process:
    same results, counted as declined (or not sent at all)."""
    run = ["run", ONNX, "--bind", "batch=1", "--bind", "seq=4", "--random-inputs", "--json"]
    a, b = (tosaconv(run, server, served) for served in (False, True))
    _json_same(a, b)
    env = {"PYTHONWARNINGS": "ignore"}
    args, runs, written = ["convert", TFLITE, "-o", str(tmp_path / "m.tosa")], [], []
    for served in (False, True):
        runs.append(tosaconv(args, server, served, env=env))
        written.append((tmp_path / "m.tosa").read_bytes())
    _same(*runs)
    assert written[0] == written[1]
    got = status(server)
    assert (got["served"], got["declined"]) == (0, 1) and "PYTHONWARNINGS" in got["last_declined"]


def _worker_of(server_pid: int) -> int:
    """The pid of the server's one worker, once it exists."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        children = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.02)
    raise AssertionError("no worker appeared")


@pytest.mark.parametrize("how", ["interrupt the command", "kill the worker"])
def test_signals_reach_the_worker_and_its_end_reaches_the_command(server, tmp_path, how):
    """A worker blocked on reading its bindings from a FIFO: ^C to the command interrupts the worker (exit 130, as
    in-process); a worker killed by SIGKILL makes the command end by SIGKILL too. No output is left behind."""
    fifo = tmp_path / "bindings.json"
    os.mkfifo(fifo)
    command = subprocess.Popen([sys.executable, "-m", "tosaconv", "convert", ONNX, "--bindings", str(fifo), "-o",
                                str(tmp_path / "m.tosa")], env=environment(server, True), cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        worker = _worker_of(status(server)["pid"])
        time.sleep(0.3)   # the worker reaches the FIFO's open
        if how == "kill the worker":
            os.kill(worker, signal.SIGKILL)
            assert command.wait(60) == -signal.SIGKILL
        else:
            command.send_signal(signal.SIGINT)
            assert command.wait(60) == 130
        _wait_gone(worker)
        assert not (tmp_path / "m.tosa").exists()
    finally:   # a failed check leaves no process blocked on the FIFO
        if command.poll() is None:
            command.kill()
        server_pid = status(server)["pid"]
        for child in Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split():
            os.kill(int(child), signal.SIGKILL)


def test_without_a_server_the_command_runs_and_starts_one(tmp_path):
    directory = tmp_path / "srv"
    got = tosaconv(["convert", TFLITE, "-o", str(tmp_path / "m.tosa"), "-q"], directory, served=True)
    assert got.returncode == 0 and (tmp_path / "m.tosa").stat().st_size > 0, got.stderr
    end = time.monotonic() + 120
    while not status(directory)["running"] and time.monotonic() < end:
        time.sleep(0.1)
    pid = status(directory)["pid"]
    again = tosaconv(["convert", TFLITE, "-o", str(tmp_path / "n.tosa"), "-q"], directory, served=True)
    assert again.returncode == 0 and status(directory)["served"] == 1
    assert (tmp_path / "m.tosa").read_bytes() == (tmp_path / "n.tosa").read_bytes()
    tosaconv(["server", "stop", "-q"], directory, served=False)
    _wait_gone(pid)
    assert status(directory) == {"running": False, "socket": status(directory)["socket"]}


def test_a_directory_others_can_enter_is_refused(tmp_path):
    """Another user could make the socket's directory first and so receive our commands: the server refuses to
    start there (exit 2, with what to do), and a command runs in-process."""
    directory = tmp_path / "srv"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    got = tosaconv(["server", "start", "--foreground"], directory, served=False)
    assert got.returncode == 2 and "not private" in got.stderr and wire.DIR_ENV in got.stderr
    converted = tosaconv(["convert", TFLITE, "-o", str(tmp_path / "m.tosa"), "-q"], directory, served=True)
    assert converted.returncode == 0 and (tmp_path / "m.tosa").stat().st_size > 0
    assert not list(directory.glob("*.sock"))


def test_start_is_idempotent_and_stop_without_a_server_is_harmless(server):
    again = tosaconv(["server", "start"], server, served=False)
    assert again.returncode == 0 and "already running" in again.stdout
    assert tosaconv(["server", "stop"], server / "elsewhere", served=False).stdout.strip() == \
        "tosaconv server: not running"


def test_commands_at_once_get_a_worker_each(server, tmp_path):
    """``make -j``: six commands at once, each served by its own worker, all writing the in-process bytes."""
    want = tmp_path / "direct.tosa"
    assert tosaconv(["convert", TFLITE, "-o", str(want), "-q"], server, served=False).returncode == 0
    commands = [subprocess.Popen([sys.executable, "-m", "tosaconv", "convert", TFLITE, "-o", str(tmp_path / f"{i}.tosa"),
                                  "-q"], env=environment(server, True), cwd=REPO) for i in range(6)]
    assert [c.wait(300) for c in commands] == [0] * 6
    assert all((tmp_path / f"{i}.tosa").read_bytes() == want.read_bytes() for i in range(6))
    assert status(server)["served"] == 6


def test_the_readme_makefile_with_the_server_builds_the_same_files(server, tmp_path):
    """The README's Makefile under ``make -j2`` with TOSACONV_SERVER=1: every model's command is served and the
    outputs (variants and depfiles) are byte for byte those of the in-process build."""
    import shutil

    from tests.cli.test_grid import readme_makefile
    assert shutil.which("make"), "GNU make is needed to run the README's Makefile example; install make"
    built = {}
    for served in (False, True):
        work = tmp_path / str(served)
        (work / "models").mkdir(parents=True)
        for model in (ONNX, str(REPO / "sample_models" / "small_cnn.onnx")):
            shutil.copy(model, work / "models")
        (work / "models" / "small_cnn.json").write_text('{"N": 1, "W": 16}')
        (work / "Makefile").write_text(readme_makefile())
        done = subprocess.run(["make", "-j2", f"TOSACONV={sys.executable} -m tosaconv"], cwd=work,
                              env=environment(server, served), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        built[served] = {p.name: p.read_bytes() for p in (work / "out").iterdir()}
    assert len(built[True]) == 8 and built[True] == built[False]
    assert status(server)["served"] == 2


def _raw(directory: Path, data: bytes, fds: tuple = ()) -> bytes:
    """Send ``data`` (with ``fds``) to the server as a client would, then read whatever it answers."""
    import socket
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(next(directory.glob("*.sock"))))
        sock.settimeout(30)
        if fds:
            sock.sendmsg([data[:1]], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array_of(fds))])
            data = data[1:]
        parts = []
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            while part := sock.recv(4096):
                parts.append(part)
        except (ConnectionResetError, BrokenPipeError):   # the server hung up on a request it refused
            pass
        return b"".join(parts)


def array_of(fds: tuple) -> bytes:
    import struct
    return struct.pack(f"{len(fds)}i", *fds)


def _framed(payload: bytes) -> bytes:
    return wire.LENGTH.pack(len(payload)) + payload


@pytest.mark.parametrize("data", [
    b"", b"\x00", b"\xff\xff\xff\xff", _framed(b"not marshal"), _framed(b"\x00" * 5),
    _framed(__import__("marshal").dumps([1, 2])), _framed(__import__("marshal").dumps({"argv": "convert"})),
    _framed(__import__("marshal").dumps({"argv": ["convert", "x.onnx", "-o", "x.tosa"]})),
    _framed(__import__("marshal").dumps({"argv": ["convert"], "identity": 3, "env": None})),
    _framed(__import__("marshal").dumps({"control": "no such thing"}))[:-2],
], ids=["empty", "short", "huge length", "not marshal", "zeros", "list", "argv str", "no fields", "wrong types",
        "truncated"])
def test_a_malformed_request_gets_no_worker_and_the_server_lives_on(server, tmp_path, data):
    """Nothing a client sends makes the server fork a worker for it or stop: the next command is served."""
    answer = _raw(server, data, fds=(0, 1, 2) if len(data) > 4 else ())
    assert answer == b"" or answer[:1] == b"F", answer
    assert status(server)["served"] == 0
    good = tosaconv(["convert", TFLITE, "-o", str(tmp_path / "m.tosa"), "-q"], server, served=True)
    assert good.returncode == 0 and status(server)["served"] == 1


def test_an_idle_server_stops(tmp_path):
    directory = tmp_path / "srv"
    assert tosaconv(["server", "start", "--idle", "1", "-q"], directory, served=False).returncode == 0
    pid = status(directory)["pid"]
    _wait_gone(pid, limit=60)
    assert not status(directory)["running"] and not list(directory.glob("*.sock"))


def test_an_upgraded_installation_is_not_served_by_the_old_server(tmp_path):
    """tosaconv's files change under a running server (an upgrade, an edit): the next command runs in-process with
    the new files, and the server stops."""
    import shutil
    copy = tmp_path / "site"
    shutil.copytree(REPO / "tosaconv", copy / "tosaconv", ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PYTHONPATH": str(copy)}
    directory = tmp_path / "srv"
    assert tosaconv(["server", "start", "-q"], directory, served=False, env=env, cwd=tmp_path).returncode == 0
    pid = status(directory, env, cwd=tmp_path)["pid"]
    source = copy / "tosaconv" / "emit" / "writer.py"
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10**9))
    got = tosaconv(["convert", TFLITE, "-o", str(tmp_path / "m.tosa"), "-q"], directory, served=True, env=env,
                   cwd=tmp_path)   # not the repository, whose tosaconv `python -m` would import first
    assert got.returncode == 0 and (tmp_path / "m.tosa").stat().st_size > 0, got.stderr
    _wait_gone(pid)


def test_random_bytes_never_get_a_worker_or_stop_the_server(server):
    """Property-based: whatever bytes arrive (a length prefix and a marshal body of random content, or raw noise),
    the server forks no worker and answers the next status."""
    import marshal

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    bodies = st.one_of(st.binary(max_size=64),
                       st.dictionaries(st.sampled_from(["argv", "env", "cwd", "identity", "control", "umask",
                                                        "limits", "encodings", "path0"]),
                                       st.one_of(st.none(), st.integers(), st.text(max_size=8),
                                                 st.lists(st.text(max_size=8), max_size=3)), max_size=9)
                       .filter(lambda d: d.get("control") != "stop")   # that one is a real request
                       .map(lambda d: _framed(marshal.dumps(d))))

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(bodies)
    def check(data):
        answer = _raw(server, data)
        assert answer == b"" or answer[:1] in (b"F", b"I")
    check()
    got = status(server)
    assert got["served"] == 0 and got["pid"] > 0


def test_the_started_server_imports_the_tosaconv_its_command_imported(tmp_path):
    """A console script run in a directory holding another ``tosaconv`` package (a source checkout): the server it
    starts must import the script's tosaconv, not the directory's, or it would never serve the script."""
    script = tmp_path / "bin" / "tosaconv"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\nfrom tosaconv.__main__ import run\nrun()\n")
    script.chmod(0o755)
    work = tmp_path / "checkout"
    (work / "tosaconv").mkdir(parents=True)
    (work / "tosaconv" / "__init__.py").write_text("raise ImportError('the checkout, not the installed tosaconv')\n")
    directory = tmp_path / "srv"
    env = environment(directory, True)
    for name in ("a", "b"):
        got = subprocess.run([str(script), "convert", TFLITE, "-o", str(tmp_path / f"{name}.tosa"), "-q"], cwd=work,
                             env=env, capture_output=True, text=True, timeout=300)
        assert got.returncode == 0, got.stderr
        end = time.monotonic() + 120
        while name == "a" and not status(directory)["running"] and time.monotonic() < end:
            time.sleep(0.1)
    got = status(directory)
    assert got["served"] == 1, got
    tosaconv(["server", "stop", "-q"], directory, served=False)
    _wait_gone(got["pid"])
