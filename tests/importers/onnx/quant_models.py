"""Quantized test models built with ``onnx.helper``, shared by the ``test_quant_*`` modules.

QDQ models take a float input, quantize it (QuantizeLinear, int8 or uint8), dequantize it,
run one float op on it with dequantized int8 weights (per tensor or per output channel) and
quantize the result: the pattern the QDQ folding turns into integer TOSA. The model output is
the quantized tensor itself, so comparisons are on integers. Weights, scales and zero points
come from a seeded generator, so every model is deterministic.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from tosaconv import api

from .harness import const, info, make_model

I8, U8, I32 = TensorProto.INT8, TensorProto.UINT8, TensorProto.INT32
NUMPY = {I8: np.int8, U8: np.uint8}
ZERO_POINTS = {I8: (3, -5), U8: (131, 120)}       # (input, output) zero point per activation type


def qint(*shape, dtype=np.int8, seed: int = 0) -> np.ndarray:
    info_ = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info_.min, info_.max + 1, shape).astype(dtype)


def weights(name: str, shape, axis: int, per_channel: bool, seed: int):
    """Initializers, the DequantizeLinear node (``name`` -> ``name_d``) and the scale of symmetric int8 weights."""
    rng = np.random.default_rng(seed)
    w = rng.integers(-127, 128, shape).astype(np.int8)
    scale = rng.uniform(0.002, 0.01, shape[axis]) if per_channel else np.array(0.004)
    scale = scale.astype(np.float32)
    inits = [const(name, w), const(name + "_s", scale), const(name + "_z", np.zeros(np.shape(scale), np.int8))]
    node = helper.make_node("DequantizeLinear", [name, name + "_s", name + "_z"], [name + "_d"], axis=axis)
    return inits, [node], scale


def quantized_input(name: str, act: int, scale: float, zp: int):
    """Initializers and the QuantizeLinear + DequantizeLinear pair for float input ``name`` -> ``name_d``."""
    inits = [const(name + "_s", np.float32(scale)), const(name + "_z", np.array(zp, NUMPY[act]))]
    names = [name + "_q", name + "_s", name + "_z"]
    return inits, [helper.make_node("QuantizeLinear", [name, name + "_s", name + "_z"], [name + "_q"]),
                   helper.make_node("DequantizeLinear", names, [name + "_d"])]


def int32_bias(name: str, count: int, x_scale: float, w_scale: np.ndarray, seed: int):
    """An int32 bias dequantized with scale ``x_scale * w_scale`` (as quantizers write it)."""
    scale = np.float32(x_scale) * w_scale
    b = np.random.default_rng(seed).integers(-3000, 3000, count).astype(np.int32)
    inits = [const(name, b), const(name + "_s", scale)]
    return inits, [helper.make_node("DequantizeLinear", [name, name + "_s"], [name + "_d"], axis=0)]


def finish(nodes, inits, inputs, act: int, out_scale: float, opset: int = 13):
    """Append ``QuantizeLinear(c)`` to the ``act`` type and build the model (output ``y``)."""
    inits = list(inits) + [const("y_s", np.float32(out_scale)), const("y_z", np.array(ZERO_POINTS[act][1],
                                                                                         NUMPY[act]))]
    nodes = list(nodes) + [helper.make_node("QuantizeLinear", ["c", "y_s", "y_z"], ["y"])]
    return make_model(nodes, inputs, [info("y", act, None)], inits, opset=opset)


def qdq_conv(act: int, per_channel: bool, cin: int = 3, cout: int = 8, group: int = 1, bias: bool = True,
             activation=None, **conv_attrs):
    """``activation`` between the Conv and the last QuantizeLinear: None, "Relu", or Clip bounds (lo, hi)."""
    x_inits, x_nodes = quantized_input("x", act, 0.02, ZERO_POINTS[act][0])
    w_inits, w_nodes, w_scale = weights("w", (cout, cin // group, 3, 3), 0, per_channel, seed=1)
    b_inits, b_nodes = int32_bias("b", cout, 0.02, w_scale, seed=2) if bias else ([], [])
    conv = helper.make_node("Conv", ["x_d", "w_d"] + (["b_d"] if bias else []), ["c0" if activation else "c"],
                            group=group, pads=[1, 1, 1, 1], **conv_attrs)
    tail, bounds = [], []
    if activation == "Relu":
        tail = [helper.make_node("Relu", ["c0"], ["c"])]
    elif activation:
        bounds = [const("lo", np.float32(activation[0])), const("hi", np.float32(activation[1]))]
        tail = [helper.make_node("Clip", ["c0", "lo", "hi"], ["c"])]
    return finish(x_nodes + w_nodes + b_nodes + [conv] + tail, x_inits + w_inits + b_inits + bounds,
                  [info("x", TensorProto.FLOAT, ["N", cin, "H", "W"])], act, 0.05)


def qdq_matmul(act: int, per_channel: bool, k: int = 16, n: int = 12):
    x_inits, x_nodes = quantized_input("x", act, 0.02, ZERO_POINTS[act][0])
    w_inits, w_nodes, _ = weights("w", (k, n), 1, per_channel, seed=3)
    mm = helper.make_node("MatMul", ["x_d", "w_d"], ["c"])
    return finish(x_nodes + w_nodes + [mm], x_inits + w_inits, [info("x", TensorProto.FLOAT, ["N", "S", k])],
                  act, 0.03)


def qdq_matmul_large_ratio():
    """sx * sw / sy = 2: RESCALE's shift is 29, so the int32 accumulator is clamped before it."""
    x_inits, x_nodes = quantized_input("x", I8, 0.5, 0)
    w = np.random.default_rng(8).integers(-2, 3, (16, 6)).astype(np.int8)
    inits = x_inits + [const("w", w), const("w_s", np.float32(1.0))]
    nodes = x_nodes + [helper.make_node("DequantizeLinear", ["w", "w_s"], ["w_d"]),
                       helper.make_node("MatMul", ["x_d", "w_d"], ["c"])]
    return finish(nodes, inits, [info("x", TensorProto.FLOAT, ["N", 16])], I8, 0.25)


def qdq_gemm(act: int, per_channel: bool, k: int = 16, n: int = 12):
    x_inits, x_nodes = quantized_input("x", act, 0.02, ZERO_POINTS[act][0])
    w_inits, w_nodes, _ = weights("w", (n, k), 0, per_channel, seed=4)
    c = const("bias", np.random.default_rng(5).uniform(-1, 1, n).astype(np.float32))
    gemm = helper.make_node("Gemm", ["x_d", "w_d", "bias"], ["c"], transB=1, alpha=0.7, beta=1.3)
    return finish(x_nodes + w_nodes + [gemm], x_inits + w_inits + [c], [info("x", TensorProto.FLOAT, ["N", k])],
                  act, 0.03)


def qdq_add(act: int):
    a_inits, a_nodes = quantized_input("x", act, 0.02, ZERO_POINTS[act][0])
    b_inits, b_nodes = quantized_input("x2", act, 0.015, ZERO_POINTS[act][0] - 9)
    add = helper.make_node("Add", ["x_d", "x2_d"], ["c"])
    inputs = [info("x", TensorProto.FLOAT, ["N", 3, "W"]), info("x2", TensorProto.FLOAT, [1, 3, 1])]
    return finish(a_nodes + b_nodes + [add], a_inits + b_inits, inputs, act, 0.025)


def qdq_two_convs(act: int):
    """x -> Q -> DQ -> Conv -> Relu -> Q -> DQ -> Conv -> Q: the integer tensor between the convs is
    written by one fold and read by the next."""
    x_inits, x_nodes = quantized_input("x", act, 0.02, ZERO_POINTS[act][0])
    w1_inits, w1_nodes, _ = weights("w1", (6, 3, 3, 3), 0, True, seed=6)
    w2_inits, w2_nodes, _ = weights("w2", (4, 6, 3, 3), 0, False, seed=7)
    m_inits, m_nodes = quantized_input("m", act, 0.08, ZERO_POINTS[act][1])
    nodes = x_nodes + w1_nodes + w2_nodes + [
        helper.make_node("Conv", ["x_d", "w1_d"], ["m0"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["m0"], ["m"])] + m_nodes + [
        helper.make_node("Conv", ["m_d", "w2_d"], ["c"], strides=[2, 2])]
    return finish(nodes, x_inits + w1_inits + w2_inits + m_inits,
                  [info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])], act, 0.1)


def op_histogram(graph, bindings: dict) -> dict:
    """``{(op name, first operand dtype): count}`` of the static program at ``bindings``."""
    hist: dict = {}
    for op in api.specialize(graph, bindings).ops:
        key = (op.op.name, op.operands[0].type.dtype.value if op.operands else None)
        hist[key] = hist.get(key, 0) + 1
    return hist


def output_core(graph, bindings: dict):
    """The op that computes the static program's first output, below RESCALEs, clamps, layout ops and
    additions of constants (biases)."""
    v = api.specialize(graph, bindings).outputs[0]
    while v.producer.op.name in ("RESCALE", "TRANSPOSE", "RESHAPE", "MAXIMUM", "MINIMUM", "IDENTITY", "CLAMP") or \
            (v.producer.op.name == "ADD" and v.producer.operands[1].producer.op.name == "CONST"):
        v = v.producer.operands[0]
    return v.producer
