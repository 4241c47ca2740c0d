"""Builders of quantized convolution and product models for the q_conv / q_matmul tests.

Data covers the whole integer range (including both extremes and the zero
point); weight scales are per channel across several orders of magnitude,
and the output scale is chosen from the accumulator's spread so that
results land inside the range with some saturation at the edges.
"""
from __future__ import annotations

import numpy as np

from tests.importers.tflite.harness import ModelBuilder

TYPES = {"int8": ("INT8", "INT8", np.int8), "uint8": ("UINT8", "UINT8", np.uint8),
         "int16x8": ("INT16", "INT8", np.int16)}
LIMITS = {np.int8: (-128, 127), np.uint8: (0, 255), np.int16: (-32768, 32767)}


def qdata(shape, dtype, zp: int = 0, seed: int = 0) -> np.ndarray:
    """Random integers over the full range of ``dtype``, with the extremes and the zero point present."""
    lo, hi = LIMITS[dtype]
    a = np.random.default_rng(seed).integers(lo, hi + 1, size=shape)
    flat = a.reshape(-1)
    flat[:3] = [lo, hi, zp][:flat.size]
    return a.astype(dtype)


def weight_scales(channels: int, per_channel: bool, seed: int = 0) -> list:
    """Per-channel scales over three orders of magnitude (or one scale)."""
    rng = np.random.default_rng(seed + 100)
    s = 10.0 ** rng.uniform(-4.0, -1.0, channels if per_channel else 1)
    return [float(np.float32(v)) for v in s]


def out_scale(in_scale: float, w_scales, depth: int, form: str, factor: float = 1.0) -> float:
    """An output scale that keeps typical results in range (``factor`` > 1 gives more saturation)."""
    bits = 16 if form == "int16x8" else 8
    spread = (2 ** (bits - 1)) * 128 * np.sqrt(depth) / 3.0
    return float(np.float32(in_scale * float(np.median(w_scales)) * spread / (2 ** (bits - 1)) / factor))


def bias_values(channels: int, in_scale: float, w_scales, form: str, seed: int = 0):
    """A bias (int32, or int64 for int16x8) worth a few output steps, with its scale in*w[c]."""
    rng = np.random.default_rng(seed + 200)
    b = rng.integers(-20000, 20000, channels)
    scales = [in_scale * s for s in (w_scales if len(w_scales) == channels else w_scales * channels)]
    return b.astype(np.int64 if form == "int16x8" else np.int32), scales


class QModel:
    """One quantized op with its input, weights, bias and output, in ``form``."""

    def __init__(self, form: str, in_scale: float = 0.05, in_zp: int = 0, out_zp: int = 0):
        self.form = form
        self.x_t, self.w_t, self.np_t = TYPES[form]
        if form == "int16x8":
            in_zp = out_zp = 0
            in_scale /= 256.0
        self.in_scale, self.in_zp, self.out_zp = in_scale, in_zp, out_zp
        self.m = ModelBuilder()

    def input(self, shape, signature=None, name="x"):
        return self.m.input(name, shape, self.x_t, signature, quant=([self.in_scale], [self.in_zp], 0))

    def weights(self, w, scales, axis: int, zp: int = 0):
        zps = [zp] * len(scales)
        return self.m.const("w", w, self.w_t, quant=(scales, zps, axis))

    def bias(self, values, scales):
        return self.m.const("b", values, quant=(scales, [0] * len(scales), 0))

    def output(self, shape, scale: float, signature=None):
        y = self.m.tensor("y", shape, self.x_t, signature, quant=([scale], [self.out_zp], 0))
        self.m.output(y)
        return y

    def feeds(self, shape, seeds=(0,), name="x"):
        return [{name: qdata(shape, self.np_t, self.in_zp, seed)} for seed in seeds]

    def weight_data(self, shape, seed: int = 1):
        zp = 128 if self.form == "uint8" else 0
        return qdata(shape, np.uint8 if self.form == "uint8" else np.int8, zp, seed)


# -- multiplier discrimination ---------------------------------------------------------------

def mbqm(x: np.ndarray, real: float) -> np.ndarray:
    """gemmlowp's MultiplyByQuantizedMultiplier on int64 ``x`` (used only to search for inputs)."""
    from tosaconv.importers.tflite.quant import quantize_multiplier
    m, e = quantize_multiplier(real)
    ab = (x.astype(np.int64) << max(e, 0)) * m
    t = ab + np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    high = np.where(t >= 0, t >> 31, -((-t) >> 31))          # C division truncates toward zero
    right = max(-e, 0)
    mask = (1 << right) - 1
    return (high >> right) + ((high & mask) > ((mask >> 1) + (high < 0)))


def double_real(s_in, s_w, s_out) -> float:
    """PopulateConvolutionQuantizationParams' multiplier: all in double."""
    return float(np.float64(s_in) * np.float64(s_w) / np.float64(s_out))


def float_product_real(s_in, s_w, s_out) -> float:
    """GetQuantizedConvolutionMultipler's multiplier: the product in float, the division in double."""
    return float(np.float64(np.float32(s_in) * np.float32(s_w)) / np.float64(s_out))


def single_round(x: np.ndarray, real: float) -> np.ndarray:
    """One round-half-up shift of ``x * multiplier`` (TFLITE_SINGLE_ROUNDING's form; search only)."""
    from tosaconv.importers.tflite.quant import quantize_multiplier
    m, e = quantize_multiplier(real)
    return (x.astype(np.int64) * m + (1 << (30 - e))) >> (31 - e)


def discriminating_case(count: int = 6, bits: int = 8, seed: int = 0, rounding=mbqm):
    """Scales (in, w, out) and ``count`` accumulator values on which the two multipliers differ
    (both scaled with ``rounding``), with results inside the output range."""
    rng = np.random.default_rng(seed)
    span = 1 << (21 if bits == 8 else 26)
    x = np.unique(rng.integers(-span, span, 1 << 21, dtype=np.int64))
    limit = (1 << (bits - 1)) - 20
    for _ in range(200):
        s_in, s_w = (float(np.float32(10 ** rng.uniform(-3, -1))) for _ in range(2))
        s_out = float(np.float32(s_in * s_w * span / limit * rng.uniform(0.8, 1.0)))
        a, b = double_real(s_in, s_w, s_out), float_product_real(s_in, s_w, s_out)
        ra, rb = rounding(x, a), rounding(x, b)
        hits = x[(ra != rb) & (np.abs(ra) <= limit)]
        if hits.size >= count:
            return (s_in, s_w, s_out), hits[np.linspace(0, hits.size - 1, count).astype(int)]
    raise AssertionError("no discriminating scales found")


def bias_probe(op: str, form: str, seed: int = 0, per_channel: bool = False, rounding=mbqm):
    """A 1x1 ``op`` whose input is fed as its zero point, so each output channel is the bias scaled:
    the bias holds accumulators on which the two multiplier formulas disagree. Returns
    (model, feeds, (double real, float-product real), accumulators). ``per_channel`` repeats the one
    weight scale per channel, which sends TFLite down its per-channel path."""
    bits = 16 if form == "int16x8" else 8
    (s_in, s_w, s_out), accs = discriminating_case(bits=bits, seed=seed, rounding=rounding)
    c = len(accs)
    q = QModel(form, in_scale=s_in, in_zp={"uint8": 140}.get(form, 3), out_zp={"uint8": 126}.get(form, -2))
    q.in_scale = s_in
    q.m.inputs.clear()
    shape = {"FULLY_CONNECTED": [2, 3]}.get(op, [1, 2, 2, 3])
    x = q.m.input("x", shape, q.x_t, quant=([s_in], [q.in_zp], 0))
    axis = 3 if op == "DEPTHWISE_CONV_2D" else 0
    w_shape = {"FULLY_CONNECTED": [c, 3], "DEPTHWISE_CONV_2D": [1, 1, 1, c]}.get(op, [c, 1, 1, 3])
    if op == "DEPTHWISE_CONV_2D":
        shape = [1, 2, 2, c]
        q.m.tensors[x].shape = shape
    n = c if per_channel else 1
    w = q.weights(q.weight_data(w_shape), [s_w] * n, axis, zp=128 if form == "uint8" else 0)
    b = q.bias(accs.astype(np.int64 if bits == 16 else np.int32), [float(np.float32(s_in) * np.float32(s_w))] * n)
    y = q.output([*shape[:-1], c], s_out)
    if op == "TRANSPOSE_CONV":
        out_shape = q.m.const("shape", np.array([1, 2, 2, c], np.int32))
        q.m.op(op, [out_shape, w, x, b], [y], "TransposeConvOptions", version=3, Padding=1, StrideH=1, StrideW=1)
    else:
        options = {"CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
                   "FULLY_CONNECTED": "FullyConnectedOptions"}[op]
        fields = {} if op == "FULLY_CONNECTED" else dict(Padding=1, StrideH=1, StrideW=1)
        q.m.op(op, [x, w, b], [y], options, version=3, **fields)
    feeds = [{"x": np.full(shape, q.in_zp, q.np_t)}]
    return q.m.finish(), feeds, (double_real(s_in, s_w, s_out), float_product_real(s_in, s_w, s_out)), accs


# -- FULLY_CONNECTED's double-product rounding --------------------------------------------------

def round_double_product(x: np.ndarray, real: float) -> np.ndarray:
    """``round(double(x) * real)``: the product rounded to a double, then half away from zero
    (LiteRT's reference FULLY_CONNECTED; search and discrimination only)."""
    p = np.asarray(x, np.int64).astype(np.float64) * np.float64(real)
    return (np.sign(p) * np.floor(np.abs(p) + 0.5)).astype(np.int64)


def fc_bias_model(form: str, accs, scales: tuple, per_channel: bool = False):
    """A FULLY_CONNECTED with one input fed at its zero point, so output channel ``c`` is ``accs[c]``
    (the bias) scaled by ``s_in * s_w / s_out``. Returns (model, feeds)."""
    s_in, s_w, s_out = scales
    q = QModel(form)
    zp = 128 if form == "uint8" else 0
    c = len(accs)
    x = q.m.input("x", [1, 1], q.x_t, quant=([s_in], [zp], 0))
    n = c if per_channel else 1
    w = q.weights(np.full((c, 1), zp, np.uint8 if form == "uint8" else np.int8), [s_w] * n, 0, zp=zp)
    bias = np.asarray(accs, np.int64 if form == "int16x8" else np.int32)
    b = q.bias(bias, [float(np.float32(s_in) * np.float32(s_w))] * n)
    y = q.m.tensor("y", [1, c], q.x_t, quant=([s_out], [zp], 0))
    q.m.output(y)
    q.m.op("FULLY_CONNECTED", [x, w, b], [y], "FullyConnectedOptions", version=4)
    return q.m.finish(), [{"x": np.full((1, 1), zp, q.np_t)}]
