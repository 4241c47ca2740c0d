"""Quantized TFLite pools and reductions against LiteRT's reference kernels, bit for bit.

Pools: int8, uint8 and int16, SAME and VALID padding (border windows with
fewer taps), several window shapes and strides, fused activations, a dynamic
batch fed at two sizes and dynamic H and W. The harness also runs the emitted
.tosa on the official reference model.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import (ModelBuilder, check_exact_with_litert, check_reference_model,
                                            compare_both_paths, convert, run_graph, specialize_and_emit)
from tests.importers.tflite.test_q_data import ALL, EIGHT, Q, RANGE, q_data
from tosaconv.lowering.gemmlowp import multiply_by_quantized_multiplier
from tosaconv.importers.tflite.quant import quantize_multiplier
from tosaconv.diagnostics import ConversionError

SAME, VALID = 0, 1
NONE, RELU, RELU_N1_TO_1, RELU6 = 0, 1, 2, 3
WINDOWS = [((3, 3), (2, 2)), ((2, 2), (2, 2)), ((3, 2), (1, 2)), ((1, 4), (3, 1))]
OUT_Q = {"INT8": ([0.02], [10], 0), "UINT8": ([0.1], [100], 0), "INT16": ([0.0007], [0], 0)}


def _out_size(size, k, s, padding):
    return -(-size // s) if padding == SAME else (size - k) // s + 1


def pool_model(op, dtype, hw, kernel, stride, padding, act=NONE, dynamic="batch", out_q=None) -> bytes:
    m = ModelBuilder()
    shape = [2, hw[0], hw[1], 3]
    sig = {"batch": [-1, hw[0], hw[1], 3], "hw": [1, -1, -1, 3], None: None}[dynamic]
    out = [shape[0]] + [_out_size(hw[i], kernel[i], stride[i], padding) for i in range(2)] + [3]
    out_sig = None if sig is None else [-1 if d == -1 else o for d, o in zip(sig, out)]
    x = m.input("x", shape, dtype, sig, quant=Q[dtype])
    y = m.tensor("y", out, dtype, out_sig, quant=out_q or Q[dtype])
    m.op(op, [x], [y], "Pool2DOptions", Padding=padding, StrideH=stride[0], StrideW=stride[1],
         FilterHeight=kernel[0], FilterWidth=kernel[1], FusedActivationFunction=act)
    m.output(y)
    return m.finish()


def pool_feeds(dtype, shapes):
    return [{"x": q_data(dtype, s)} for s in shapes]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("padding", [SAME, VALID])
@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_pool(op, window, padding, dtype, tmp_path):
    data = pool_model(op, dtype, (7, 6), *window, padding)
    check_exact_with_litert(data, pool_feeds(dtype, [[2, 7, 6, 3], [3, 7, 6, 3]]), tmp_path)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("act", [RELU, RELU_N1_TO_1, RELU6])
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_pool_fused_activation_other_output_params(op, act, dtype, tmp_path):
    """The bounds come from the output's parameters; the stored values pass through unscaled."""
    data = pool_model(op, dtype, (5, 5), (3, 3), (2, 2), SAME, act, out_q=OUT_Q[dtype])
    check_exact_with_litert(data, pool_feeds(dtype, [[2, 5, 5, 3], [1, 5, 5, 3]]), tmp_path)


@pytest.mark.parametrize("dtype", EIGHT)
@pytest.mark.parametrize("padding", [SAME, VALID])
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_pool_dynamic_hw(op, padding, dtype, tmp_path):
    stride = (1, 1) if padding == SAME else (2, 2)   # SAME with stride 2 pads by the size's parity: refused
    data = pool_model(op, dtype, (7, 6), (3, 3), stride, padding, dynamic="hw")
    check_exact_with_litert(data, pool_feeds(dtype, [[1, 7, 6, 3], [1, 10, 9, 3]]), tmp_path)


def test_average_pool_negative_halves(tmp_path):
    """Windows whose sums are negative odd multiples of n/2 round away from zero, as LiteRT rounds them."""
    data = pool_model("AVERAGE_POOL_2D", "INT8", (2, 4), (2, 2), (2, 2), VALID, dynamic=None)
    x = np.array([-1, 0, -3, 0, 0, -1, 0, 0, 1, 2, -128, -128, 0, 0, 0, -127, -1, -1, -2, -2, -3, -3, -5, 1],
                 np.int8).reshape(1, 2, 4, 3)
    check_exact_with_litert(data, [{"x": np.concatenate([x, -x.clip(-127)])}], tmp_path)


def test_l2_pool_quantized_refused():
    m = ModelBuilder()
    x = m.input("x", [1, 4, 4, 1], "INT8", quant=Q["INT8"])
    y = m.tensor("y", [1, 2, 2, 1], "INT8", quant=Q["INT8"])
    m.op("L2_POOL_2D", [x], [y], "Pool2DOptions", StrideH=2, StrideW=2, FilterHeight=2, FilterWidth=2)
    m.output(y)
    with pytest.raises(ConversionError, match="L2_POOL_2D"):
        convert(m.finish())


# -- reductions ------------------------------------------------------------------------------------------
MEAN_OUT_Q = {   # output parameters per input type: same, ratio < 1, ratio > 1, a tiny ratio
    "INT8": [([0.05], [-3], 0), ([0.11], [17], 0), ([0.013], [-90], 0), ([3.7], [120], 0)],
    "UINT8": [([0.05], [131], 0), ([0.11], [17], 0), ([0.013], [200], 0), ([3.7], [0], 0)],
    "INT16": [([0.002], [0], 0), ([0.0051], [0], 0), ([0.0007], [0], 0)],
}


def reduce_model(op, dtype, shape, axes, keep, out_q, dynamic=True) -> bytes:
    m = ModelBuilder()
    sig = [-1] + list(shape[1:]) if dynamic else None
    rank = len(shape)
    norm = {a % rank for a in axes}
    out = [1 if i in norm else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in norm]
    out_sig = None if sig is None or 0 in norm else [-1] + out[1:]
    x = m.input("x", shape, dtype, sig, quant=Q[dtype])
    y = m.tensor("y", out, dtype, out_sig, quant=out_q)
    m.op(op, [x, m.const("axes", np.array(axes, np.int32))], [y], "ReducerOptions", KeepDims=keep)
    m.output(y)
    return m.finish()


def reduce_feeds(dtype, shape, dynamic=True):
    return pool_feeds(dtype, [shape] + ([[3] + list(shape[1:])] if dynamic else []))


@pytest.mark.parametrize("axes", [[1, 2], [2, 1]])
@pytest.mark.parametrize("dtype,out_q", [(d, q) for d in ALL for q in MEAN_OUT_Q[d]])
def test_mean_spatial_keep_dims(dtype, out_q, axes, tmp_path):
    """reference_integer_ops::Mean (int8, int16) and reference_ops::Mean (uint8)."""
    data = reduce_model("MEAN", dtype, [2, 5, 4, 3], axes, True, out_q)
    check_exact_with_litert(data, reduce_feeds(dtype, [2, 5, 4, 3]), tmp_path)


@pytest.mark.parametrize("axes,keep", [([1, 2], False), ([-1], True), ([1], False), ([0, 2], True)])
@pytest.mark.parametrize("dtype,out_q", [(d, q) for d in EIGHT for q in MEAN_OUT_Q[d]])
def test_mean_general(dtype, out_q, axes, keep, tmp_path):
    """reference_ops::Mean (equal parameters) and QuantizedMeanOrSum's float tail (other parameters)."""
    dynamic = 0 not in axes
    data = reduce_model("MEAN", dtype, [2, 5, 4, 3], axes, keep, out_q, dynamic)
    check_exact_with_litert(data, reduce_feeds(dtype, [2, 5, 4, 3], dynamic), tmp_path)


def test_mean_int16_same_params_general(tmp_path):
    data = reduce_model("MEAN", "INT16", [2, 5, 4, 3], [1, 2], False, Q["INT16"])
    check_exact_with_litert(data, reduce_feeds("INT16", [2, 5, 4, 3]), tmp_path)


SUM_OUT_Q = {"INT8": [([0.05], [-3], 0), ([0.4], [5], 0), ([1.3], [-100], 0), ([0.011], [0], 0)],
             "UINT8": [([0.05], [131], 0), ([0.4], [128], 0), ([1.3], [3], 0), ([0.011], [0], 0)],
             "INT16": [([0.002], [0], 0), ([0.01], [0], 0), ([0.0005], [0], 0)]}


@pytest.mark.parametrize("axes,keep", [([1, 2], True), ([-1], False)])
@pytest.mark.parametrize("out_q", SUM_OUT_Q["UINT8"])
def test_sum_uint8(out_q, axes, keep, tmp_path):
    data = reduce_model("SUM", "UINT8", [2, 5, 4, 3], axes, keep, out_q)
    check_exact_with_litert(data, reduce_feeds("UINT8", [2, 5, 4, 3]), tmp_path)


def kernel_sum(x, axes, in_q, out_q, dtype):
    """reference_ops::QuantizedMeanOrSum (compute_sum) in numpy: LiteRT 2.3's reference SUM reads int8 and
    int16 data as uint8 bytes (``GetTensorData<uint8_t>`` in reduce.cc), so the kernel's formula is the judge."""
    real = float(np.float64(np.float32(in_q[0][0])) / np.float64(np.float32(out_q[0][0])))
    m, e = quantize_multiplier(real)
    total = (x.astype(np.int64) - in_q[1][0]).sum(axis=tuple(axes))
    lo, hi = RANGE[dtype]
    return np.clip(multiply_by_quantized_multiplier(total, m, e) + out_q[1][0], lo, hi).astype(x.dtype)


@pytest.mark.parametrize("axes", [[1, 2], [3]])
@pytest.mark.parametrize("dtype,out_q", [(d, q) for d in ("INT8", "INT16") for q in SUM_OUT_Q[d]])
def test_sum_signed_follows_kernel_formula(dtype, out_q, axes, tmp_path):
    data = reduce_model("SUM", dtype, [2, 5, 4, 3], axes, False, out_q)
    graph = convert(data)
    for n, feeds in enumerate(reduce_feeds(dtype, [2, 5, 4, 3])):
        want = [kernel_sum(feeds["x"], axes, Q[dtype], out_q, dtype)]
        compare_both_paths(graph, feeds, want, 0.0, 0.0)
        static, tosa = specialize_and_emit(graph, {"x": feeds["x"].shape})
        check_reference_model(tosa, static, feeds, run_graph(static, feeds), tmp_path / str(n))


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["REDUCE_MAX", "REDUCE_MIN"])
def test_reduce_extremes(op, dtype, keep, tmp_path):
    data = reduce_model(op, dtype, [2, 5, 4, 3], [1, -1], keep, Q[dtype])
    check_exact_with_litert(data, reduce_feeds(dtype, [2, 5, 4, 3]), tmp_path)


def test_reduce_max_other_params_refused():
    data = reduce_model("REDUCE_MAX", "INT8", [2, 5, 4, 3], [1], False, ([0.1], [-3], 0))
    with pytest.raises(ConversionError, match="TFLite's REDUCE_MAX kernel requires them equal"):
        convert(data)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("out_scale", [0.1, 0.0004])      # RESCALE shift above and below 32
def test_mean_over_dynamic_hw_divides_by_the_bound_count(dtype, out_scale, tmp_path):
    """MEAN over symbolic H x W: the multiplier folds 1/n at bind time (COUNT_RESCALE), one model run at
    counts 1, 20, 63 and 256 (different folding shifts), bit-exact with LiteRT each time."""
    out_q = ([out_scale * (0.05 if dtype == "INT16" else 1)], [0 if dtype == "INT16" else 7 + 100 * (dtype == "UINT8")], 0)
    m = ModelBuilder()
    x = m.input("x", [2, 5, 4, 3], dtype, [-1, -1, -1, 3], quant=Q[dtype])
    y = m.tensor("y", [2, 1, 1, 3], dtype, [-1, 1, 1, 3], quant=out_q)
    m.op("MEAN", [x, m.const("axes", np.array([1, 2], np.int32))], [y], "ReducerOptions", KeepDims=True)
    m.output(y)
    data = m.finish()
    graph = convert(data)
    assert any(op.op.name == "COUNT_RESCALE" for op in graph.ops)
    feeds = [{"x": q_data(dtype, (b, h, w, 3))} for b, h, w in ((2, 1, 1), (1, 4, 5), (3, 7, 9), (1, 16, 16))]
    check_exact_with_litert(data, feeds, tmp_path)
