"""Whole models from onnxruntime's own quantizer: a small float CNN (``quantizer_models.small_cnn``)
quantized by ``quantize_static`` in QOperator format (com.microsoft QLinear* ops and QGemm), in QDQ
format with the com.microsoft QuantizeLinear/DequantizeLinear, and in QDQ format at opsets 10 to 12.

Each converted program runs at two batch sizes and is compared with onnxruntime on both float
outputs (probabilities and logits) in units of the output's quantization scale (LSB). Measured
with these seeds: **0 LSB** for every QOperator configuration below (int8, and uint8 with the
quantizer's ``reduce_range``), **1 LSB** for the QDQ models (contrib Q/DQ, and opsets 10 to 12),
where onnxruntime fuses the QDQ islands into its own kernels; the tests assert exactly that
(0 for QOperator, at most 1 for QDQ), since tosaconv's integer RESCALE rounds ties half up where
onnxruntime rounds them to even. uint8 activations are quantized with ``reduce_range`` because
onnxruntime's x86 u8s8 kernels saturate int16 pair sums with full-range int8 weights (its own
documented overflow), which is a wrong answer there, not a difference in rounding. The official
reference model runs each emitted ``.tosa`` and must agree with our numpy run.
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest

from tosaconv.emit import read_tosa

from .harness import check_reference_model, convert, run_graph, run_onnxruntime, specialize_and_emit
from .quantizer_models import calibration_inputs, quantize, small_cnn

MAX_LSB = 1
QOPERATOR_OPS = {"QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearAveragePool",
                 "QLinearGlobalAveragePool", "QLinearConcat", "QGemm", "QLinearSoftmax"}
CONFIGS = {   # name: (activation type, per-channel weights, reduce_range)
    "int8_per_channel": ("int8", True, False),
    "int8_per_tensor": ("int8", False, False),
    "uint8_per_channel": ("uint8", True, True),
}


def _output_scales(model: onnx.ModelProto) -> dict:
    """The scale of the DequantizeLinear that produces each float graph output."""
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    producers = {o: n for n in model.graph.node for o in n.output}
    return {o.name: float(inits[producers[o.name].input[1]]) for o in model.graph.output}


def _check(model, reference=None, tmp_path=None) -> float:
    """Compare at batch 2 and 3; returns the largest difference in LSB."""
    graph, scales, worst = convert(model), _output_scales(model), 0.0
    for i, batch in enumerate((2, 3)):
        feeds = calibration_inputs(1, batch, seed=40 + i)[0]
        want = run_onnxruntime(reference or model, feeds)
        static, tosa = specialize_and_emit(graph, {"x": feeds["x"].shape})
        emitted = run_graph(read_tosa(tosa), feeds)
        for got in (run_graph(graph, feeds), emitted):
            for name, g, w in zip(graph.output_names, got, want):
                lsb = np.abs(g.astype(np.float64) - w) / scales[name]
                assert lsb.max() <= MAX_LSB + 1e-3, f"batch {batch} output {name}: {lsb.max():.2f} LSB"
                worst = max(worst, float(lsb.max()))
        check_reference_model(tosa, static, feeds, emitted, tmp_path / str(i))
    return worst


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_qoperator_cnn(config, tmp_path):
    act, per_channel, reduce_range = CONFIGS[config]
    model = quantize(small_cnn(), qoperator=True, activation=act, per_channel=per_channel,
                     reduce_range=reduce_range)
    contrib = {n.op_type for n in model.graph.node if n.domain == "com.microsoft"}
    assert contrib == QOPERATOR_OPS, "the quantizer wrote other ops than this test expects"
    assert _check(model, tmp_path=tmp_path) == 0.0


@pytest.mark.parametrize("config", ["int8_per_channel", "uint8_per_channel"])
def test_qdq_with_contrib_quantize_ops(config, tmp_path):
    act, per_channel, reduce_range = CONFIGS[config]
    model = quantize(small_cnn(), qoperator=False, activation=act, per_channel=per_channel,
                     reduce_range=reduce_range, extra_options={"UseQDQContribOps": True})
    assert {n.op_type for n in model.graph.node if n.domain == "com.microsoft"} == {"QuantizeLinear",
                                                                                    "DequantizeLinear"}
    assert _check(model, tmp_path=tmp_path) <= MAX_LSB + 1e-3


@pytest.mark.parametrize("opset", [10, 11, 12])
def test_qdq_below_opset_13_reads_dequantize_axis_as_per_axis(opset, tmp_path):
    """At opsets 10-12 the quantizer writes per-channel DequantizeLinear nodes with ``axis``, which
    version 10 does not have; onnxruntime refuses such a model, so it runs the same model with its
    opset import raised to 13 (where DequantizeLinear takes ``axis``; no other op of this network
    changes meaning), and tosaconv, reading ``axis`` as per-axis, must agree with that."""
    model = quantize(small_cnn(opset), qoperator=False, activation="int8", per_channel=True)
    assert any(n.op_type == "DequantizeLinear" and any(a.name == "axis" for a in n.attribute)
               for n in model.graph.node)
    with pytest.raises(Exception, match="Unrecognized attribute: axis"):
        run_onnxruntime(model, calibration_inputs(1)[0])
    at_13 = onnx.ModelProto()
    at_13.CopyFrom(model)
    at_13.opset_import[0].version = 13
    assert _check(model, reference=at_13, tmp_path=tmp_path) <= MAX_LSB + 1e-3
