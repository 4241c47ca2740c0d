"""Seed inputs for the fuzzer: the sample models, small one-op models built here, and derived files.

Each :class:`Seed` holds the bytes of one valid input and the command lines
that exercise it (``{dir}`` is the case directory, ``{in}`` the mutated
file). The ``.tosa`` and ``.tosair`` seeds are made once per process by
converting sample models with tosaconv itself; they are valid inputs whose
bytes the mutators then damage.
"""
from __future__ import annotations

import functools
import io
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_models"
RUN = ["run", "{in}", "-o", "{dir}/out.npz"]
CONVERT = ["convert", "{in}", "-o", "{dir}/out.tosa", "--ir", "{dir}/out.tosair", "--report", "{dir}/r.json"]
INSPECT = ["inspect", "{in}"]


@dataclass(frozen=True)
class Seed:
    name: str
    suffix: str
    data: bytes
    commands: tuple   # tuple of argument lists


def _onnx_bytes(nodes, inputs, outputs, inits=(), opset=17) -> bytes:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model.SerializeToString()


def _t(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def _one_op_models() -> dict:
    f32 = lambda name, a: numpy_helper.from_array(np.asarray(a, np.float32), name)  # noqa: E731
    i64 = lambda name, a: numpy_helper.from_array(np.asarray(a, np.int64), name)    # noqa: E731
    node = helper.make_node
    return {
        "add": _onnx_bytes([node("Add", ["x", "b"], ["y"], name="add")], [_t("x", [2, 3])], [_t("y", None)],
                           [f32("b", [1, 2, 3])]),
        "matmul": _onnx_bytes([node("MatMul", ["x", "w"], ["y"], name="mm")], [_t("x", ["n", 4])],
                              [_t("y", None)], [f32("w", np.ones((4, 3)))]),
        "reshape": _onnx_bytes([node("Reshape", ["x", "s"], ["y"], name="rs")], [_t("x", [2, 6])],
                               [_t("y", None)], [i64("s", [3, -1])]),
        "unsqueeze": _onnx_bytes([node("Unsqueeze", ["x", "a"], ["y"], name="uq")], [_t("x", [2, 3])],
                                 [_t("y", None)], [i64("a", [0])]),
        "const_of_shape": _onnx_bytes(
            [node("ConstantOfShape", ["s"], ["c"], name="cos", value=helper.make_tensor("v", 1, [1], [1.5])),
             node("Add", ["x", "c"], ["y"], name="add")], [_t("x", [2, 3])], [_t("y", None)], [i64("s", [2, 3])]),
        "where": _onnx_bytes([node("Where", ["c", "x", "z"], ["y"], name="wh")],
                             [_t("c", [2, 3], TensorProto.BOOL), _t("x", [2, 3])], [_t("y", None)],
                             [f32("z", np.zeros((2, 3)))]),
        "conv": _onnx_bytes([node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1], strides=[1, 1])],
                            [_t("x", [1, 2, 5, 5])], [_t("y", None)], [f32("w", np.ones((3, 2, 3, 3)))]),
        "gather": _onnx_bytes([node("Gather", ["x", "i"], ["y"], name="ga", axis=0)], [_t("x", [4, 3])],
                              [_t("y", None)], [i64("i", [0, 3, 1])]),
    }


def _sample_args(name: str) -> list:
    binds = {"small_cnn.onnx": ["--bind", "N=1", "--bind", "H=8", "--bind", "W=8"],
             "tiny_transformer.onnx": ["--bind", "batch=1", "--bind", "seq=3"],
             "two_dyn.onnx": ["--bind", "a1=3", "--bind", "b0=2", "--bind", "b1=3"],
             "dynamic_batch.tflite": ["--bind", "image.0=1"],
             "int8_dynamic_batch.tflite": ["--bind", "image.0=1"],
             "dynamic_hw.tflite": ["--bind", "image.1=8", "--bind", "image.2=8"],
             "shape_reshape.tflite": ["--bind", "x.0=2"]}
    return binds.get(name, [])


@functools.lru_cache(maxsize=None)
def onnx_seeds() -> tuple:
    seeds = [Seed(n, ".onnx", d, (RUN, CONVERT, INSPECT)) for n, d in _one_op_models().items()]
    for path in (SAMPLES / "small_cnn.onnx", SAMPLES / "tiny_transformer.onnx", SAMPLES / "broadcast/two_dyn.onnx"):
        extra = _sample_args(path.name)
        seeds.append(Seed(path.stem, ".onnx", path.read_bytes(), (RUN + extra, CONVERT + extra, INSPECT)))
    return tuple(seeds)


@functools.lru_cache(maxsize=None)
def tflite_seeds() -> tuple:
    out = []
    for path in sorted((SAMPLES / "tflite").glob("*.tflite")):
        extra = _sample_args(path.name)
        out.append(Seed(path.stem, ".tflite", path.read_bytes(), (RUN + extra, CONVERT + extra, INSPECT)))
    return tuple(out)


def _converted(source: Path, args: list, suffix: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        out = str(Path(d) / f"out{suffix}")
        command = "convert" if suffix == ".tosa" else "import"
        code = _call([command, str(source), "-o", out, "-q", *args])
        assert code == 0, f"seed conversion of {source} failed ({code})"
        return Path(out).read_bytes()


def _call(args: list) -> int:
    from click.testing import CliRunner
    from tosaconv.cli import cli
    return CliRunner().invoke(cli, args).exit_code


@functools.lru_cache(maxsize=None)
def tosa_seeds() -> tuple:
    out = []
    for path in (SAMPLES / "small_cnn.onnx", SAMPLES / "tflite/int8_cnn.tflite", SAMPLES / "tflite/running_sum.tflite"):
        data = _converted(path, _sample_args(path.name), ".tosa")
        out.append(Seed(path.stem, ".tosa", data, (RUN, CONVERT, INSPECT)))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def tosair_seeds() -> tuple:
    out = []
    for path in (SAMPLES / "small_cnn.onnx", SAMPLES / "tiny_transformer.onnx", SAMPLES / "tflite/int8_cnn.tflite"):
        data = _converted(path, [], ".tosair")
        extra = _sample_args(path.name)
        out.append(Seed(path.stem, ".tosair", data, (RUN + extra, CONVERT + extra, INSPECT)))
    return tuple(out)


def npz_of(arrays: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


# y = x + b with x: [batch, seq], b: [seq]; the model the bindings and inputs fuzzers feed
SYMBOLIC_MODEL = _onnx_bytes([helper.make_node("Add", ["x", "b"], ["y"], name="add")],
                             [_t("x", ["batch", "seq"]), _t("b", ["seq"])], [_t("y", None)])
