"""Shape, slicing, reduction, convolution and fully connected ops against LiteRT,
with a dynamic batch fed at two sizes where the op allows it, plus fp16 weights
behind DEQUANTIZE."""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, check_with_litert, rand

I32 = np.int32


def _model(op, in_shape, out_shape, consts=(), options=None, sig_in=None, sig_out=None, out_dtype="FLOAT32",
           **fields):
    m = ModelBuilder()
    x = m.input("x", in_shape, signature=sig_in)
    extra = [m.const(f"c{i}", c) if c is not None else -1 for i, c in enumerate(consts)]
    y = m.tensor("y", out_shape, out_dtype, signature=sig_out)
    m.op(op, [x, *extra], [y], options, **fields)
    m.output(y)
    return m.finish()


def _two(*shape):
    return [{"x": rand(2, *shape)}, {"x": rand(3, *shape, seed=5)}]


@pytest.mark.parametrize("masks", [dict(), dict(BeginMask=1, EndMask=4), dict(ShrinkAxisMask=2),
                                   dict(NewAxisMask=2), dict(EllipsisMask=1), dict(EndMask=7)])
def test_strided_slice_masks(masks):
    begin, end, strides = np.array([0, 1, 0], I32), np.array([2, 3, 5], I32), np.array([1, 1, 2], I32)
    ref = np.zeros((4, 4, 6))
    from tests.importers.tflite.harness import run_litert
    probe = _model("STRIDED_SLICE", [4, 4, 6], [1], [begin, end, strides], "StridedSliceOptions", **masks)
    shape = list(run_litert(probe, {"x": ref.astype(np.float32)})[0].shape)
    data = _model("STRIDED_SLICE", [4, 4, 6], shape, [begin, end, strides], "StridedSliceOptions", **masks)
    check_with_litert(data, [{"x": rand(4, 4, 6)}])


def test_strided_slice_negative_stride():
    consts = [np.array([3, -1], I32), np.array([0, 0], I32), np.array([-1, -2], I32)]
    data = _model("STRIDED_SLICE", [4, 6], [3, 3], consts, "StridedSliceOptions", EndMask=2)
    check_with_litert(data, [{"x": rand(4, 6)}])


def test_reshape_new_shape_option_with_hole():
    data = _model("RESHAPE", [1, 4, 6], [1, 24], [], "ReshapeOptions", sig_in=[-1, 4, 6], sig_out=[-1, 24],
                  NewShape=[-1, 24])
    check_with_litert(data, _two(4, 6))


@pytest.mark.parametrize("keep", [False, True])
def test_fully_connected_keep_num_dims(keep):
    w, b = rand(5, 6, seed=2), rand(5, seed=3)
    out = [1, 4, 5] if keep else [4, 5]
    data = _model("FULLY_CONNECTED", [1, 4, 6], out, [w, b], "FullyConnectedOptions", sig_in=[-1, 4, 6],
                  sig_out=[-1, 4, 5] if keep else [-1, 5], KeepNumDims=keep, FusedActivationFunction=1)
    check_with_litert(data, _two(4, 6))


@pytest.mark.parametrize("padding,stride,dilation", [(0, 1, 1), (1, 1, 1), (0, 2, 1), (1, 2, 1), (0, 1, 2)])
def test_conv_2d(padding, stride, dilation):
    w, b = rand(4, 3, 3, 2, seed=1), rand(4, seed=2)
    probe_out = [1, 1, 1, 4]
    fields = dict(Padding=padding, StrideH=stride, StrideW=stride, DilationHFactor=dilation,
                  DilationWFactor=dilation)
    from tests.importers.tflite.harness import run_litert
    probe = _model("CONV_2D", [1, 9, 8, 2], probe_out, [w, b], "Conv2DOptions", **fields)
    shape = list(run_litert(probe, {"x": rand(1, 9, 8, 2)})[0].shape)
    data = _model("CONV_2D", [1, 9, 8, 2], shape, [w, b], "Conv2DOptions", sig_in=[-1, 9, 8, 2],
                  sig_out=[-1] + shape[1:], **fields)
    check_with_litert(data, [{"x": rand(1, 9, 8, 2)}, {"x": rand(3, 9, 8, 2, seed=4)}])


def test_grouped_conv_2d():
    """A [6, 3, 3, 2] filter on a 4-channel input: two groups of 3 outputs (TFLite 2.9+)."""
    data = _model("CONV_2D", [1, 7, 7, 4], [1, 7, 7, 6], [rand(6, 3, 3, 2, seed=1), rand(6, seed=2)],
                  "Conv2DOptions", sig_in=[-1, 7, 7, 4], sig_out=[-1, 7, 7, 6], Padding=0, StrideH=1, StrideW=1)
    check_with_litert(data, _two(7, 7, 4))


def test_conv_2d_channels_that_form_no_groups_are_refused():
    from tests.importers.tflite.harness import convert
    from tosaconv.diagnostics import TosaconvError
    data = _model("CONV_2D", [1, 7, 7, 5], [1, 7, 7, 6], [rand(6, 3, 3, 2, seed=1), rand(6, seed=2)],
                  "Conv2DOptions", Padding=0, StrideH=1, StrideW=1)
    with pytest.raises(TosaconvError, match="5 channels and the filter 2 per group.*not a grouped convolution"):
        convert(data)


def test_depthwise_multiplier():
    w = rand(1, 3, 3, 6, seed=1)
    data = _model("DEPTHWISE_CONV_2D", [1, 7, 7, 3], [1, 7, 7, 6], [w, rand(6, seed=2)], "DepthwiseConv2DOptions",
                  sig_in=[-1, 7, 7, 3], sig_out=[-1, 7, 7, 6], Padding=0, StrideH=1, StrideW=1,
                  DepthMultiplier=2)
    check_with_litert(data, _two(7, 7, 3))


@pytest.mark.parametrize("op", ["MAX_POOL_2D", "AVERAGE_POOL_2D"])
def test_pool_same_dynamic_hw_stride_1(op):
    data = _model(op, [1, 6, 6, 2], [1, 6, 6, 2], [], "Pool2DOptions", sig_in=[1, -1, -1, 2],
                  sig_out=[1, -1, -1, 2], Padding=0, StrideH=1, StrideW=1, FilterHeight=3, FilterWidth=2)
    check_with_litert(data, [{"x": rand(1, 6, 6, 2)}, {"x": rand(1, 4, 9, 2, seed=1)}])


@pytest.mark.parametrize("op", ["MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"])
@pytest.mark.parametrize("keep", [False, True])
def test_reductions_over_dynamic_axis(op, keep):
    out = [1, 4] if not keep else [1, 1, 4]
    data = _model(op, [1, 3, 4], out, [np.array([0, 1], I32)], "ReducerOptions", sig_in=[-1, 3, 4], KeepDims=keep)
    check_with_litert(data, _two(3, 4))


def test_concat_transpose_pad_pack():
    m = ModelBuilder()
    x = m.input("x", [1, 3, 4], signature=[-1, 3, 4])
    c = m.tensor("c", [1, 3, 8], signature=[-1, 3, 8])
    m.op("CONCATENATION", [x, x], [c], "ConcatenationOptions", Axis=2)
    t = m.tensor("t", [1, 8, 3], signature=[-1, 8, 3])
    m.op("TRANSPOSE", [c, m.const("perm", np.array([0, 2, 1], I32))], [t])
    p = m.tensor("p", [1, 9, 5], signature=[-1, 9, 5])
    m.op("PADV2", [t, m.const("pads", np.array([[0, 0], [1, 0], [0, 2]], I32)),
                   m.const("v", np.array([1.5], np.float32))], [p])
    k = m.tensor("k", [1, 2, 9, 5], signature=[-1, 2, 9, 5])
    m.op("PACK", [p, p], [k], "PackOptions", ValuesCount=2, Axis=1)
    m.output(k)
    check_with_litert(m.finish(), _two(3, 4))


def test_split_v_unpack_squeeze_expand_dims():
    m = ModelBuilder()
    x = m.input("x", [1, 6, 2], signature=[-1, 6, 2])
    a, b = m.tensor("a", [1, 2, 2], signature=[-1, 2, 2]), m.tensor("b", [1, 4, 2], signature=[-1, 4, 2])
    m.op("SPLIT_V", [x, m.const("sizes", np.array([2, -1], I32)), m.const("axis", np.array(1, I32))], [a, b],
         "SplitVOptions", NumSplits=2)
    u0, u1 = m.tensor("u0", [1, 4], signature=[-1, 4]), m.tensor("u1", [1, 4], signature=[-1, 4])
    m.op("UNPACK", [b], [u0, u1], "UnpackOptions", Num=2, Axis=2)
    e = m.tensor("e", [1, 1, 4], signature=[-1, 1, 4])
    m.op("EXPAND_DIMS", [u1, m.const("ax", np.array([1], I32))], [e])
    s = m.tensor("s", [1, 4], signature=[-1, 4])
    m.op("SQUEEZE", [e], [s], "SqueezeOptions", SqueezeDims=[1])
    m.output(a, u0, s)
    check_with_litert(m.finish(), _two(6, 2))


def test_batch_matmul_adjoint():
    m = ModelBuilder()
    a = m.input("a", [2, 4, 3])
    b = m.input("b", [2, 5, 4])
    y = m.tensor("y", [2, 3, 5])
    m.op("BATCH_MATMUL", [a, b], [y], "BatchMatMulOptions", AdjX=True, AdjY=True)
    m.output(y)
    check_with_litert(m.finish(), [{"a": rand(2, 4, 3), "b": rand(2, 5, 4, seed=1)}])


def test_fp16_weights_behind_dequantize_fold_to_fp32():
    m = ModelBuilder()
    x = m.input("x", [1, 6], signature=[-1, 6])
    w16 = m.const("w16", rand(3, 6, seed=2).astype(np.float16))
    w = m.tensor("w", [3, 6])
    m.op("DEQUANTIZE", [w16], [w])
    y = m.tensor("y", [1, 3], signature=[-1, 3])
    m.op("FULLY_CONNECTED", [x, w, -1], [y], "FullyConnectedOptions")
    m.output(y)
    graph = check_with_litert(m.finish(), [{"x": rand(2, 6)}, {"x": rand(4, 6, seed=1)}])
    assert all(op.op.name != "CAST" for op in graph.ops)
