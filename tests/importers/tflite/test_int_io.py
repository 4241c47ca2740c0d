"""--int-io on TFLite models: the program takes and returns the int8 tensors of the model's integer body.

LiteRT runs the model as it is (float or uint8 edges) with every tensor kept, so the int8 tensors right
after the input QUANTIZE and right before the output DEQUANTIZE / QUANTIZE can be read. The --int-io
program fed LiteRT's quantized input must give exactly LiteRT's int8 body output, and that output
dequantized with the *reported* scale and zero point must equal LiteRT's float output bit for bit (the
DEQUANTIZE is ``float(double(scale) * (q - zp))``). The official reference model runs the emitted .tosa
with the same result, and Vela compiles it with every operator on the NPU.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from click.testing import CliRunner

from tosaconv import api
from tosaconv.cli import cli
from tosaconv.ir.io_quant import describe_io
from tests.importers.onnx.harness import run_graph, specialize_and_emit
from tests.importers.tflite.harness import ModelBuilder, rand
from tests.importers.tflite.qconv_models import qdata
from tests.tosa_tools import run_reference_model

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "sample_models", "tflite")
SHAPE = (1, 16, 16, 3)


def sample(name: str) -> str:
    return os.path.join(SAMPLES, name)


def litert_tensors(path: str, feeds: dict) -> dict:
    """Every tensor of a LiteRT reference-kernel run, by tensor name."""
    interp = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                         experimental_preserve_all_tensors=True)
    interp.allocate_tensors()
    for d in interp.get_input_details():
        interp.set_tensor(d["index"], feeds[d["name"]])
    interp.invoke()
    out = {}
    for d in interp.get_tensor_details():
        try:
            out[d["name"]] = interp.get_tensor(d["index"])
        except ValueError:      # a tensor LiteRT keeps no data for
            pass
    return out


def dequantize(q: np.ndarray, edge: dict) -> np.ndarray:
    """LiteRT's DEQUANTIZE, ``float(double(scale) * (q - zp))``, with the report's scale and zero point."""
    return (np.float64(edge["scale"]) * (q.astype(np.int64) - edge["zero_point"])).astype(np.float32)


def run_int_io(graph, feeds: dict, workdir) -> np.ndarray:
    """The numpy run of the static program, checked against the official reference model."""
    static, tosa = specialize_and_emit(graph, {k: np.shape(v) for k, v in feeds.items()})
    got = run_graph(static, feeds)
    ref = run_reference_model(tosa, feeds, static.output_names, workdir)
    np.testing.assert_array_equal(ref[static.output_names[0]], got[0])
    return got[0]


def float_images() -> list:
    scale = np.float32(0.007843137718737125)
    feeds = [rand(*SHAPE, low=-1.2, high=1.2, seed=s) for s in (0, 1)]
    feeds[1].reshape(-1)[:280] = ((np.arange(-140, 140) + 0.5) * scale).astype(np.float32)   # rounding ties
    return feeds


def test_int8_float_io_takes_and_returns_int8(tmp_path):
    graph = api.load(sample("int8_float_io.tflite"), int_io=True)
    io = describe_io(graph)
    assert io["int_io"] and [(e["name"], e["dtype"], e["source_dtype"]) for e in io["inputs"] + io["outputs"]] == \
        [("image", "int8", "float32"), ("probs/float", "int8", "float32")]
    assert not [op for op in graph.ops if any(v.type.dtype.is_float for v in op.results)], "float ops left"
    for n, x in enumerate(float_images()):
        lite = litert_tensors(sample("int8_float_io.tflite"), {"image": x})
        xq = lite["image/quantized"]
        assert xq.dtype == np.int8
        got = run_int_io(graph, {"image": xq}, tmp_path / str(n))
        np.testing.assert_array_equal(got, lite["probs"])                       # LiteRT's int8 body output
        want = lite["probs/float"]
        assert np.array_equal(dequantize(got, io["outputs"][0]), want)          # bit for bit
        assert len(np.unique(got)) >= 4


def test_reported_input_quantization_is_litert_s(tmp_path):
    """Quantizing with the reported scale and zero point (TfLiteRound: half away from zero) gives the
    int8 image LiteRT's QUANTIZE makes."""
    edge = describe_io(api.load(sample("int8_float_io.tflite"), int_io=True))["inputs"][0]
    for x in float_images():
        lite = litert_tensors(sample("int8_float_io.tflite"), {"image": x})
        y = x.astype(np.float32) / np.float32(edge["scale"])
        q = np.clip(np.sign(y) * np.floor(np.abs(y) + np.float32(0.5)) + edge["zero_point"], -128, 127)
        np.testing.assert_array_equal(q.astype(np.int8), lite["image/quantized"])


def test_uint8_io_becomes_signed_int8_io(tmp_path):
    """uint8 edges: without --int-io the int8 tensors hold the uint8 bits (unsigned, zero point in 0..255);
    with it the requantizing QUANTIZEs are bypassed and the edges are the int8 body tensors."""
    plain, signed = (describe_io(api.load(sample("uint8_io.tflite"), int_io=f)) for f in (False, True))
    assert plain["inputs"][0]["unsigned"] and plain["inputs"][0]["zero_point"] == 127
    assert [(e["dtype"], e["source_dtype"], e["unsigned"]) for e in signed["inputs"] + signed["outputs"]] == \
        [("int8", "uint8", False)] * 2
    graph = api.load(sample("uint8_io.tflite"), int_io=True)
    for n, seed in enumerate((0, 1)):
        image = qdata(SHAPE, np.uint8, 127, seed)
        lite = litert_tensors(sample("uint8_io.tflite"), {"image": image})
        xq = lite["image/int8"]
        np.testing.assert_array_equal(xq.astype(np.int64), image.astype(np.int64) - 128)   # the zero point moved
        assert signed["inputs"][0]["zero_point"] == plain["inputs"][0]["zero_point"] - 128
        got = run_int_io(graph, {"image": xq}, tmp_path / str(n))
        uint8_out = lite["probs/uint8"]
        assert uint8_out.dtype == np.uint8
        assert np.array_equal(dequantize(got, signed["outputs"][0]), dequantize(uint8_out, plain["outputs"][0]))


def test_int8_io_model_is_unchanged_by_the_flag():
    a, b = (api.load(sample("int8_cnn.tflite"), int_io=f) for f in (False, True))
    assert api.print_ir(b).replace("int_io\n", "", 1) == api.print_ir(a)
    assert describe_io(b)["inputs"][0] == {"name": "image", "dtype": "int8", "scale": 0.007843137718737125,
                                           "zero_point": -1, "source_dtype": "int8", "unsigned": False}


def test_float_model_is_refused_naming_its_edges(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["convert", sample("small_cnn.tflite"), "--int-io", "-o", "x.tosa", "--json"])
    assert r.exit_code == 3
    messages = [d["message"] for d in __import__("json").loads(r.stdout)["diagnostics"]]
    assert any("input 'image' is float32 and is not quantized by a QUANTIZE" in m for m in messages)
    assert any("is float32 and is not produced by a DEQUANTIZE" in m for m in messages)
    assert not (tmp_path / "x.tosa").exists()


def _mixed_model() -> bytes:
    """x (float) feeds a QUANTIZE and a float ADD: --int-io cannot remove the QUANTIZE."""
    m = ModelBuilder()
    x = m.input("x", [1, 4], "FLOAT32")
    q = m.tensor("xq", [1, 4], "INT8", quant=([0.05], [2], 0))
    m.op("QUANTIZE", [x], [q], version=1)
    y = m.tensor("y", [1, 4], "FLOAT32")
    m.op("DEQUANTIZE", [q], [y], version=2)
    s = m.tensor("s", [1, 4], "FLOAT32")
    m.op("ADD", [x, y], [s], "AddOptions")
    m.output(s)
    return m.finish()


def test_input_feeding_quantize_and_float_ops_is_refused(tmp_path):
    path = tmp_path / "mixed.tflite"
    path.write_bytes(_mixed_model())
    r = CliRunner().invoke(cli, ["import", str(path), "--int-io", "-o", str(tmp_path / "m.tosair")])
    assert r.exit_code == 3
    assert "input 'x' feeds a QUANTIZE and also 1 other op(s) that read it as float (ADD 's')" in r.output
    assert api.load(str(path)).inputs[0].type.dtype.is_float      # fine without the flag


def test_report_inspect_and_tosair_carry_the_quantization(tmp_path, monkeypatch):
    import json
    from tests.cli.test_convert import report_validator
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke
    r = run(cli, ["convert", sample("uint8_io.tflite"), "--int-io", "-o", "a.tosa", "--report", "r.json"])
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "r.json").read_text())
    report_validator().validate(report)
    assert report["io"]["inputs"][0]["zero_point"] == -1 and report["io"]["outputs"][0]["zero_point"] == -128
    assert run(cli, ["import", sample("uint8_io.tflite"), "--int-io", "-o", "m.tosair"]).exit_code == 0
    r = run(cli, ["specialize", "m.tosair", "-o", "b.tosa", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["io"] == report["io"]
    assert (tmp_path / "b.tosa").read_bytes() == (tmp_path / "a.tosa").read_bytes()
    r = run(cli, ["inspect", sample("int8_float_io.tflite"), "--int-io", "--json"])
    doc = json.loads(r.stdout)
    report_validator().validate(doc)
    assert (doc["int_io"], doc["inputs"][0]["scale"], doc["outputs"][0]["zero_point"]) == \
        (True, 0.007843137718737125, -128)
    r = run(cli, ["inspect", sample("int8_float_io.tflite"), "--int-io"])
    assert "0.00784313772," in r.output and "float32)" in r.output     # the table wraps the cell


def test_int_io_on_a_program_not_imported_with_it_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke
    assert run(cli, ["import", sample("int8_float_io.tflite"), "-o", "m.tosair"]).exit_code == 0
    r = run(cli, ["specialize", "m.tosair", "--int-io", "-o", "b.tosa"])
    assert r.exit_code == 2 and "was not imported with it" in r.output


def assert_all_on_npu(tosa_path, workdir):
    """Vela compiles the .tosa for the Ethos-U85 with every operator on the NPU."""
    proc = subprocess.run([sys.executable, "-m", "ethosu.vela", str(tosa_path), "--accelerator-config",
                           "ethos-u85-256", "--output-dir", str(workdir)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CPU operators = 0 (0.0%)" in proc.stdout and "(100.0%)" in proc.stdout, proc.stdout


@pytest.mark.parametrize("name", ["int8_float_io.tflite", "uint8_io.tflite"])
def test_vela_puts_every_operator_on_the_npu(tmp_path, name):
    """Vela rejects float edges; with --int-io the whole program compiles for the Ethos-U85."""
    out = tmp_path / "m.tosa"
    r = CliRunner().invoke(cli, ["convert", sample(name), "--int-io", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert_all_on_npu(out, tmp_path / "vela")


def test_vela_rejects_the_float_edges_without_the_flag(tmp_path):
    out = tmp_path / "m.tosa"
    assert CliRunner().invoke(cli, ["convert", sample("int8_float_io.tflite"), "-o", str(out)]).exit_code == 0
    with pytest.raises(AssertionError):
        assert_all_on_npu(out, tmp_path / "vela")
