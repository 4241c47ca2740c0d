"""The integer TFLite sample models, quantized the way TFLite's converter quantizes them.

Imported by ``generate.py`` (which writes the files). Float weights come from a
seeded generator and are quantized here with the converter's rules, so the
bytes are deterministic:

- activations: int8 asymmetric, ``scale = (max - min) / 255`` over the float
  range (widened to hold 0.0) and the zero point that makes 0.0 exact; int16
  symmetric, ``scale = max|x| / 32767``, zero point 0. The ranges below are
  fixed numbers (what these weights give on uniform random images in [-1, 1],
  rounded up), not computed, so no float arithmetic of the host enters them;
- weights: symmetric int8, ``max|w| / 127`` per output channel (CONV_2D,
  DEPTHWISE_CONV_2D and FULLY_CONNECTED; :func:`quantize_weights` can also
  make one scale per tensor, which the samples do not use, see ``_int8_core``);
- biases: ``round(b / (s_in * s_w[c]))``, int32 (int64 for int16x8), with
  scale ``s_in * s_w[c]`` and zero point 0;
- op versions as tflite/tools/versioning/op_version.cc assigns them to these types.

Models: ``int8_cnn`` (CONV_2D per channel + RELU6, DEPTHWISE_CONV_2D per
channel, residual ADD + RELU, MAX_POOL_2D, AVERAGE_POOL_2D, MEAN,
FULLY_CONNECTED, SOFTMAX with the int8 output 1/256, -128), the same core with
float32 I/O (QUANTIZE ... DEQUANTIZE), with uint8 I/O (QUANTIZE uint8 -> int8
and int8 -> uint8, what ``inference_input_type=tf.uint8`` emits), with a
dynamic batch, and ``int16x8`` (int16 activations, int8 weights, int64 biases:
CONV_2D, ADD, RELU, MAX_POOL_2D, AVERAGE_POOL_2D, MEAN, FULLY_CONNECTED).
"""
from __future__ import annotations

import numpy as np

from tosaconv.importers.tflite.builder import ModelBuilder

SAME, VALID = 0, 1
NONE, RELU, RELU6 = 0, 1, 3
_OPTIONS = {"CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
            "FULLY_CONNECTED": "FullyConnectedOptions"}
# op_version.cc: int8 CONV_2D / DEPTHWISE_CONV_2D 3, FULLY_CONNECTED 4; the int16x8 forms
# (int8 weights, no quantized_bias_type) fall through to 1.
_VERSION = {("CONV_2D", "INT8"): 3, ("DEPTHWISE_CONV_2D", "INT8"): 3, ("FULLY_CONNECTED", "INT8"): 4}
_POOL_VERSION = {"INT8": 2, "INT16": 3}     # MAX/AVERAGE_POOL_2D, MEAN, SOFTMAX, ADD(int16 general), RELU(int16)


def act_quant(lo: float, hi: float, dtype: str = "INT8") -> tuple:
    """(scales, zero points, axis) for a calibrated float range, as the converter chooses them."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if dtype == "INT16":
        return [float(np.float32(max(-lo, hi) / 32767))], [0], 0
    scale = float(np.float32((hi - lo) / 255))
    zp = -128 - lo / scale
    zp = int(np.clip(np.sign(zp) * np.floor(abs(zp) + 0.5), -128, 127))   # std::round: half away from zero
    return [scale], [zp], 0


def quantize_weights(w: np.ndarray, axis) -> tuple:
    """Symmetric int8 weights, ``max|w| / 127`` per channel along ``axis`` (None: one scale)."""
    other = tuple(i for i in range(w.ndim) if i != axis)
    scales = (np.max(np.abs(w), axis=other, keepdims=True) / np.float32(127)).astype(np.float32)
    # np.round ties to even where the converter rounds half away; float32 weights over these scales
    # never land on a tie, and the sample only needs to be deterministic, not a converter replica
    q = np.clip(np.round(w / scales), -127, 127).astype(np.int8)
    return q, [float(s) for s in scales.reshape(-1)]


class QNet:
    """A ModelBuilder that quantizes weights and biases and adds the batch dimension to every shape."""

    def __init__(self, description: str, batch: int, seed: int, act: str = "INT8"):
        self.m = ModelBuilder(description)
        self.batch, self.act = batch, act
        self.rng = np.random.default_rng(seed)

    def tensor(self, name, shape, quant, dtype=None, is_input=False) -> int:
        """A [batch, *shape] tensor; a dynamic batch (-1) goes in shape_signature."""
        sig = [-1, *shape] if self.batch < 0 else None
        make = self.m.input if is_input else self.m.tensor
        return make(name, [max(self.batch, 1), *shape], dtype or self.act, signature=sig, quant=quant)

    def scale(self, t: int) -> float:
        return self.m.tensors[t].quant[0][0]

    def weighted(self, op, x, out, w_shape, axis, **fields):
        """CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED with seeded float weights quantized here."""
        name = self.m.tensors[out].name
        w = (self.rng.standard_normal(w_shape) * 0.3).astype(np.float32)
        b = (self.rng.standard_normal(w_shape[axis or 0]) * 0.1).astype(np.float32)
        qw, w_scales = quantize_weights(w, axis)
        b_scales = [float(np.float32(self.scale(x)) * np.float32(s)) for s in w_scales]
        bias_type = np.int64 if self.act == "INT16" else np.int32
        qb = np.round(b / np.array(b_scales * (len(b) // len(b_scales)), np.float32)).astype(bias_type)
        wt = self.m.const(f"{name}/weights", qw, quant=(w_scales, [0] * len(w_scales), axis or 0))
        bt = self.m.const(f"{name}/bias", qb, quant=(b_scales, [0] * len(b_scales), 0))
        version = _VERSION.get((op, self.act), 1)
        self.m.op(op, [x, wt, bt], [out], _OPTIONS[op], version=version, **fields)
        return out

    def pool(self, op, x, out, size, stride, padding):
        self.m.op(op, [x], [out], "Pool2DOptions", version=_POOL_VERSION[self.act], Padding=padding,
                  StrideH=stride, StrideW=stride, FilterHeight=size, FilterWidth=size)
        return out

    def mean(self, x, out):
        axes = self.m.const(f"{self.m.tensors[out].name}/axes", np.array([1, 2], np.int32))
        self.m.op("MEAN", [x, axes], [out], "ReducerOptions", version=_POOL_VERSION[self.act], KeepDims=False)
        return out


def _int8_core(net: QNet, x: int) -> int:
    """image [N,16,16,3] int8 -> class probabilities [N,10] int8 (scale 1/256, zero point -128)."""
    t = net.tensor
    c1 = net.weighted("CONV_2D", x, t("conv1", [8, 8, 16], act_quant(0.0, 3.5)), [16, 3, 3, 3], 0,
                      Padding=SAME, StrideH=2, StrideW=2, FusedActivationFunction=RELU6)
    d1 = net.weighted("DEPTHWISE_CONV_2D", c1, t("dw1", [8, 8, 16], act_quant(-2.5, 2.5)), [1, 3, 3, 16], 3,
                      Padding=SAME, StrideH=1, StrideW=1, DepthMultiplier=1)
    add_q = act_quant(0.0, 4.5)
    res = t("residual", [8, 8, 16], add_q)
    net.m.op("ADD", [c1, d1], [res], "AddOptions", version=2, FusedActivationFunction=RELU)
    # the pools keep their input's parameters, as the converter writes them
    p1 = net.pool("MAX_POOL_2D", res, t("maxpool", [4, 4, 16], add_q), 2, 2, VALID)
    p2 = net.pool("AVERAGE_POOL_2D", p1, t("avgpool", [4, 4, 16], add_q), 3, 1, SAME)
    g = net.mean(p2, t("mean", [16], act_quant(0.0, 1.8)))
    # per-channel weights: tosaconv's per-tensor int8 FULLY_CONNECTED rounds twice where LiteRT 2.3's
    # reference kernel rounds once, so a per-tensor FC here would differ from LiteRT by 1 on some logits
    logits = net.weighted("FULLY_CONNECTED", g, t("logits", [10], act_quant(-2.0, 3.5)), [10, 16], 0)
    probs = t("probs", [10], ([1.0 / 256], [-128], 0))
    net.m.op("SOFTMAX", [logits], [probs], "SoftmaxOptions", version=2, Beta=1.0)
    return probs


IMAGE_Q = act_quant(-1.0, 1.0)


def int8_cnn(batch: int = 1) -> bytes:
    """Full-integer int8 CNN with int8 input and output (batch -1: dynamic)."""
    net = QNet("tosaconv sample: full-integer int8 CNN", batch, seed=11)
    net.m.output(_int8_core(net, net.tensor("image", [16, 16, 3], IMAGE_Q, is_input=True)))
    return net.m.finish()


def int8_float_io() -> bytes:
    """The int8 CNN behind float32 I/O: QUANTIZE at the input, DEQUANTIZE at the output."""
    net = QNet("tosaconv sample: int8 CNN with float input and output", 1, seed=11)
    image = net.tensor("image", [16, 16, 3], None, "FLOAT32", is_input=True)
    xq = net.tensor("image/quantized", [16, 16, 3], IMAGE_Q)
    net.m.op("QUANTIZE", [image], [xq], version=1)
    probs = net.tensor("probs/float", [10], None, "FLOAT32")
    net.m.op("DEQUANTIZE", [_int8_core(net, xq)], [probs], version=2)
    net.m.output(probs)
    return net.m.finish()


def uint8_io() -> bytes:
    """The int8 CNN behind uint8 I/O: requantizing QUANTIZEs (zero points shifted by 128)."""
    net = QNet("tosaconv sample: int8 CNN with uint8 input and output", 1, seed=11)
    scales, zps, _ = IMAGE_Q
    image = net.tensor("image", [16, 16, 3], (scales, [zps[0] + 128], 0), "UINT8", is_input=True)
    xq = net.tensor("image/int8", [16, 16, 3], IMAGE_Q)
    net.m.op("QUANTIZE", [image], [xq], version=1)
    probs = net.tensor("probs/uint8", [10], ([1.0 / 256], [0], 0), "UINT8")
    net.m.op("QUANTIZE", [_int8_core(net, xq)], [probs], version=1)
    net.m.output(probs)
    return net.m.finish()


def int16x8() -> bytes:
    """int16 activations (zero point 0), int8 weights per channel, int64 biases."""
    net = QNet("tosaconv sample: int16x8 CNN", 1, seed=12, act="INT16")
    t = net.tensor
    x = t("image", [8, 8, 4], act_quant(-1.0, 1.0, "INT16"), is_input=True)
    c1 = net.weighted("CONV_2D", x, t("conv1", [8, 8, 8], act_quant(0.0, 2.6, "INT16")), [8, 3, 3, 4], 0,
                      Padding=SAME, StrideH=1, StrideW=1, FusedActivationFunction=RELU)
    c2 = net.weighted("CONV_2D", c1, t("conv2", [8, 8, 8], act_quant(-2.1, 2.1, "INT16")), [8, 1, 1, 8], 0,
                      Padding=VALID, StrideH=1, StrideW=1)
    s = t("sum", [8, 8, 8], act_quant(-1.8, 3.5, "INT16"))
    # pot_scale_int16 false: the general int16 ADD, what the 16x8 converter writes (op_version.cc: 3)
    net.m.op("ADD", [c1, c2], [s], "AddOptions", version=3, PotScaleInt16=False)
    relu_q = act_quant(0.0, 3.5, "INT16")
    r = t("relu", [8, 8, 8], relu_q)
    net.m.op("RELU", [s], [r], version=3)
    p1 = net.pool("MAX_POOL_2D", r, t("maxpool", [4, 4, 8], relu_q), 2, 2, VALID)
    p2 = net.pool("AVERAGE_POOL_2D", p1, t("avgpool", [4, 4, 8], relu_q), 3, 1, SAME)
    g = net.mean(p2, t("mean", [8], act_quant(0.0, 2.1, "INT16")))
    y = net.weighted("FULLY_CONNECTED", g, t("logits", [6], act_quant(-1.5, 1.5, "INT16")), [6, 8], 0)
    net.m.output(y)
    return net.m.finish()


MODELS = {"int8_cnn.tflite": int8_cnn, "int8_float_io.tflite": int8_float_io, "uint8_io.tflite": uint8_io,
          "int16x8.tflite": int16x8, "int8_dynamic_batch.tflite": lambda: int8_cnn(batch=-1)}
