"""A small float CNN built with ``onnx.helper``, and its quantization by onnxruntime's own quantizer.

The network has the ops a mobile CNN has: Conv + Relu, a residual Add,
HardSwish (or its HardSigmoid form before opset 14), a swish (Sigmoid then Mul), LeakyRelu, AveragePool,
GlobalAveragePool on two branches, Concat, Flatten, Gemm and Softmax; it
returns the probabilities and the logits (whose finer scale shows more).
:func:`quantize` runs ``onnxruntime.quantization.quantize_static`` on it
with a tiny deterministic calibration set, in QOperator or QDQ format, so
the tests see exactly what users of that tool get.
"""
from __future__ import annotations

import os
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CHANNELS = 8


def _w(name: str, shape, seed: int, scale: float = 0.3):
    return numpy_helper.from_array(np.random.default_rng(seed).normal(0, scale, shape).astype(np.float32), name)


def _hard_swish(opset: int) -> list:
    """HardSwish from opset 14; before, its definition x * HardSigmoid(x) with alpha 1/6."""
    if opset >= 14:
        return [helper.make_node("HardSwish", ["res"], ["hs"], name="hardswish")]
    return [helper.make_node("HardSigmoid", ["res"], ["hsig"], alpha=1 / 6, name="hardsigmoid"),
            helper.make_node("Mul", ["res", "hsig"], ["hs"], name="hardswish")]


def small_cnn(opset: int = 14) -> onnx.ModelProto:
    c = CHANNELS
    inits = [_w("w1", (c, 3, 3, 3), 1), _w("b1", (c,), 2, 0.1), _w("w2", (c, c, 3, 3), 3, 0.15),
             _w("b2", (c,), 4, 0.1), _w("w3", (c, c, 1, 1), 5), _w("b3", (c,), 6, 0.1),
             _w("w4", (10, 2 * c), 7), _w("b4", (10,), 8, 0.1)]
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        n("Relu", ["c1"], ["r1"], name="relu1"),
        n("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        n("Add", ["c2", "r1"], ["res"], name="residual"),
        *_hard_swish(opset),
        n("Conv", ["hs", "w3", "b3"], ["c3"], name="conv3"),
        n("Sigmoid", ["c3"], ["sg"], name="sigmoid"),
        n("Mul", ["c3", "sg"], ["sw"], name="swish"),
        n("LeakyRelu", ["sw"], ["lr"], alpha=0.1, name="leaky"),
        n("AveragePool", ["lr"], ["ap"], kernel_shape=[2, 2], strides=[2, 2], name="avgpool"),
        n("GlobalAveragePool", ["ap"], ["g1"], name="gap1"),
        n("GlobalAveragePool", ["hs"], ["g2"], name="gap2"),
        n("Concat", ["g1", "g2"], ["cat"], axis=1, name="concat"),
        n("Flatten", ["cat"], ["flat"], name="flatten"),
        n("Gemm", ["flat", "w4", "b4"], ["logits"], transB=1, name="fc"),
        n("Softmax", ["logits"], ["y"], axis=1, name="softmax"),
    ]
    graph = helper.make_graph(nodes, "small_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                 ["N", 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10]),
                               helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def calibration_inputs(count: int = 4, batch: int = 1, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [{"x": rng.uniform(-1, 1, (batch, 3, 16, 16)).astype(np.float32)} for _ in range(count)]


def quantize(model: onnx.ModelProto, qoperator: bool, activation: str = "int8", per_channel: bool = True,
             reduce_range: bool = False, extra_options=None, calibration=None,
             pre_process: bool = False) -> onnx.ModelProto:
    """``model`` quantized by onnxruntime's ``quantize_static`` (int8 weights; ``activation`` int8 or
    uint8), calibrated on ``calibration`` (feed dicts; default :func:`calibration_inputs`), after
    ``quant_pre_process`` if ``pre_process`` (symbolic shape inference skipped where it fails)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    feeds = calibration if calibration is not None else calibration_inputs()

    class Reader(CalibrationDataReader):
        def __init__(self):
            self._it = iter(feeds)

        def get_next(self):
            return next(self._it, None)

    act = {"int8": QuantType.QInt8, "uint8": QuantType.QUInt8}[activation]
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "float.onnx"), os.path.join(d, "quant.onnx")
        onnx.save(model, src)
        if pre_process:
            src = _pre_process(src, os.path.join(d, "pre.onnx"))
        quantize_static(src, dst, Reader(), quant_format=QuantFormat.QOperator if qoperator else QuantFormat.QDQ,
                        activation_type=act, weight_type=QuantType.QInt8, per_channel=per_channel,
                        reduce_range=reduce_range, extra_options=extra_options or {})
        return onnx.load(dst)


def _pre_process(src: str, dst: str) -> str:
    from onnxruntime.quantization.shape_inference import quant_pre_process
    try:
        quant_pre_process(src, dst)
    except Exception:  # onnxruntime's symbolic shape inference gives up on some models; it is optional
        quant_pre_process(src, dst, skip_symbolic_shape=True)
    return dst
