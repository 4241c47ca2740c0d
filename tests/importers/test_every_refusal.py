"""A model with several refused ops reports every one of them in one run (issue 11's done-when).

A refusal does not stop the walk over the graph: each op that does not read
a refused op's results is still tried, and each one refused gets its own
diagnostic; an op downstream of a refusal is counted in a note, not tried.
"""
from __future__ import annotations

import numpy as np
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from tosaconv.cli import cli
from tosaconv.importers.tflite.builder import ModelBuilder


def _onnx_model() -> bytes:
    nodes = [helper.make_node("Expand", ["x", "s"], ["e"], name="ex"),
             helper.make_node("Gelu", ["x"], ["g"], name="gelu", approximate="weird"),
             helper.make_node("Abs", ["x"], ["a"], name="fine"),
             helper.make_node("Mod", ["a", "a"], ["m"], name="mod", fmod=0),
             helper.make_node("Concat", ["e", "g", "m"], ["y"], name="cat", axis=0)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array([0, 3], np.int64), "s")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]).SerializeToString()


def _tflite_model() -> bytes:
    m = ModelBuilder()
    x = m.input("x", [1, 4], "FLOAT32")
    a, b, c = (m.tensor(n, [1, 4], "FLOAT32") for n in ("a", "b", "c"))
    m.op("ADD", [x, x], [a], "AddOptions", FusedActivationFunction=9)     # no such activation
    m.op("MUL", [x, x], [b], "MulOptions", FusedActivationFunction=9)
    m.op("SUB", [a, b], [c], "SubOptions")                               # reads both: not tried
    m.output(c)
    return m.finish()


def _run(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return CliRunner().invoke(cli, ["convert", str(path), "-o", str(tmp_path / "m.tosa")])


def test_an_onnx_model_lists_every_refused_node(tmp_path):
    result = _run(tmp_path, "m.onnx", _onnx_model())
    assert result.exit_code == 3, result.output
    text = result.output
    for fragment in ("cannot convert Expand 'ex'", "cannot convert Gelu 'gelu'", "cannot convert Mod 'mod'",
                     "1 later op(s) that read the refused ops' results were not tried"):
        assert fragment in text
    assert "Concat 'cat'" not in text and "Traceback" not in text
    assert not (tmp_path / "m.tosa").exists()


def test_a_tflite_model_lists_every_refused_op(tmp_path):
    result = _run(tmp_path, "m.tflite", _tflite_model())
    assert result.exit_code == 3, result.output
    assert result.output.count("fused activation") == 2
    assert "ADD" in result.output and "MUL" in result.output
    assert "1 later op(s) that read the refused ops' results were not tried" in result.output
