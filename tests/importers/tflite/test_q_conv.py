"""Quantized CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV, bit-exact against LiteRT's reference
kernels and the TOSA reference model, in the int8 (per-channel and per-tensor), uint8 and int16x8
forms, with a dynamic batch fed at two sizes.

Weight scales span three orders of magnitude, so per-channel multipliers range from far below
1e-3 to above 1 (``test_multipliers_cover_small_and_large`` checks the models do); results are
required to be spread out (not all saturated) so a test cannot pass on constant outputs.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.diagnostics import TosaconvError
from tests.importers.tflite.harness import check_exact_with_litert, convert, run_litert
from tests.importers.tflite.qconv_models import QModel, bias_probe, bias_values, mbqm, out_scale, weight_scales

FORMS = ["int8", "uint8", "int16x8"]
ZPS = {"int8": (-3, 5), "uint8": (131, 120), "int16x8": (0, 0)}


def check(data, feeds, tmp_path):
    """Bit-exact on every feed, and the LiteRT result must take many values."""
    check_exact_with_litert(data, feeds, tmp_path)
    assert len(np.unique(run_litert(data, feeds[0])[0])) >= 8


def _model(form, op, w_shape, axis, per_channel, in_hw, out_hw, factor=1.0, bias_type=None, w_zp=0,
           o_scale=None, dyn_hw=False, groups=1):
    """A QModel with input [1, H, W, C] (batch dynamic), weights, bias and output; returns (q, x, w, b, y)."""
    in_zp, o_zp = ZPS[form]
    q = QModel(form, in_scale=0.05, in_zp=in_zp, out_zp=o_zp)
    channels = w_shape[axis]
    cin = w_shape[3] * groups if op != "DEPTHWISE_CONV_2D" else in_hw[2]
    x = q.input([1, *in_hw[:2], cin], [-1, -1, -1, cin] if dyn_hw else [-1, *in_hw[:2], cin])
    ws = weight_scales(channels, per_channel)
    w = q.weights(q.weight_data(w_shape), ws, axis, zp=w_zp)
    bv, bs = bias_values(channels, q.in_scale, ws, form)
    b = q.bias(bv.astype(bias_type) if bias_type else bv, bs if per_channel else [bs[0]])
    depth = int(np.prod(w_shape[1:])) if op != "DEPTHWISE_CONV_2D" else w_shape[1] * w_shape[2]
    o_scale = o_scale or out_scale(q.in_scale, ws, depth, form, factor)
    y = q.output([1, *out_hw, channels], o_scale, [-1, -1, -1, channels] if dyn_hw else [-1, *out_hw, channels])
    return q, x, w, b, y


def act_scale(form: str) -> float:
    return 24.0 / (65535 if form == "int16x8" else 255)


def _out_hw(hw, k, stride, dilation, padding):
    if padding == 0:                                   # SAME
        return [-(-d // stride) for d in hw]
    return [-(-(d - (k - 1) * dilation) // stride) for d in hw]


def _feeds(q, hw, cin):
    return q.feeds([2, *hw, cin], (0,)) + q.feeds([3, *hw, cin], (1,))


def conv2d(form, per_channel=True, padding=0, stride=1, dilation=1, act=0, k=3, cin=5, cout=6, hw=(7, 8),
           factor=1.0, bias_type=None, o_scale=None, dyn_hw=False, groups=1):
    """``groups`` > 1: the filter holds ``cin`` channels of an input with ``cin * groups``."""
    out_hw = _out_hw(hw, k, stride, dilation, padding)
    q, x, w, b, y = _model(form, "CONV_2D", [cout, k, k, cin], 0, per_channel, (*hw, cin), out_hw, factor,
                           bias_type, w_zp=140 if form == "uint8" else 0, o_scale=o_scale, dyn_hw=dyn_hw,
                           groups=groups)
    q.m.op("CONV_2D", [x, w, b], [y], "Conv2DOptions", version=3, Padding=padding, StrideH=stride,
           StrideW=stride, DilationHFactor=dilation, DilationWFactor=dilation, FusedActivationFunction=act)
    return q.m.finish(), _feeds(q, hw, cin * groups)


def depthwise(form, per_channel=True, padding=0, stride=1, dilation=1, act=0, k=3, c=4, mult=1, hw=(7, 8),
              o_scale=None, dyn_hw=False):
    out_hw = _out_hw(hw, k, stride, dilation, padding)
    q, x, w, b, y = _model(form, "DEPTHWISE_CONV_2D", [1, k, k, c * mult], 3, per_channel, (*hw, c), out_hw,
                           w_zp=119 if form == "uint8" else 0, o_scale=o_scale, dyn_hw=dyn_hw)
    q.m.op("DEPTHWISE_CONV_2D", [x, w, b], [y], "DepthwiseConv2DOptions", version=3, Padding=padding,
           StrideH=stride, StrideW=stride, DepthMultiplier=mult, DilationHFactor=dilation,
           DilationWFactor=dilation, FusedActivationFunction=act)
    return q.m.finish(), _feeds(q, hw, c)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("padding,stride,dilation", [(0, 1, 1), (1, 1, 1), (0, 2, 1), (1, 2, 1), (0, 1, 2)])
def test_conv2d(form, padding, stride, dilation, tmp_path):
    check(*conv2d(form, form != "uint8", padding, stride, dilation), tmp_path)


@pytest.mark.parametrize("form", ["int8", "int16x8"])
def test_conv2d_per_tensor(form, tmp_path):
    check(*conv2d(form, per_channel=False), tmp_path)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("act", [1, 3, 2])             # RELU, RELU6, RELU_N1_TO_1
def test_conv2d_fused_activation(form, act, tmp_path):
    """The output covers about [-12, 12], so RELU6 and RELU_N1_TO_1 cut inside the range."""
    check(*conv2d(form, form != "uint8", act=act, o_scale=act_scale(form)), tmp_path)


@pytest.mark.parametrize("form", FORMS)
def test_conv2d_saturating_large_multipliers(form, tmp_path):
    """An output scale 50x finer: many channels' multipliers exceed 1 and results saturate."""
    check(*conv2d(form, form != "uint8", factor=50.0), tmp_path)


@pytest.mark.parametrize("form", FORMS)
def test_grouped_conv2d(form, tmp_path):
    """A filter of 3 channels on a 9-channel input: three groups of 2 outputs each (TFLite 2.9+)."""
    check(*conv2d(form, form != "uint8", cin=3, cout=6, groups=3), tmp_path)


def test_conv2d_deep_accumulator(tmp_path):
    """Accumulators of millions (a 5x5x64 window) with the int8 per-channel form."""
    check(*conv2d("int8", k=5, cin=64, cout=8, hw=(6, 6)), tmp_path)


def test_conv2d_int16x8_int32_bias_is_refused():
    """LiteRT reads an int16x8 CONV_2D's int32 bias as int64 (saturated garbage); tosaconv refuses it."""
    with pytest.raises(TosaconvError, match="int32 bias is not supported: LiteRT's kernel reads the bias as int64"):
        convert(conv2d("int16x8", bias_type=np.int32)[0])


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("padding,stride,dilation,mult", [(0, 1, 1, 1), (1, 2, 1, 1), (0, 1, 1, 3), (1, 1, 2, 2)])
def test_depthwise(form, padding, stride, dilation, mult, tmp_path):
    check(*depthwise(form, form != "uint8", padding, stride, dilation, mult=mult), tmp_path)


@pytest.mark.parametrize("form", FORMS)
def test_depthwise_relu6(form, tmp_path):
    check(*depthwise(form, form != "uint8", act=3, o_scale=act_scale(form)), tmp_path)


def test_multipliers_cover_small_and_large():
    scales = np.asarray(weight_scales(6, True))
    o = out_scale(0.05, scales, 45, "int8", 50.0)
    reals = 0.05 * scales / o
    assert reals.max() > 1.0 and reals.min() < 0.05


def test_hybrid_conv_is_refused():
    q = QModel("int8")
    m = q.m
    x = m.input("x", [1, 4, 4, 2])
    w = m.const("w", np.ones((3, 1, 1, 2), np.int8), "INT8", quant=([0.1] * 3, [0] * 3, 0))
    y = m.tensor("y", [1, 4, 4, 3])
    m.op("CONV_2D", [x, w, -1], [y], "Conv2DOptions", Padding=0, StrideH=1, StrideW=1)
    m.output(y)
    with pytest.raises(TosaconvError, match="hybrid CONV_2D .* not supported"):
        convert(m.finish())


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV"])
@pytest.mark.parametrize("form", ["int8", "uint8"])
def test_multiplier_formula(op, form, tmp_path):
    """Accumulators on which TFLite's two multiplier formulas (double vs float product) disagree:
    only the formula the kernel really uses can be exact."""
    data, feeds, (a, b), accs = bias_probe(op, form)
    assert np.any(mbqm(accs, a) != mbqm(accs, b))
    check_exact_with_litert(data, feeds, tmp_path)


def transpose_conv(form, in_hw, out_hw, k, stride, padding, act=0, per_channel=True, o_scale=None):
    cin, cout = 3, 4
    q, x, w, b, y = _model(form, "TRANSPOSE_CONV", [cout, k, k, cin], 0, per_channel, (*in_hw, cin), out_hw,
                           w_zp=133 if form == "uint8" else 0, o_scale=o_scale)
    shape = q.m.const("out_shape", np.array([1, *out_hw, cout], np.int32))
    q.m.op("TRANSPOSE_CONV", [shape, w, x, b], [y], "TransposeConvOptions", version=4 if act else 3,
           Padding=padding, StrideH=stride, StrideW=stride, FusedActivationFunction=act)
    q.m.tensors[x].signature = None
    q.m.tensors[y].signature = None
    return q.m.finish(), q.feeds([1, *in_hw, cin], (0, 1))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("in_hw,out_hw,k,stride,padding", [((3, 4), (6, 8), 3, 2, 0), ((3, 4), (7, 9), 3, 2, 1),
                                                           ((4, 4), (4, 4), 3, 1, 0), ((3, 3), (5, 5), 2, 2, 0)])
def test_transpose_conv(form, in_hw, out_hw, k, stride, padding, tmp_path):
    check(*transpose_conv(form, in_hw, out_hw, k, stride, padding, per_channel=form != "uint8"), tmp_path)


@pytest.mark.parametrize("form", FORMS)
def test_transpose_conv_relu6(form, tmp_path):
    check(*transpose_conv(form, (3, 4), (6, 8), 3, 2, 0, act=3, per_channel=form != "uint8",
                          o_scale=act_scale(form)), tmp_path)


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
@pytest.mark.parametrize("form", ["int8", "uint8"])
@pytest.mark.parametrize("padding,stride", [(0, 1), (1, 2)])
def test_dynamic_hw(op, form, padding, stride, tmp_path):
    """Symbolic batch, H and W (fed at two sizes); SAME pads around the input zero point."""
    data, _ = (conv2d if op == "CONV_2D" else depthwise)(form, form != "uint8", padding, stride, dyn_hw=True)
    q = QModel(form, in_zp=ZPS[form][0])
    cin = 5 if op == "CONV_2D" else 4
    check(data, q.feeds([2, 9, 7, cin], (3,)) + q.feeds([1, 5, 11, cin], (4,)), tmp_path)
