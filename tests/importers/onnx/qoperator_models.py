"""One-op QOperator models (onnxruntime's com.microsoft QLinear* ops and QGemm) built with ``onnx.helper``.

Each model takes float inputs, quantizes them with ONNX QuantizeLinear to the
activation type (int8 or uint8: tosaconv refuses uint8 model inputs, so
unsigned data is made inside the model, as a quantized network does), runs
one com.microsoft op on the quantized tensors and returns its quantized
output, so comparisons are on integers. Models import ai.onnx 13 (or the
given opset) and com.microsoft 1, with IR version 10 as onnxruntime needs.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from .harness import F32, const, info
from .quant_models import I8, NUMPY, U8  # noqa: F401  (re-exported for the tests)

MS = "com.microsoft"
BOOL = TensorProto.BOOL
# (scale, int8 zero point, uint8 zero point) of each quantized input, and of the output
INPUT_PARAMS = [(0.02, 3, 131), (0.015, -6, 122), (0.03, 10, 140)]


def zp(act: int, value_i8: int, value_u8: int) -> np.ndarray:
    return np.array(value_i8 if act == I8 else value_u8, NUMPY[act])


def quantized_inputs(act: int, dims: list):
    """QuantizeLinear nodes and initializers for float inputs x0, x1, ... -> q0, q1, ...; returns
    (nodes, inits, graph inputs, per-input [q, scale, zp] names)."""
    nodes, inits, inputs, triples = [], [], [], []
    for i, d in enumerate(dims):
        scale, z8, zu8 = INPUT_PARAMS[i]
        inits += [const(f"s{i}", np.float32(scale)), const(f"z{i}", zp(act, z8, zu8))]
        nodes.append(helper.make_node("QuantizeLinear", [f"x{i}", f"s{i}", f"z{i}"], [f"q{i}"]))
        inputs.append(info(f"x{i}", F32, d))
        triples.append([f"q{i}", f"s{i}", f"z{i}"])
    return nodes, inits, inputs, triples


def qop_model(op_type: str, act: int, dims: list, out_scale: float, out_zp: tuple, layout: str = "in_out",
              extra_inputs=(), model_opset: int = 13, **attrs):
    """A model with one com.microsoft ``op_type``; ``layout`` orders its inputs: ``in_out`` (every input
    triple, then the output scale and zero point), ``out_in`` (QLinearConcat) or ``cond`` (QLinearWhere:
    a bool input ``c`` first)."""
    nodes, inits, inputs, triples = quantized_inputs(act, dims)
    inits += [const("ys", np.float32(out_scale)), const("yz", zp(act, *out_zp))]
    flat = [n for t in triples for n in t]
    names = {"in_out": flat + ["ys", "yz"], "out_in": ["ys", "yz"] + flat, "cond": ["c"] + flat + ["ys", "yz"]}
    nodes.append(helper.make_node(op_type, names[layout], ["y"], domain=MS, name=f"{op_type}_node", **attrs))
    return _model(nodes, inputs + list(extra_inputs), [info("y", act, None)], inits, model_opset)


def qgemm_model(act: int, per_column: bool, trans_b: int, alpha: float, bias: bool, float_out: bool = False):
    """QGemm of a quantized [M, 16] activation and constant int8 weights (N = 6), as the quantizer writes.

    With uint8 activations the weights keep 7 bits (|w| <= 64), as the quantizer's ``reduce_range``
    does: onnxruntime's x86 u8s8 kernels add pairs of products in int16 with saturation, so full-range
    weights give wrong results there (onnxruntime's documented u8s8 overflow), not in tosaconv."""
    k, n = 16, 6
    lo = -127 if act == I8 else -64
    nodes, inits, inputs, triples = quantized_inputs(act, [["M", k]])
    rng = np.random.default_rng(4)
    w = rng.integers(lo, -lo, (n, k) if trans_b else (k, n)).astype(np.int8)
    ws = rng.uniform(0.002, 0.01, n).astype(np.float32) if per_column else np.float32(0.006)
    inits += [const("w", w), const("ws", ws), const("wz", np.zeros(np.shape(ws), np.int8)),
              const("c", rng.integers(-4000, 4000, n).astype(np.int32))]
    node_inputs = triples[0] + ["w", "ws", "wz", "c" if bias else ""]
    if not float_out:
        inits += [const("ys", np.float32(0.04)), const("yz", zp(act, -4, 120))]
        node_inputs += ["ys", "yz"]
    nodes.append(helper.make_node("QGemm", node_inputs, ["y"], domain=MS, name="qgemm", alpha=alpha, transB=trans_b))
    return _model(nodes, inputs, [info("y", F32 if float_out else act, None)], inits, 13)


def contrib_qdq_model(elem: int, scale: float, zero_point: int):
    """float -> com.microsoft QuantizeLinear (int16/uint16) -> com.microsoft DequantizeLinear -> float,
    and the quantized tensor as a second output."""
    zp_arr = np.array(zero_point, {TensorProto.INT16: np.int16, TensorProto.UINT16: np.uint16}[elem])
    nodes = [helper.make_node("QuantizeLinear", ["x0", "s", "z"], ["q"], domain=MS),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], domain=MS)]
    return _model(nodes, [info("x0", F32, ["N", 5])], [info("q", elem, None), info("y", F32, None)],
                  [const("s", np.float32(scale)), const("z", zp_arr)], 13)


def _model(nodes, inputs, outputs, inits, opset: int):
    graph = helper.make_graph(nodes, "qoperator", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)])
    model.ir_version = 10
    return model



def direct_8bit_model(act: int, op_type: str, extra_inits=(), out_elem=None, **attrs):
    """float x0 -> QuantizeLinear -> an ai.onnx ``op_type`` on the quantized data itself, as the quantizer's
    QOperator format leaves MaxPool, Pad, ArgMax, Resize, Split and the layout ops (its "direct 8-bit" ops)."""
    nodes, inits, inputs, triples = quantized_inputs(act, [["N", 4, 6, 6]])
    names = [triples[0][0]] + [t.name if t is not None else "" for t in extra_inits]
    if op_type == "Pad":
        names.append(triples[0][2])          # the quantizer pads with the zero point
    nodes.append(helper.make_node(op_type, names, ["y"], name=f"{op_type}_node", **attrs))
    inits += [t for t in extra_inits if t is not None]
    return _model(nodes, inputs, [info("y", out_elem or act, None)], inits, 13)
