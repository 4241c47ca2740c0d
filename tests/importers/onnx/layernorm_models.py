"""Quantized LayerNorm test models as onnxruntime's quantizer writes them, built with ``onnx.helper``.

onnxruntime's ``quantize_static`` quantizes every intermediate of a LayerNorm spelled in primitive ops
(ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) except the centred value ``x - mean(x)``:
the variance, ``variance + eps``, the normalized value, ``* gamma`` and ``+ beta`` each get a Q/DQ
pair (PP-OCRv6_rec_small has five such LayerNorms, one with a Transpose between Sub and Pow). The two
QuantizeLinears whose float cone has no per-op integer form are the *variance* (mean of the squared
centred input) and the *normalized value* (centred input over the square root of a dequantized
variance). Scales and zero points are MinMax calibrated on seeded data, as the quantizer does, so
the models are deterministic; every QuantizeLinear output is part of the model's outputs, so a test
compares every stage in integers.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from .harness import const, info, make_model

I8, U8 = TensorProto.INT8, TensorProto.UINT8
NUMPY = {I8: np.int8, U8: np.uint8}
STAGES = ("x", "var", "var_eps", "norm", "scaled", "y")     # the quantized tensors, the model's outputs


def minmax(values: np.ndarray, act: int) -> tuple:
    """(scale, zero point) of onnxruntime's MinMax calibration (the range always includes 0)."""
    lo, hi = min(float(values.min()), 0.0), max(float(values.max()), 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    info_ = np.iinfo(NUMPY[act])
    zp = int(np.clip(round(info_.min - lo / scale), info_.min, info_.max))
    return np.float32(scale), zp


def float_stages(x: np.ndarray, axis: int, eps: float, gamma, beta) -> dict:
    """The float LayerNorm's intermediates (numpy, float64), for calibration."""
    d = x - x.mean(axis=axis, keepdims=True)
    var = (d * d).mean(axis=axis, keepdims=True)
    norm = d / np.sqrt(var + eps)
    shape = [1] * x.ndim
    shape[axis] = -1
    scaled = norm * np.reshape(gamma, shape)
    return {"x": x, "var": var, "var_eps": var + eps, "norm": norm, "scaled": scaled,
            "y": scaled + np.reshape(beta, shape)}


def _qdq(name: str, act: int, scale, zp, inits: list, nodes: list, const_data=None):
    """QuantizeLinear (or a quantized constant) + DequantizeLinear: ``name`` -> ``name_q`` -> ``name_d``."""
    inits += [const(name + "_s", np.float32(scale)), const(name + "_z", np.array(zp, NUMPY[act]))]
    if const_data is None:
        nodes.append(helper.make_node("QuantizeLinear", [name, name + "_s", name + "_z"], [name + "_q"]))
    else:
        inits.append(const(name + "_q", const_data))
    nodes.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_s", name + "_z"], [name + "_d"]))


def split_layernorm(act: int, shape, eps: float = 1e-5, transpose: bool = False, square: str = "Pow",
                    seed: int = 0, spread: float = 3.0):
    """The quantizer's QDQ LayerNorm over the last axis of ``shape`` (or, ``transpose``, over axis 1 of
    ``shape``, with a Transpose between the Sub and the squaring, as in PP-OCRv6_rec_small); ``square``
    is "Pow" (Pow(d, 2)) or "Mul" (Mul(d, d)). Returns (model, calibration input)."""
    rng = np.random.default_rng(seed)
    axis = 1 if transpose else len(shape) - 1
    n = shape[axis]
    gamma = rng.uniform(0.5, 1.5, n).astype(np.float32)
    beta = rng.uniform(-0.5, 0.5, n).astype(np.float32)
    calib = (rng.standard_normal(shape) * rng.uniform(0.2, spread, shape)).astype(np.float32)
    perm = list(range(len(shape)))
    perm[1], perm[-1] = perm[-1], perm[1]
    st = float_stages(np.transpose(calib, perm) if transpose else calib, len(shape) - 1, eps, gamma, beta)
    inits, nodes = [], []
    _qdq("x", act, *minmax(calib, act), inits, nodes)
    red = [axis] if transpose else [-1]
    sq = ["d", "two"] if square == "Pow" else ["d", "d"]
    nodes += [helper.make_node("ReduceMean", ["x_d"], ["mean"], axes=red, keepdims=1),
              helper.make_node("Sub", ["x_d", "mean"], ["d0" if transpose else "d"])]
    if transpose:
        nodes.append(helper.make_node("Transpose", ["d0"], ["d"], perm=perm))
    nodes += [helper.make_node(square, sq, ["sq"]),
              helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1], keepdims=1)]
    inits.append(const("two", np.float32(2.0)))
    _qdq("var", act, *minmax(st["var"], act), inits, nodes)
    _qdq("eps", act, *_const_q(np.array(eps, np.float32), act), inits, nodes, _const_data(eps, act))
    nodes.append(helper.make_node("Add", ["var_d", "eps_d"], ["var_eps"]))
    _qdq("var_eps", act, *minmax(st["var_eps"], act), inits, nodes)
    nodes += [helper.make_node("Sqrt", ["var_eps_d"], ["std"]), helper.make_node("Div", ["d", "std"], ["norm"])]
    _qdq("norm", act, *minmax(st["norm"], act), inits, nodes)
    _affine(act, gamma, beta, st, inits, nodes)
    outputs = [info(s + "_q", act, None) for s in STAGES]
    return make_model(nodes, [info("x", TensorProto.FLOAT, list(shape))], outputs, inits, opset=13), calib


def _const_q(value: np.ndarray, act: int) -> tuple:
    return minmax(np.asarray(value, np.float64), act)


def _const_data(value, act: int) -> np.ndarray:
    scale, zp = _const_q(np.asarray(value, np.float64), act)
    info_ = np.iinfo(NUMPY[act])
    return np.clip(np.rint(np.asarray(value) / scale) + zp, info_.min, info_.max).astype(NUMPY[act])


def _affine(act: int, gamma, beta, st: dict, inits: list, nodes: list):
    """``norm * gamma + beta``, gamma and beta dequantized int8 constants (symmetric, per tensor)."""
    for name, vec in (("gamma", gamma), ("beta", beta)):
        scale = np.float32(np.abs(vec).max() / 127.0)
        inits += [const(name, np.clip(np.rint(vec / scale), -127, 127).astype(np.int8)),
                  const(name + "_s", scale), const(name + "_z", np.int8(0))]
        nodes.append(helper.make_node("DequantizeLinear", [name, name + "_s", name + "_z"], [name + "_d"]))
    nodes.append(helper.make_node("Mul", ["norm_d", "gamma_d"], ["scaled"]))
    _qdq("scaled", act, *minmax(st["scaled"], act), inits, nodes)
    nodes.append(helper.make_node("Add", ["scaled_d", "beta_d"], ["y"]))
    _qdq("y", act, *minmax(st["y"], act), inits, nodes)


def whole_layernorm(act: int, shape, eps: float = 1e-5, spelled: str = "op", seed: int = 0, y_scale: float = 0.03):
    """``DQ -> LayerNorm over the last axis -> Q`` with nothing quantized inside: the LayerNormalization op
    (opset 17, ``spelled="op"``) or ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add (``"primitives"``),
    float gamma (signs mixed) and beta. Returns the model; its outputs are ``x_q`` and ``y_q``."""
    rng = np.random.default_rng(seed)
    n = shape[-1]
    zp = {I8: (3, -5), U8: (131, 120)}[act]
    inits = [const("gamma", rng.uniform(-1.5, 1.5, n).astype(np.float32)),
             const("beta", rng.uniform(-0.5, 0.5, n).astype(np.float32))]
    nodes = []
    _qdq("x", act, 0.03, zp[0], inits, nodes)
    if spelled == "op":
        nodes.append(helper.make_node("LayerNormalization", ["x_d", "gamma", "beta"], ["y"], axis=-1, epsilon=eps))
    else:
        inits += [const("two", np.float32(2.0)), const("eps", np.float32(eps))]
        nodes += [helper.make_node("ReduceMean", ["x_d"], ["mean"], axes=[-1], keepdims=1),
                  helper.make_node("Sub", ["x_d", "mean"], ["d"]),
                  helper.make_node("Pow", ["d", "two"], ["sq"]),
                  helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1], keepdims=1),
                  helper.make_node("Add", ["var", "eps"], ["var_eps"]),
                  helper.make_node("Sqrt", ["var_eps"], ["std"]),
                  helper.make_node("Div", ["d", "std"], ["norm"]),
                  helper.make_node("Mul", ["norm", "gamma"], ["scaled"]),
                  helper.make_node("Add", ["scaled", "beta"], ["y"])]
    inits += [const("y_s", np.float32(y_scale)), const("y_z", np.array(zp[1], NUMPY[act]))]
    nodes.append(helper.make_node("QuantizeLinear", ["y", "y_s", "y_z"], ["y_q"]))
    outputs = [info("x_q", act, None), info("y_q", act, None)]
    return make_model(nodes, [info("x", TensorProto.FLOAT, list(shape))], outputs, inits,
                      opset=17 if spelled == "op" else 13)
