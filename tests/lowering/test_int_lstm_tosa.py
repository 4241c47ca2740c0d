"""One integer LSTM step as TOSA (lowering.int_lstm_emit): bit-exact on the official reference model
against the numpy plan (lowering.int_lstm.step), and every op on the NPU with Vela (ethos-u85-256)."""
from __future__ import annotations

import numpy as np

from tests.tosa_tools import run_reference_model
from tests.vela_tools import compile_with_vela
from tosaconv.emit import write_tosa
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.types import TensorType
from tosaconv.lowering import int_lstm
from tosaconv.lowering.int_lstm_emit import emit_sequence, emit_step

B, I, H = 3, 6, 8  # noqa: E741  (ONNX LSTM notation: batch, input size, hidden size)


def _direction() -> int_lstm.IntLstmDirection:
    return _direction_seeded(5)


def _direction_seeded(seed: int) -> int_lstm.IntLstmDirection:
    rng = np.random.default_rng(seed)
    w, r, bias = rng.normal(0, 0.4, (4 * H, I)), rng.normal(0, 0.4, (4 * H, H)), rng.normal(0, 0.4, 8 * H)
    return int_lstm.quantize_direction(w, r, bias, 0.02, 3, 1.0 / 128, -5, table_bits=8)


def _graph(d) -> Graph:
    g = Graph()
    x = g.add_input("x", TensorType(DType.INT8, (1, B, 1, I)))
    h = g.add_input("h", TensorType(DType.INT8, (1, B, 1, H)))
    c = g.add_input("c", TensorType(DType.INT16, (1, B, 1, H)))
    h_new, c_new = emit_step(Builder(g, Location("LSTM", "lstm", "onnx")), d, x, h, c)
    g.set_outputs([h_new, c_new], ["h_new", "c_new"])
    return g


def _inputs() -> dict:
    rng = np.random.default_rng(9)
    return {"x": rng.integers(-128, 128, (1, B, 1, I)).astype(np.int8),
            "h": rng.integers(-128, 128, (1, B, 1, H)).astype(np.int8),
            "c": rng.integers(-40000, 40000, (1, B, 1, H)).clip(-32768, 32767).astype(np.int16)}


def test_step_is_bit_exact_with_the_plan_on_the_reference_model(tmp_path):
    d = _direction()
    feeds = _inputs()
    out = run_reference_model(write_tosa(_graph(d)), feeds, ["h_new", "c_new"], tmp_path)
    h_ref, c_ref = int_lstm.step(d, feeds["x"].reshape(B, I), feeds["h"].reshape(B, H),
                                 feeds["c"].reshape(B, H))
    np.testing.assert_array_equal(out["h_new"].reshape(B, H), h_ref)
    np.testing.assert_array_equal(out["c_new"].reshape(B, H), c_ref)


def test_step_compiles_on_vela_all_npu(tmp_path):
    path = tmp_path / "lstm_step.tosa"
    path.write_bytes(write_tosa(_graph(_direction())))
    result = compile_with_vela(path, tmp_path / "vela")
    assert result.cpu_ops == 0 and result.npu_percent == 100.0, result.stdout[-2000:]
    print("vela cycles_total", result.cycles_total, "npu ops", result.npu_ops)


T = 2


def _bidirectional_graph(fwd, rev) -> Graph:
    g = Graph()
    x = g.add_input("x", TensorType(DType.INT8, (T, B, 1, I)))
    outs = []
    for name, d, reverse in (("f", fwd, False), ("r", rev, True)):
        h = g.add_input("h" + name, TensorType(DType.INT8, (1, B, 1, H)))
        c = g.add_input("c" + name, TensorType(DType.INT16, (1, B, 1, H)))
        outs += emit_sequence(Builder(g, Location("LSTM", "lstm_" + name, "onnx")), d, x, h, c, reverse)
    g.set_outputs(outs, ["yf", "hf_out", "cf_out", "yr", "hr_out", "cr_out"])
    return g


def _bidirectional_inputs() -> dict:
    rng = np.random.default_rng(13)
    feeds = {"x": rng.integers(-128, 128, (T, B, 1, I)).astype(np.int8)}
    for name in "fr":
        feeds["h" + name] = rng.integers(-128, 128, (1, B, 1, H)).astype(np.int8)
        feeds["c" + name] = rng.integers(-30000, 30000, (1, B, 1, H)).astype(np.int16)
    return feeds


def test_bidirectional_sequence_is_bit_exact_with_the_plan(tmp_path):
    fwd, rev = _direction(), _direction_seeded(6)
    feeds = _bidirectional_inputs()
    names = ["yf", "hf_out", "cf_out", "yr", "hr_out", "cr_out"]
    out = run_reference_model(write_tosa(_bidirectional_graph(fwd, rev)), feeds, names, tmp_path)
    for tag, d, reverse in (("f", fwd, False), ("r", rev, True)):
        y, h, c = int_lstm.run(d, feeds["x"].reshape(T, B, I), feeds["h" + tag].reshape(B, H),
                               feeds["c" + tag].reshape(B, H), reverse=reverse)
        np.testing.assert_array_equal(out["y" + tag].reshape(T, B, H), y)
        np.testing.assert_array_equal(out["h" + tag + "_out"].reshape(B, H), h)
        np.testing.assert_array_equal(out["c" + tag + "_out"].reshape(B, H), c)


def test_bidirectional_sequence_compiles_on_vela_all_npu(tmp_path):
    path = tmp_path / "lstm_seq.tosa"
    path.write_bytes(write_tosa(_bidirectional_graph(_direction(), _direction_seeded(6))))
    result = compile_with_vela(path, tmp_path / "vela")
    assert result.cpu_ops == 0 and result.npu_percent == 100.0, result.stdout[-2000:]
    print("vela cycles_total", result.cycles_total, "npu ops", result.npu_ops)


def _silero_form(seed: int) -> int_lstm.IntLstmDirection:
    """What silero's LSTM gets: h Q0.7, Y at its own scale clamped by a Relu, a Q8.7 cell carried between
    calls, 16-bit weights as int8 pairs."""
    rng = np.random.default_rng(seed)
    w, r, bias = rng.normal(0, 0.4, (4 * H, I)), rng.normal(0, 0.4, (4 * H, H)), rng.normal(0, 0.4, 8 * H)
    return int_lstm.quantize_direction(w, r, bias, 0.02, 3, int_lstm.H_SCALE, 0, table_bits=8,
                                       y_out=int_lstm.YOut.of(1.0 / 255, 0, 0, 127),
                                       cell_bits=int_lstm.STATE_CELL_BITS, split_weights=True)


def test_silero_form_sequence_is_bit_exact_with_the_plan_and_all_npu(tmp_path):
    fwd, rev = _silero_form(21), _silero_form(22)
    feeds = _bidirectional_inputs()
    names = ["yf", "hf_out", "cf_out", "yr", "hr_out", "cr_out"]
    tosa = write_tosa(_bidirectional_graph(fwd, rev))
    out = run_reference_model(tosa, feeds, names, tmp_path / "ref")
    for tag, d, reverse in (("f", fwd, False), ("r", rev, True)):
        y, h, c = int_lstm.run(d, feeds["x"].reshape(T, B, I), feeds["h" + tag].reshape(B, H),
                               feeds["c" + tag].reshape(B, H), reverse=reverse)
        assert y.min() == 0 and y.max() > 0          # the Relu's clamp is at work
        np.testing.assert_array_equal(out["y" + tag].reshape(T, B, H), y)
        np.testing.assert_array_equal(out["h" + tag + "_out"].reshape(B, H), h)
        np.testing.assert_array_equal(out["c" + tag + "_out"].reshape(B, H), c)
    path = tmp_path / "lstm_silero.tosa"
    path.write_bytes(tosa)
    result = compile_with_vela(path, tmp_path / "vela")
    assert result.cpu_ops == 0 and result.npu_percent == 100.0, result.stdout[-2000:]
