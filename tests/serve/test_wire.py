"""The conversion server's shared rules (tosaconv.serve.wire), its staleness check and its warm-up.

The socket's directory must be private to the user, only commands that run no interpreter are
served, the environment that imports read must match, and the server's identity ignores
``sys.path[0]`` (the working directory under ``python -m``). A changed source file makes the
server stale. After the warm-up, a conversion imports nothing more of tosaconv or tflite.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tosaconv import records
from tosaconv.serve import wire
from tosaconv.serve.server import fingerprint

REPO = Path(__file__).resolve().parents[2]


def test_only_a_private_directory_may_hold_the_socket(tmp_path):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o755)
    (tmp_path / "file").write_text("")
    (tmp_path / "link").symlink_to(private)
    assert wire.private_dir_problem(str(private)) is None
    assert wire.private_dir_problem(str(tmp_path / "missing")) == wire.MISSING
    assert "lets others in" in wire.private_dir_problem(str(open_dir))
    assert "not a directory" in wire.private_dir_problem(str(tmp_path / "file"))
    assert "not a directory" in wire.private_dir_problem(str(tmp_path / "link"))   # a link could be swapped


@pytest.mark.parametrize("argv, servable", [
    (["convert", "m.onnx", "-o", "m.tosa"], True), (["--debug", "convert", "m.tflite", "-o", "m.tosa"], True),
    (["inspect", "m.onnx"], True), (["import", "m.onnx", "-o", "m.tosair"], True), (["ops"], True),
    (["convert", "m.onnx", "-o", "m.tosa", "--run"], False), (["convert", "m.onnx", "--outputs=o.npz"], False),
    (["run", "m.onnx"], False), (["server", "start"], False), ([], False), (["--version"], False)])
def test_only_commands_that_run_no_interpreter_are_served(argv, servable):
    assert wire.runs_no_interpreter(argv) is servable


def test_the_environment_imports_read_is_compared_with_blas_threads_as_tosaconv_sets_them():
    assert wire.import_env({}) == wire.import_env({"OPENBLAS_NUM_THREADS": "1", "HOME": "/x", "TERM": "dumb"})
    assert wire.import_env({}) != wire.import_env({"OPENBLAS_NUM_THREADS": "2"})
    assert wire.import_env({}) != wire.import_env({"PYTHONPATH": "/elsewhere"})
    assert wire.import_env({}) != wire.import_env({"LC_ALL": "C"})


def test_the_identity_ignores_the_script_or_working_directory_but_not_the_module_path(monkeypatch):
    base = wire.identity()
    monkeypatch.setattr(sys, "path", ["/some/cwd", *sys.path[1:]])
    assert wire.identity() == base
    monkeypatch.setattr(sys, "path", [sys.path[0], "/another/site", *sys.path[1:]])
    assert wire.identity() != base


def test_a_changed_added_or_touched_source_file_changes_the_fingerprint(tmp_path):
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    source = tmp_path / "pkg" / "a.py"
    source.write_text("x = 1\n")
    first = fingerprint(str(tmp_path))
    (tmp_path / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"compiled")
    assert fingerprint(str(tmp_path)) == first   # bytecode is not source
    os.utime(source, ns=(1, 1))
    touched = fingerprint(str(tmp_path))
    assert touched != first
    (tmp_path / "pkg" / "table.json").write_text("{}")
    assert fingerprint(str(tmp_path)) != touched


def test_compile_waiting_compiles_the_lazy_initializers_and_keeps_their_behaviour():
    @records.dataclass(frozen=True)
    class Pair:
        a: int
        b: list = dataclasses.field(default_factory=list)

    assert getattr(Pair.__dict__["__init__"], "__record_lazy__", False)
    assert records.compile_waiting() >= 1
    assert not getattr(Pair.__dict__["__init__"], "__record_lazy__", False)
    assert Pair(1) == Pair(1, []) != Pair(2) and Pair(1, [3]).b == [3]


WARM_PROBE = """
import json, sys
from tosaconv.cli.server import warm_up, _run_command
warm_up()
before = set(sys.modules)
codes = [_run_command(a) for a in {commands!r}]
print(json.dumps([codes, sorted(m for m in set(sys.modules) - before if m.split('.')[0] in ('tosaconv', 'tflite'))]))
"""


def test_after_the_warm_up_a_conversion_imports_nothing_more_of_ours(tmp_path):
    """The server imports once what its workers would otherwise import each time."""
    commands = [["convert", str(REPO / "sample_models/tflite/small_cnn.tflite"), "-o", str(tmp_path / "a.tosa"), "-q"],
                ["convert", str(REPO / "sample_models/tiny_transformer.onnx"), "--bind", "batch=1", "--bind", "seq=8",
                 "-o", str(tmp_path / "b.tosa")],
                ["inspect", str(REPO / "sample_models/tiny_transformer.onnx"), "--json"]]
    proc = subprocess.run([sys.executable, "-c", WARM_PROBE.format(commands=commands)], capture_output=True,
                          text=True, cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=300)
    codes, new = json.loads(proc.stdout.strip().splitlines()[-1])
    assert codes == [0, 0, 0] and new == [], proc.stderr
