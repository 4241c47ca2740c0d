"""Ops the real-model catalog (tests/real_models/tflite_catalog.py) needed beyond the float op set:
MediaPipe's custom Convolution2DTransposeBias, checked against LiteRT's reference TRANSPOSE_CONV
(version 3, with bias) built for the same geometry, and the model rewriter the real-model tests use
to let LiteRT run MediaPipe models.

The custom op's output size is mediapipe's transpose_conv_bias.cc Prepare, written out again here:
SAME pads ``max(0, k - (in - 1) % s - 1)``, the output is ``s * (in - 1) + k - pad``; VALID pads 0.
Tolerance: the harness defaults (rtol 1e-4, atol 1e-5).
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import (ModelBuilder, check_reference_model, compare_both_paths, convert, rand,
                                            run_graph, run_litert, specialize_and_emit)
from tests.real_models.tflite_rewrite import CustomOptionsBuilder, to_builtin, transpose_conv_bias_options
from tosaconv.diagnostics import TosaconvError



def _out(size: int, k: int, s: int, padding: str) -> int:
    pad = max(0, k - (size - 1) % s - 1) if padding == "SAME" else 0
    return s * (size - 1) + k - pad


def _geometry(n, h, w, c_in, c_out, k, s, padding):
    out = [n, _out(h, k[0], s[0], padding), _out(w, k[1], s[1], padding), c_out]
    rng = np.random.default_rng(h * 31 + w)
    weights = rng.uniform(-1, 1, (c_out, k[0], k[1], c_in)).astype(np.float32)
    bias = rng.uniform(-1, 1, (c_out,)).astype(np.float32)
    return out, weights, bias


def _consts(m, weights, bias, fp16: bool):
    """Weights and bias as float32 constants, or as float16 constants behind DEQUANTIZE (as MediaPipe ships)."""
    if not fp16:
        return m.const("w", weights), m.const("b", bias)
    out = []
    for name, arr in (("w", weights), ("b", bias)):
        half = m.const(f"{name}_fp16", arr.astype(np.float16))
        full = m.tensor(name, arr.shape)
        m.op("DEQUANTIZE", [half], [full])
        out.append(full)
    return out


def _custom_model(x_shape, out, weights, bias, s, padding, fp16=False, options=None) -> bytes:
    m = CustomOptionsBuilder()
    x = m.input("x", x_shape)
    w, b = _consts(m, weights, bias, fp16)
    y = m.tensor("y", out)
    opts = transpose_conv_bias_options(padding, *s) if options is None else options
    m.custom_op("Convolution2DTransposeBias", [x, w, b], [y], opts)
    m.output(y)
    return m.finish()


def _builtin_model(x_shape, out, weights, bias, s, padding) -> bytes:
    m = ModelBuilder()
    x = m.input("x", x_shape)
    shape, w, b = m.const("shape", np.asarray(out, np.int32)), m.const("w", weights), m.const("b", bias)
    y = m.tensor("y", out)
    m.op("TRANSPOSE_CONV", [shape, w, x, b], [y], "TransposeConvOptions", version=3,
         Padding={"SAME": 0, "VALID": 1}[padding], StrideH=s[0], StrideW=s[1])
    m.output(y)
    return m.finish()


# (input NHWC, c_out, kernel, stride, padding): MediaPipe's selfie segmentation case first.
CASES = [((1, 8, 8, 16), 1, (2, 2), (2, 2), "SAME"), ((1, 5, 7, 3), 4, (3, 3), (2, 2), "SAME"),
         ((2, 6, 5, 3), 2, (3, 2), (2, 3), "SAME"), ((1, 4, 4, 2), 3, (2, 2), (3, 3), "SAME"),
         ((1, 5, 4, 3), 2, (4, 3), (2, 2), "SAME"), ((1, 5, 6, 2), 3, (3, 3), (1, 1), "SAME"),
         ((1, 5, 7, 3), 4, (3, 3), (2, 2), "VALID"), ((1, 3, 4, 2), 2, (1, 2), (3, 2), "VALID")]


@pytest.mark.parametrize("x_shape,c_out,k,s,padding", CASES, ids=[f"{c[4]}-k{c[2]}-s{c[3]}-{c[0]}" for c in CASES])
@pytest.mark.parametrize("fp16", [False, True], ids=["f32", "fp16-dequantize"])
def test_transpose_conv_bias_matches_litert_transpose_conv(x_shape, c_out, k, s, padding, fp16, tmp_path):
    out, weights, bias = _geometry(x_shape[0], x_shape[1], x_shape[2], x_shape[3], c_out, k, s, padding)
    if fp16:   # LiteRT's reference computes with the float16 values widened to float32
        weights, bias = weights.astype(np.float16).astype(np.float32), bias.astype(np.float16).astype(np.float32)
    graph = convert(_custom_model(x_shape, out, weights, bias, s, padding, fp16))
    builtin = _builtin_model(x_shape, out, weights, bias, s, padding)
    for seed in (0, 1):
        feeds = {"x": rand(*x_shape, seed=seed)}
        compare_both_paths(graph, feeds, run_litert(builtin, feeds), 1e-4, 1e-5)
    static, tosa = specialize_and_emit(graph, {"x": x_shape})
    check_reference_model(tosa, static, feeds, run_graph(static, feeds), tmp_path)


def test_rewrite_to_builtin_matches_the_custom_op():
    """What the real-model tests run LiteRT on: the custom op rewritten to TRANSPOSE_CONV v3 by to_builtin."""
    x_shape, c_out, k, s, padding = (1, 5, 7, 3), 4, (3, 3), (2, 2), "SAME"
    out, weights, bias = _geometry(1, 5, 7, 3, c_out, k, s, padding)
    custom = _custom_model(x_shape, out, weights, bias, s, padding, fp16=True)
    direct = _builtin_model(x_shape, out, weights.astype(np.float16).astype(np.float32),
                            bias.astype(np.float16).astype(np.float32), s, padding)
    feeds = {"x": rand(*x_shape, seed=3)}
    np.testing.assert_array_equal(run_litert(to_builtin(custom), feeds)[0], run_litert(direct, feeds)[0])


def test_rewrite_copies_builtin_ops_and_options_faithfully():
    """to_builtin on a builtin-only model (options, signature, dynamic batch) changes no result."""
    m = ModelBuilder()
    x = m.input("x", [1, 6, 6, 3], signature=[-1, 6, 6, 3])
    w, b = m.const("w", rand(4, 3, 3, 3, seed=5)), m.const("b", rand(4, seed=6))
    conv, y = m.tensor("conv", [1, 3, 3, 4], signature=[-1, 3, 3, 4]), m.tensor("y", [1, 3, 3, 4])
    m.op("CONV_2D", [x, w, b], [conv], "Conv2DOptions", Padding=0, StrideH=2, StrideW=2, FusedActivationFunction=3)
    m.op("MAX_POOL_2D", [conv], [y], "Pool2DOptions", Padding=0, StrideH=1, StrideW=1, FilterHeight=2,
         FilterWidth=2)
    m.output(y)
    m.sign(["image"], ["pooled"])
    data = m.finish()
    for n in (1, 3):
        feeds = {"x": rand(n, 6, 6, 3, low=-4, high=4, seed=n)}
        np.testing.assert_array_equal(run_litert(to_builtin(data), feeds)[0], run_litert(data, feeds)[0])


REFUSALS = [(b"", "has 0 bytes of custom options"), (transpose_conv_bias_options("SAME", 2, 2)[:8], "8 bytes"),
            (np.array([3, 2, 2], np.int32).tobytes(), "padding 3, which is neither SAME (1) nor VALID (2)"),
            (np.array([1, 0, 2], np.int32).tobytes(), "strides (2, 0)")]


@pytest.mark.parametrize("options,message", REFUSALS, ids=["none", "short", "padding", "stride"])
def test_transpose_conv_bias_bad_options_are_refused(options, message):
    out, weights, bias = _geometry(1, 4, 4, 2, 1, (2, 2), (2, 2), "SAME")
    data = _custom_model((1, 4, 4, 2), out, weights, bias, (2, 2), "SAME", options=options)
    with pytest.raises(TosaconvError, match="Convolution2DTransposeBias") as err:
        convert(data)
    assert message in str(err.value.diagnostics[0].message)


def test_transpose_conv_bias_dynamic_height_is_refused():
    m = CustomOptionsBuilder()
    x = m.input("x", [1, 4, 4, 2], signature=[1, -1, 4, 2])
    out, weights, bias = _geometry(1, 4, 4, 2, 1, (2, 2), (2, 2), "SAME")
    y = m.tensor("y", out)
    m.custom_op("Convolution2DTransposeBias", [x, m.const("w", weights), m.const("b", bias)], [y],
                transpose_conv_bias_options("SAME", 2, 2))
    m.output(y)
    with pytest.raises(TosaconvError, match="input height and width must be static"):
        convert(m.finish())


def test_other_mediapipe_custom_ops_stay_listed():
    m = ModelBuilder()
    x = m.input("x", [1, 4])
    y, z = m.tensor("y", [1, 4]), m.tensor("z", [1, 4])
    m.custom_op("TransformLandmarks", [x], [y])
    m.custom_op("TransformLandmarks", [y], [z])
    m.output(z)
    with pytest.raises(TosaconvError) as err:
        convert(m.finish())
    assert [d.message for d in err.value.diagnostics] == ["custom op 'TransformLandmarks' (TFLite): 2 op(s)"]
