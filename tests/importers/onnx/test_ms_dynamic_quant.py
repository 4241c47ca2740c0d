"""com.microsoft DynamicQuantizeMatMul and DynamicQuantizeLSTM against onnxruntime.

DynamicQuantizeMatMul: int8 and uint8 B, per-tensor and per-column scales, with and without zero
point and bias, built with ``onnx.helper``; tosaconv computes onnxruntime's quantization of A and
the integer product in float32, so the results agree to float rounding (at two bindings).

DynamicQuantizeLSTM, written by ``onnxruntime.quantization.quantize_dynamic`` from a float LSTM:
tosaconv dequantizes the weights and runs the float LSTM, so it equals onnxruntime's float LSTM on
those dequantized weights (tight tolerance); onnxruntime's own DynamicQuantizeLSTM also quantizes
X and the hidden state to uint8, and differs from both by that quantization error (bounded here).
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from .harness import F32, check_with_onnxruntime, compare_both_paths, const, convert, info, make_model, rand, \
    run_graph, run_onnxruntime

MS = "com.microsoft"


def _dqmm(b_type, per_column: bool, zero_point: bool, bias: bool):
    r = np.random.default_rng(3)
    # int8 B within [-64, 64): onnxruntime's u8s8 kernels on CPUs without VNNI add pairs of u8*s8
    # products in saturating int16 (a documented limitation), which 255 * 64 * 2 stays below
    lo, hi = (-64, 64) if b_type == np.int8 else (0, 256)
    inits = [const("B", r.integers(lo, hi, (6, 5)).astype(b_type)),
             const("b_scale", (r.uniform(0.01, 0.05, 5) if per_column else np.array(0.02)).astype(np.float32))]
    names = ["A", "B", "b_scale", "", ""]
    if zero_point:
        inits.append(const("b_zp", r.integers(lo // 4 + 10, hi // 4 + 10, 5 if per_column else ()).astype(b_type)))
        names[3] = "b_zp"
    if bias:
        inits.append(const("bias", rand(5, seed=4)))
        names[4] = "bias"
    while not names[-1]:
        names.pop()
    node = helper.make_node("DynamicQuantizeMatMul", names, ["Y"], name="dqmm", domain=MS)
    model = make_model([node], [info("A", F32, ["B", "S", 6])], [info("Y", F32, None)], inits, 17)
    model.opset_import.append(helper.make_opsetid(MS, 1))
    return model


@pytest.mark.parametrize("b_type", [np.int8, np.uint8], ids=["int8", "uint8"])
@pytest.mark.parametrize("per_column,zero_point,bias", [(False, False, False), (True, True, True),
                                                        (False, True, True), (True, False, False)])
def test_dynamic_quantize_matmul(b_type, per_column, zero_point, bias):
    model = _dqmm(b_type, per_column, zero_point, bias)
    feeds = [{"A": rand(2, 3, 6, low=-3, high=5, seed=1)}, {"A": rand(1, 4, 6, low=0.5, high=2, seed=2)}]
    check_with_onnxruntime(model, feeds, rtol=1e-5, atol=1e-4)


def test_dynamic_quantize_matmul_full_int8_range_against_integer_truth():
    """Full-range int8 B, where onnxruntime's int16 pair sums would saturate: compare with the
    definition computed in numpy (uint8 quantization of A as DynamicQuantizeLinear, int64 products)."""
    r = np.random.default_rng(7)
    b = r.integers(-128, 128, (6, 5)).astype(np.int8)
    b_scale = r.uniform(0.01, 0.05, 5).astype(np.float32)
    node = helper.make_node("DynamicQuantizeMatMul", ["A", "B", "b_scale"], ["Y"], name="dqmm", domain=MS)
    model = make_model([node], [info("A", F32, ["S", 6])], [info("Y", F32, None)],
                       [const("B", b), const("b_scale", b_scale)], 17)
    model.opset_import.append(helper.make_opsetid(MS, 1))
    graph = convert(model)
    for i, rows in enumerate((3, 7)):
        a = rand(rows, 6, low=-3, high=5, seed=20 + i)
        lo, hi = min(a.min(), 0.0), max(a.max(), 0.0)
        scale = np.float32((hi - lo) / np.float32(255))
        zp = np.clip(np.rint(-lo / scale), 0, 255)
        q = np.clip(np.rint(a / scale) + zp, 0, 255)
        acc = (q - zp).astype(np.int64) @ b.astype(np.int64)
        want = (acc * (scale * b_scale.astype(np.float64))).astype(np.float32)
        compare_both_paths(graph, {"A": a}, [want], 1e-5, 1e-4)


# -- DynamicQuantizeLSTM ----------------------------------------------------------------------

HIDDEN, INPUT = 4, 3


def _float_lstm(direction: str):
    d = 2 if direction == "bidirectional" else 1
    inits = [const("W", rand(d, 4 * HIDDEN, INPUT, seed=1, low=-0.8, high=0.8)),
             const("R", rand(d, 4 * HIDDEN, HIDDEN, seed=2, low=-0.8, high=0.8)),
             const("Bias", rand(d, 8 * HIDDEN, seed=3, low=-0.3, high=0.3))]
    node = helper.make_node("LSTM", ["X", "W", "R", "Bias"], ["Y", "Y_h", "Y_c"], name="lstm",
                            hidden_size=HIDDEN, direction=direction)
    outputs = [info(n, F32, None) for n in ("Y", "Y_h", "Y_c")]
    return make_model([node], [info("X", F32, ["T", "N", INPUT])], outputs, inits, 14)


def _quantized(model, tmp_path):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    onnx.save(model, str(tmp_path / "lstm.onnx"))
    quantize_dynamic(str(tmp_path / "lstm.onnx"), str(tmp_path / "lstm_q.onnx"), weight_type=QuantType.QInt8,
                     op_types_to_quantize=["LSTM"])
    q = onnx.load(str(tmp_path / "lstm_q.onnx"))
    assert [n.op_type for n in q.graph.node] == ["DynamicQuantizeLSTM"]
    return q


def _dequantized_float_model(q):
    """The float LSTM onnxruntime would run on the quantized model's dequantized weights."""
    t = {i.name: numpy_helper.to_array(i) for i in q.graph.initializer}
    node = q.graph.node[0]
    weights = []
    for w, s, z in ((node.input[1], node.input[8], node.input[9]), (node.input[2], node.input[10], node.input[11])):
        scale, zp = t[s].astype(np.float32), t[z].astype(np.float32)
        per = (slice(None), None, None) if scale.ndim == 1 else (slice(None), None, slice(None))
        weights.append(((t[w].astype(np.float32) - zp[per]) * scale[per]).transpose(0, 2, 1).copy())
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    attrs["direction"] = attrs["direction"].decode()
    inits = [const("W", weights[0]), const("R", weights[1]), const("Bias", t[node.input[3]])]
    lstm = helper.make_node("LSTM", ["X", "W", "R", "Bias"], ["Y", "Y_h", "Y_c"], name="lstm", **attrs)
    return make_model([lstm], list(q.graph.input), list(q.graph.output), inits, 14)


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_dynamic_quantize_lstm(direction, tmp_path):
    original = _float_lstm(direction)
    q = _quantized(original, tmp_path)
    graph = convert(q)
    reference = _dequantized_float_model(q)
    for i, (t, n) in enumerate([(5, 2), (3, 1)]):
        feeds = {"X": rand(t, n, INPUT, seed=10 + i)}
        compare_both_paths(graph, feeds, run_onnxruntime(reference, feeds), 1e-5, 1e-5)
        got = run_graph(graph, feeds)
        # the weights' 8-bit error alone: measured 0.003 from the original float LSTM
        for g, w in zip(got, run_onnxruntime(original, feeds)):
            assert np.abs(g - w).max() < 0.01
        # onnxruntime's kernel also quantizes X and h; the error builds up over the steps
        # (measured: up to 0.065 on Y and 0.22 on the reverse direction's cell state Y_c)
        for g, w in zip(got, run_onnxruntime(q, feeds)):
            assert np.abs(g - w).max() < 0.25


def test_dynamic_quantize_lstm_needs_constant_weights():
    node = helper.make_node("DynamicQuantizeLSTM", ["X", "W", "R", "", "", "", "", "", "ws", "wz", "rs", "rz"],
                            ["Y"], name="dql", domain=MS, hidden_size=HIDDEN)
    inits = [const("R", np.zeros((1, HIDDEN, 4 * HIDDEN), np.int8)), const("ws", np.ones(1, np.float32)),
             const("wz", np.zeros(1, np.int8)), const("rs", np.ones(1, np.float32)), const("rz", np.zeros(1, np.int8))]
    model = make_model([node], [info("X", F32, [2, 1, INPUT]), info("W", TensorProto.INT8, [1, INPUT, 4 * HIDDEN])],
                       [info("Y", F32, None)], inits, 17)
    model.opset_import.append(helper.make_opsetid(MS, 1))
    from tosaconv.diagnostics import TosaconvError
    with pytest.raises(TosaconvError, match="DynamicQuantizeLSTM W 'W' must be a constant"):
        convert(model)


@pytest.mark.parametrize("weight_type", ["QUInt8", "QInt8"])
def test_quantize_dynamic_then_onnxruntime_fusion(weight_type, tmp_path):
    """The real pipeline: ``quantize_dynamic`` (MatMulInteger form), then a session at ORT_ENABLE_EXTENDED
    saved with ``optimized_model_filepath`` fuses it into DynamicQuantizeMatMul. uint8 weights: equal to
    onnxruntime. int8 weights (full range, -127..127): onnxruntime's u8s8 kernel saturates its int16 pair
    sums on CPUs without VNNI, so the reference is the definition in integers (numpy)."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic
    r = np.random.default_rng(0)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"), helper.make_node("Add", ["m", "b"], ["y"],
                                                                                          name="add")]
    model = make_model(nodes, [info("x", F32, ["B", 16])], [info("y", F32, None)],
                       [const("w", r.standard_normal((16, 8)).astype(np.float32)), const("b", rand(8, seed=1))], 17)
    onnx.save(model, str(tmp_path / "mm.onnx"))
    quantize_dynamic(str(tmp_path / "mm.onnx"), str(tmp_path / "q.onnx"), weight_type=getattr(QuantType, weight_type),
                     extra_options={"MatMulConstBOnly": True})
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(tmp_path / "fused.onnx")
    ort.InferenceSession(str(tmp_path / "q.onnx"), options, providers=["CPUExecutionProvider"])
    fused = onnx.load(str(tmp_path / "fused.onnx"))
    assert [n.op_type for n in fused.graph.node] == ["DynamicQuantizeMatMul"]
    graph = convert(fused)
    for i, rows in enumerate((3, 1)):
        x = rand(rows, 16, low=-2, high=3, seed=5 + i)
        want = run_onnxruntime(fused, {"x": x}) if weight_type == "QUInt8" else [_integer_truth(fused, x)]
        compare_both_paths(graph, {"x": x}, want, 1e-5, 1e-5)


def _integer_truth(model, x: np.ndarray) -> np.ndarray:
    t = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    _, b, b_scale, b_zp, bias = model.graph.node[0].input
    lo, hi = min(x.min(), 0.0), max(x.max(), 0.0)
    scale = np.float32((hi - lo) / np.float32(255))
    zp = np.clip(np.rint(-lo / scale), 0, 255)
    q = np.clip(np.rint(x / scale) + zp, 0, 255)
    acc = (q - zp).astype(np.int64) @ (t[b].astype(np.int64) - t[b_zp].astype(np.int64))
    return (acc * (scale * t[b_scale].astype(np.float64)) + t[bias]).astype(np.float32)
