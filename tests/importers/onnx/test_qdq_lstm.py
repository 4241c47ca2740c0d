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

T, B, I, H = 5, 2, 6, 8  # noqa: E741  (ONNX LSTM notation: steps, batch, input size, hidden size)
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


def _convert(model, tmp_path, *extra) -> tuple:
    path, out = tmp_path / "m.onnx", tmp_path / "m.tosa"
    onnx.save(model, str(path))
    r = CliRunner().invoke(cli, ["convert", str(path), "-o", str(out), "--profile", "int", "--int-io", "--json",
                                 f"--input-shape=x={T},{B},{I}", *extra])
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


def test_npu_fast_keeps_8bit_weights_within_the_same_bound(tmp_path):
    """By default W and R are int8 pairs (16-bit in effect: four CONV2Ds a step); --npu-fast keeps one int8
    each (two CONV2Ds a step, cheaper on the NPU), still exact on the reference model and within the bound."""
    model = lstm_model("bidirectional", seq=T)
    counts = {}
    for extra in ((), ("--npu-fast",)):
        work = tmp_path / (extra[0][2:] if extra else "default")
        work.mkdir()
        _, out, doc = _convert(model, work, *extra)
        program = api.load(str(out))
        counts[extra] = sum(op.op.name == "CONV2D" for op in program.ops)
        xq = np.random.default_rng(4).integers(-128, 128, (T, B, I)).astype(np.int8)
        ref = run_reference_model(out.read_bytes(), {"x": xq}, ["y"], work / "ref")["y"]
        np.testing.assert_array_equal(np.asarray(api.run(program, {"x": xq})["y"]), ref)
        want = run_onnxruntime(model, {"x": ((xq.astype(np.float32) - X_ZP) * np.float32(X_SCALE))},
                               optimize=False)[0]
        lsb = np.abs(ref.astype(np.int64) - (np.rint(want / np.float32(Y_SCALE)) + Y_ZP).reshape(ref.shape))
        assert lsb.max() <= LSB_BOUND, f"{extra}: {lsb.max()} LSB from onnxruntime"
        assert ("--npu-fast" in doc["warnings"][0]["message"]) == bool(extra)
    assert counts[()] == 2 * counts[("--npu-fast",)] > 0, counts     # (a step from constant h folds its R product)


def test_without_profile_int_the_lstm_stays_float(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(lstm_model("forward", seq=T), str(path))
    graph = api.load(str(path), int_io=True, quantize_weights=False)
    assert any(op.op.name == "RECURRENT" or op.results[0].type.dtype.is_float for op in graph.ops)
    assert not graph.import_warnings


def test_a_nonzero_constant_initial_state_is_quantized_into_the_integer_lstm(tmp_path):
    """Constant h0 (0.5) and c0 (-1.25) become int8 h (Y's scale) and int16 Q3.12 c constants: exact on the
    reference model, within the same bound of onnxruntime."""
    model = lstm_model("forward", zero_states=True, seq=T)
    for t in model.graph.initializer:
        if t.name in ("h0", "c0"):
            t.CopyFrom(const(t.name, np.full((1, B, H), 0.5 if t.name == "h0" else -1.25, np.float32)))
    path, out, doc = _convert(model, tmp_path)
    program = api.load(str(out))
    assert not [op for op in program.ops if any(v.type.dtype.is_float for v in (*op.operands, *op.results))]
    xq = np.random.default_rng(5).integers(-128, 128, (T, B, I)).astype(np.int8)
    ref = run_reference_model(out.read_bytes(), {"x": xq}, ["y"], tmp_path / "ref")["y"]
    np.testing.assert_array_equal(np.asarray(api.run(program, {"x": xq})["y"]), ref)
    want = run_onnxruntime(model, {"x": ((xq.astype(np.float32) - X_ZP) * np.float32(X_SCALE))}, optimize=False)[0]
    lsb = np.abs(ref.astype(np.int64) - (np.rint(want / np.float32(Y_SCALE)) + Y_ZP).reshape(ref.shape))
    assert lsb.max() <= LSB_BOUND, f"{lsb.max()} LSB from onnxruntime"


# -- silero's form: state inputs h, c and outputs hn, cn; Y -> Squeeze -> Relu -> QuantizeLinear ------------

RELU_SCALE, RELU_ZP = 1.0 / 255, 0      # a symmetric int8 scale after Relu: half of it is never used


def state_model(zp: int = RELU_ZP) -> onnx.ModelProto:
    rng = np.random.default_rng(7)
    inits = [const("W", (rng.normal(0, 0.4, (1, 4 * H, I))).astype(np.float32)),
             const("R", (rng.normal(0, 0.4, (1, 4 * H, H))).astype(np.float32)),
             const("Bias", (rng.normal(0, 0.4, (1, 8 * H))).astype(np.float32)),
             const("xs", np.float32(X_SCALE)), const("xz", np.int8(X_ZP)), const("ys", np.float32(RELU_SCALE)),
             const("yz", np.int8(zp)), const("axes", np.array([1], np.int64))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="quant_x"),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dequant_x"),
             helper.make_node("LSTM", ["xd", "W", "R", "Bias", "", "h", "c"], ["Y", "hn", "cn"], hidden_size=H,
                              name="lstm"),
             helper.make_node("Squeeze", ["Y", "axes"], ["Ys"], name="squeeze"),
             helper.make_node("Relu", ["Ys"], ["Yr"], name="relu"),
             helper.make_node("QuantizeLinear", ["Yr", "ys", "yz"], ["yq"], name="quant_y"),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"], name="dequant_y")]
    inputs = [info("x", TensorProto.FLOAT, [T, B, I]), info("h", TensorProto.FLOAT, [1, B, H]),
              info("c", TensorProto.FLOAT, [1, B, H])]
    outputs = [info("y", TensorProto.FLOAT, None), info("hn", TensorProto.FLOAT, [1, B, H]),
               info("cn", TensorProto.FLOAT, [1, B, H])]
    return make_model(nodes, inputs, outputs, inits, opset=13)


def _quantize(real: np.ndarray, edge: dict) -> np.ndarray:
    dtype = np.dtype(edge["dtype"])
    q = np.rint(real / edge["scale"]) + edge["zero_point"]
    return np.clip(q, np.iinfo(dtype).min, np.iinfo(dtype).max).astype(dtype)


def _real(q: np.ndarray, edge: dict) -> np.ndarray:
    return (q.astype(np.float64) - edge["zero_point"]) * edge["scale"]


STATE_LSB = {"y": 5, "hn": 4, "cn": 3}     # measured 4 (Y at 1/255: 2 LSB of h), 3.4, 2.7 (cn in LSB of Q8.7)


@pytest.mark.parametrize("zp", [0, -128], ids=["relu_clamps", "relu_free"])
def test_lstm_state_edges_become_integer_under_int_io(tmp_path, zp):
    """h, c, hn, cn become int8 h at 2**-7 and int16 c in Q8.7 (reported in io, warned), Y gets its own RESCALE
    to the Relu's QuantizeLinear and a clamp; exact on the reference model and near onnxruntime fed the same
    (dequantized) state."""
    model = state_model(zp)
    path, out, doc = _convert(model, tmp_path)
    io = {e["name"]: e for e in doc["io"]["inputs"] + doc["io"]["outputs"]}
    for name, dtype in (("h", "int8"), ("hn", "int8"), ("c", "int16"), ("cn", "int16")):
        assert (io[name]["dtype"], io[name]["scale"], io[name]["zero_point"]) == (dtype, 2.0 ** -7, 0), io[name]
    codes = [w["code"] for w in doc["warnings"]]
    assert codes.count("W-INT-IO-STATE") == 4 and "W-WEIGHTS-QUANTIZED" in codes
    assert any("|c| < 256" in w["message"] for w in doc["warnings"])
    program = api.load(str(out))
    assert not [op for op in program.ops if any(v.type.dtype.is_float for v in (*op.operands, *op.results))]
    rng = np.random.default_rng(8)
    feeds = {"x": rng.integers(-128, 128, (T, B, I)).astype(np.int8),
             "h": _quantize(np.tanh(rng.normal(0, 0.6, (1, B, H))), io["h"]),
             "c": _quantize(rng.normal(0, 2.0, (1, B, H)), io["c"])}
    names = ["y", "hn", "cn"]
    ref = run_reference_model(out.read_bytes(), feeds, names, tmp_path / "ref")
    ours = api.run(program, feeds)
    for name in names:
        np.testing.assert_array_equal(np.asarray(ours[name]), ref[name])
    reals = {"x": ((feeds["x"].astype(np.float32) - X_ZP) * np.float32(X_SCALE)),
             "h": _real(feeds["h"], io["h"]).astype(np.float32), "c": _real(feeds["c"], io["c"]).astype(np.float32)}
    want = dict(zip(names, run_onnxruntime(model, reals, optimize=False)))
    for name in names:
        lsb = np.abs(_real(ref[name], io[name]) - want[name].reshape(ref[name].shape)) / io[name]["scale"]
        assert lsb.max() <= STATE_LSB[name], f"{name}: {lsb.max():.2f} LSB from onnxruntime"
    assert (ref["y"] == zp).mean() > 0.2 and (ref["y"] > zp).mean() > 0.2, "Relu's both sides are exercised"


def test_lstm_state_edges_without_profile_int_are_refused_with_the_reason(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(state_model(), str(path))
    r = CliRunner().invoke(cli, ["convert", str(path), "-o", str(tmp_path / "m.tosa"), "--int-io"])
    assert r.exit_code == 3, r.output
    for name in ("input 'h'", "input 'c'", "output 'hn'", "output 'cn'"):
        assert f"--int-io: {name} is an LSTM state" in r.output, r.output
    assert "only under --profile int" in r.output and "E-INT-IO" in r.output


def test_float_state_inputs_without_int_io_keep_the_lstm_float_with_its_reason(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(state_model(), str(path))
    r = CliRunner().invoke(cli, ["convert", str(path), "-o", str(tmp_path / "m.tosa"), "--profile", "int"])
    assert r.exit_code == 3, r.output
    assert "initial_h is the float graph input 'h' (with --int-io it becomes an integer state input)" in r.output


def test_ir_text_of_an_integer_lstm_is_a_clean_refusal(tmp_path):
    """The integer LSTM's plan has no .tosair text form: --ir is refused by name (exit 3), nothing is written."""
    path = tmp_path / "m.onnx"
    onnx.save(lstm_model("forward"), str(path))
    r = CliRunner().invoke(cli, ["convert", str(path), "-o", str(tmp_path / "m.tosa"), "--profile", "int",
                                 "--int-io", "--ir", str(tmp_path / "m.tosair"), f"--input-shape=x={T},{B},{I}"])
    assert r.exit_code == 3, r.output
    assert "E-NO-TEXT-FORM" in r.output and "RECURRENT" in r.output and "drop --ir" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]


def test_a_state_input_the_float_lstm_still_needs_is_refused(tmp_path):
    """Y also reaches a second output through a Sigmoid, which has no integer form after an LSTM: that float
    path keeps the float LSTM and so the float 'h', which --int-io has made an integer input: refused by name."""
    model = state_model()
    g = model.graph
    g.node.extend([helper.make_node("Sigmoid", ["Y"], ["Ysig"], name="sig"),
                   helper.make_node("QuantizeLinear", ["Ysig", "ys", "yz"], ["sq"], name="quant_sig"),
                   helper.make_node("DequantizeLinear", ["sq", "ys", "yz"], ["s"], name="dequant_sig")])
    g.output.append(info("s", TensorProto.FLOAT, None))
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    r = CliRunner().invoke(cli, ["convert", str(path), "-o", str(tmp_path / "m.tosa"), "--profile", "int",
                                 "--int-io"])
    assert r.exit_code == 3, r.output
    assert "E-INT-IO" in r.output and "still reads it as float" in r.output, r.output
