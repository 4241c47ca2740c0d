"""DequantizeLinear -> LSTM (float W, R, B) -> layout ops -> QuantizeLinear under --profile int: the integer
LSTM (lowering.int_lstm_emit, int8 TABLEs) replaces the float one.

The models are built here (a float LSTM between a QDQ pair, Y through Transpose and Reshape as
ddddocr's recognizer has it). Converted with ``--profile int --int-io``: no float op is left, the
official reference model runs the .tosa to the same int8 values as our interpreter, and onnxruntime
(graph optimizations off, the float LSTM on the dequantized input) agrees within 3 LSB, the bound
tests/lowering/test_int_lstm.py measured for the int8-TABLE form on synthetic data.
"""
from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

from tests.importers.onnx.harness import const, info, make_model, run_onnxruntime
from tests.tosa_tools import run_reference_model
from tosaconv import api
from tosaconv.cli import cli

T, B, I, H = 5, 2, 6, 8
X_SCALE, X_ZP, Y_SCALE, Y_ZP = 0.02, 3, 1.0 / 128, -5
LSB_BOUND = 3


def lstm_model(direction: str, zero_states: bool = False, seed: int = 1, seq="T") -> onnx.ModelProto:
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(seed)
    inits = [const("W", (rng.normal(0, 0.4, (dirs, 4 * H, I))).astype(np.float32)),
             const("R", (rng.normal(0, 0.4, (dirs, 4 * H, H))).astype(np.float32)),
             const("Bias", (rng.normal(0, 0.4, (dirs, 8 * H))).astype(np.float32)),
             const("xs", np.float32(X_SCALE)), const("xz", np.int8(X_ZP)), const("ys", np.float32(Y_SCALE)),
             const("yz", np.int8(Y_ZP)), const("shape", np.array([0, 0, dirs * H], np.int64))]
    lstm_in = ["xd", "W", "R", "Bias"]
    if zero_states:
        inits += [const("h0", np.zeros((dirs, B, H), np.float32)), const("c0", np.zeros((dirs, B, H), np.float32))]
        lstm_in += ["", "h0", "c0"]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="quant_x"),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dequant_x"),
             helper.make_node("LSTM", lstm_in, ["Y"], hidden_size=H, direction=direction, name="lstm"),
             helper.make_node("Transpose", ["Y"], ["Yt"], perm=[0, 2, 1, 3], name="tr"),
             helper.make_node("Reshape", ["Yt", "shape"], ["Yr"], name="rs"),
             helper.make_node("QuantizeLinear", ["Yr", "ys", "yz"], ["yq"], name="quant_y"),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"], name="dequant_y")]
    return make_model(nodes, [info("x", TensorProto.FLOAT, [seq, B, I])], [info("y", TensorProto.FLOAT, None)],
                      inits, opset=13)


CASES = pytest.mark.parametrize("direction,zero_states", [("forward", False), ("reverse", True),
                                                          ("bidirectional", False), ("bidirectional", True)])


def _convert(model, tmp_path) -> tuple:
    path, out = tmp_path / "m.onnx", tmp_path / "m.tosa"
    onnx.save(model, str(path))
    r = CliRunner().invoke(cli, ["convert", str(path), "-o", str(out), "--profile", "int", "--int-io", "--json",
                                 f"--input-shape=x={T},{B},{I}"])
    assert r.exit_code == 0, r.output
    return path, out, json.loads(r.stdout)


@CASES
@pytest.mark.parametrize("seq", [T, "T"], ids=["static", "symbolic"])
def test_integer_lstm_is_exact_on_the_reference_model_and_near_onnxruntime(tmp_path, direction, zero_states, seq):
    """A symbolic sequence length keeps one RECURRENT op until --input-shape binds it; our interpreter
    runs the symbolic program (it unrolls the op for the given shapes)."""
    model = lstm_model(direction, zero_states, seq=seq)
    path, out, doc = _convert(model, tmp_path)
    graph = api.load(str(path), int_io=True, quantize_weights=True)
    program = api.load(str(out))
    floats = [op.op.name for op in program.ops if any(v.type.dtype.is_float for v in (*op.operands, *op.results))]
    assert not floats, floats
    rng = np.random.default_rng(4)
    xq = rng.integers(-128, 128, (T, B, I)).astype(np.int8)
    in_name, out_name = graph.inputs[0].name, graph.output_names[0]
    ref = run_reference_model(out.read_bytes(), {in_name: xq}, [out_name], tmp_path / "ref")[out_name]
    ours = api.run(graph, {in_name: xq})
    np.testing.assert_array_equal(np.asarray(ours[out_name]), ref)
    want = run_onnxruntime(model, {"x": ((xq.astype(np.float32) - X_ZP) * np.float32(X_SCALE))}, optimize=False)[0]
    want_q = np.rint(want / np.float32(Y_SCALE)) + Y_ZP
    assert len(np.unique(want_q)) > 20, "a saturated output proves little"
    lsb = np.abs(ref.astype(np.int64) - want_q.reshape(ref.shape))
    assert lsb.max() <= LSB_BOUND, f"{lsb.max()} LSB from onnxruntime on {(lsb > 0).mean():.0%}"
    assert [w["code"] for w in doc["warnings"]] == ["W-WEIGHTS-QUANTIZED"]
    assert "|c| < 8" in doc["warnings"][0]["message"]


def test_without_profile_int_the_lstm_stays_float(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(lstm_model("forward", seq=T), str(path))
    graph = api.load(str(path), int_io=True, quantize_weights=False)
    assert any(op.op.name == "RECURRENT" or op.results[0].type.dtype.is_float for op in graph.ops)
    assert not graph.import_warnings


def test_a_nonzero_initial_state_keeps_the_lstm_float_with_its_reason(tmp_path):
    model = lstm_model("forward", zero_states=True, seq=T)
    for t in model.graph.initializer:
        if t.name == "h0":
            t.CopyFrom(const("h0", np.full((1, B, H), 0.5, np.float32)))
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    r = CliRunner().invoke(cli, ["convert", str(path), "-o", str(tmp_path / "m.tosa"), "--profile", "int",
                                 "--int-io"])
    assert r.exit_code == 3, r.output
    assert "initial_h is not a constant zero" in r.output


def test_ir_text_of_an_integer_lstm_is_a_clean_refusal(tmp_path):
    """The integer LSTM's plan has no .tosair text form: --ir is refused by name (exit 3), nothing is written."""
    path = tmp_path / "m.onnx"
    onnx.save(lstm_model("forward"), str(path))
    r = CliRunner().invoke(cli, ["convert", str(path), "-o", str(tmp_path / "m.tosa"), "--profile", "int",
                                 "--int-io", "--ir", str(tmp_path / "m.tosair"), f"--input-shape=x={T},{B},{I}"])
    assert r.exit_code == 3, r.output
    assert "E-NO-TEXT-FORM" in r.output and "RECURRENT" in r.output and "drop --ir" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
