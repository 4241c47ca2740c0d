"""Fixtures for the command-line tests: small ONNX models built here, and a runner.

Every model is made with ``onnx.helper`` in this file (IR version 10, opset
17, which onnxruntime accepts), written to the test's temporary directory.
``cli`` runs a command in-process through click's CliRunner and returns the
result with separate ``stdout`` and ``stderr``; ``run_module`` runs
``python -m tosaconv`` in a subprocess for the real process exit code.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from tosaconv.cli import cli as tosaconv_cli

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "schemas"


def save_model(path: Path, nodes, inputs, outputs, initializers=()) -> Path:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    onnx.save(model, str(path))
    return path


def tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


@pytest.fixture
def symbolic_model(tmp_path) -> Path:
    """y = relu(x + bias), x: [batch, seq, 4]."""
    bias = numpy_helper.from_array(np.array([-0.2, -0.1, 0.0, 0.1], np.float32), "bias")
    nodes = [helper.make_node("Add", ["x", "bias"], ["s"], name="add0"),
             helper.make_node("Relu", ["s"], ["y"], name="relu0")]
    return save_model(tmp_path / "sym.onnx", nodes, [tensor("x", ["batch", "seq", 4])], [tensor("y", None)], [bias])


@pytest.fixture
def broadcast_model(tmp_path) -> Path:
    """c = a + b with a: [n, 3], b: [m, 3] (the ledger gets broadcastable(n, m))."""
    nodes = [helper.make_node("Add", ["a", "b"], ["c"], name="add0")]
    return save_model(tmp_path / "bcast.onnx", nodes, [tensor("a", ["n", 3]), tensor("b", ["m", 3])],
                      [tensor("c", None)])


@pytest.fixture
def static_mismatch_model(tmp_path) -> Path:
    """<2x3> + <4x3>: can never broadcast."""
    nodes = [helper.make_node("Add", ["a", "b"], ["c"], name="add0")]
    return save_model(tmp_path / "mismatch.onnx", nodes, [tensor("a", [2, 3]), tensor("b", [4, 3])],
                      [tensor("c", None)])


@pytest.fixture
def unsupported_model(tmp_path) -> Path:
    """Two Det nodes and one Multinomial: ops tosaconv does not convert."""
    nodes = [helper.make_node("Det", ["x"], ["d1"], name="det_a"),
             helper.make_node("Det", ["x"], ["d2"], name="det_b"),
             helper.make_node("Multinomial", ["p"], ["s"], name="mn0")]
    outputs = [tensor("d1", None), tensor("d2", None), tensor("s", None, TensorProto.INT32)]
    return save_model(tmp_path / "unsupported.onnx", nodes, [tensor("x", [2, 3, 3]), tensor("p", [1, 3])], outputs)


class Result:
    def __init__(self, exit_code: int, stdout: str, stderr: str, exception=None):
        self.exit_code, self.stdout, self.stderr, self.exception = exit_code, stdout, stderr, exception

    def __repr__(self):
        return f"exit {self.exit_code}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """Run ``tosaconv ARGS...`` in-process, in the test's temporary directory."""
    monkeypatch.chdir(tmp_path)

    def invoke(*args, env=None) -> Result:
        r = CliRunner().invoke(tosaconv_cli, [str(a) for a in args], env=env, catch_exceptions=True)
        exc = r.exception if not isinstance(r.exception, SystemExit) else None
        return Result(r.exit_code, r.stdout, r.stderr, exc)
    return invoke


@pytest.fixture
def run_module(tmp_path):
    """Run ``python -m tosaconv ARGS...`` in a subprocess, in the test's temporary directory."""
    def invoke(*args, env=None) -> Result:
        full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
        p = subprocess.run([sys.executable, "-m", "tosaconv", *map(str, args)], cwd=tmp_path,
                           capture_output=True, text=True, env=full_env, timeout=300)
        return Result(p.returncode, p.stdout, p.stderr)
    return invoke
