"""TILE, GATHER, GATHER_ND, ARG_MAX/MIN, FILL, ZEROS_LIKE, RANGE, BROADCAST_TO,
MIRROR_PAD, CUMSUM, DEPTH_TO_SPACE, SPACE_TO_DEPTH, RESIZE_*, TRANSPOSE_CONV,
SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND against LiteRT, with a dynamic dim fed
at two sizes where the op allows it."""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.diagnostics import ConversionError, TosaconvError
from tests.importers.tflite.harness import ModelBuilder, check_with_litert, convert, rand, run_litert

I32 = np.int32


def _model(op, in_shape, out_shape, consts=(), options=None, sig_in=None, sig_out=None, out_dtype="FLOAT32",
           in_dtype="FLOAT32", **fields):
    m = ModelBuilder()
    x = m.input("x", in_shape, in_dtype, signature=sig_in)
    extra = [m.const(f"c{i}", c) if c is not None else -1 for i, c in enumerate(consts)]
    y = m.tensor("y", out_shape, out_dtype, signature=sig_out)
    m.op(op, [x, *extra], [y], options, **fields)
    m.output(y)
    return m.finish()


def _dynamic(op, in_shape, consts=(), options=None, dyn=(0,), sizes=(2, 3), out_dtype="FLOAT32", **fields):
    """A model whose input has dims ``dyn`` dynamic; the output shape comes from LiteRT at the first size."""
    shape = list(in_shape)
    probe = _model(op, shape, [1], consts, options, out_dtype=out_dtype, **fields)
    out = list(run_litert(probe, {"x": rand(*shape)})[0].shape)
    sig_in = [-1 if i in dyn else d for i, d in enumerate(shape)]
    sig_out = [-1] * len(out)
    data = _model(op, shape, out, consts, options, sig_in=sig_in, sig_out=sig_out, out_dtype=out_dtype, **fields)
    feeds = []
    for k, s in enumerate(sizes):
        fs = [s if i in dyn else d for i, d in enumerate(shape)]
        feeds.append({"x": rand(*fs, seed=k + 1)})
    return data, feeds


def test_tile_dynamic_batch():
    data, feeds = _dynamic("TILE", [2, 3, 4], [np.array([2, 1, 3], I32)])
    check_with_litert(data, feeds)


@pytest.mark.parametrize("axis,batch_dims,idx", [
    (0, 0, np.array([1, 0, 1], I32)),
    (1, 0, np.array([[2, 0], [1, 1]], I32)),
    (-1, 0, np.array([3, 0], I32)),
    (2, 1, None),
    (1, 1, None),
])
def test_gather(axis, batch_dims, idx):
    if idx is None:      # batch_dims: one row of indices per batch entry (static batch)
        idx = np.array([[0, 2], [1, 1]], I32) if axis == 1 else np.array([[3, 0, 1], [2, 2, 0]], I32)
        data, feeds = _dynamic("GATHER", [2, 3, 4], [idx], "GatherOptions", dyn=(), sizes=(2,),
                               Axis=axis, BatchDims=batch_dims)
        check_with_litert(data, feeds)
        return
    dyn = (0,) if axis != 0 else (1,)
    data, feeds = _dynamic("GATHER", [2, 3, 4], [idx], "GatherOptions", dyn=dyn, sizes=(2, 5), Axis=axis,
                           BatchDims=batch_dims)
    check_with_litert(data, feeds)


def test_gather_runtime_indices_batch_dims():
    m = ModelBuilder()
    x = m.input("x", [2, 3, 4], signature=[-1, 3, 4])
    i = m.input("i", [2, 5], "INT32", signature=[-1, 5])
    y = m.tensor("y", [2, 3, 5], signature=[-1, 3, 5])
    m.op("GATHER", [x, i], [y], "GatherOptions", Axis=2, BatchDims=1)
    m.output(y)
    idx = np.array([[0, 3, 1, 2, 2], [1, 0, 0, 3, 2], [3, 3, 1, 0, 2]], I32)
    check_with_litert(m.finish(), [{"x": rand(2, 3, 4), "i": idx[:2]}, {"x": rand(3, 3, 4, seed=4), "i": idx}])


@pytest.mark.parametrize("idx", [np.array([[1, 0], [0, 2]], I32), np.array([[1], [0], [1]], I32)])
def test_gather_nd(idx):
    data, feeds = _dynamic("GATHER_ND", [2, 3, 4], [idx], dyn=(2,), sizes=(4, 6))
    check_with_litert(data, feeds)


@pytest.mark.parametrize("op,options", [("ARG_MAX", "ArgMaxOptions"), ("ARG_MIN", "ArgMinOptions")])
@pytest.mark.parametrize("axis,out_type", [(1, "INT32"), (-1, "INT64")])
def test_arg_max_min(op, options, axis, out_type):
    data, feeds = _dynamic(op, [2, 5, 4], [np.array([axis], I32)], options, out_dtype=out_type,
                           OutputType=2 if out_type == "INT32" else 4)
    check_with_litert(data, feeds)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum(exclusive, reverse):
    data, feeds = _dynamic("CUMSUM", [2, 5, 3], [np.array(1, I32)], "CumsumOptions", dyn=(1,), sizes=(5, 7),
                           Exclusive=exclusive, Reverse=reverse)
    check_with_litert(data, feeds)


def test_shape_fill_zeros_like_range_broadcast():
    """SHAPE -> FILL gives a dynamic constant tensor; ZEROS_LIKE and BROADCAST_TO follow the dynamic batch."""
    m = ModelBuilder()
    x = m.input("x", [2, 3], signature=[-1, 3])
    s = m.tensor("s", [2], "INT32")
    m.op("SHAPE", [x], [s], "ShapeOptions", OutType=2)
    f = m.tensor("f", [2, 3], signature=[-1, 3])
    m.op("FILL", [s, m.const("v", np.array(2.5, np.float32))], [f])
    z = m.tensor("z", [2, 3], signature=[-1, 3])
    m.op("ZEROS_LIKE", [x], [z], "ZerosLikeOptions")
    r = m.tensor("r", [4])
    m.op("RANGE", [m.const("a", np.array(1.0, np.float32)), m.const("l", np.array(3.0, np.float32)),
                   m.const("d", np.array(0.5, np.float32))], [r], "RangeOptions")
    bshape = m.tensor("bs", [3], "INT32")
    m.op("CONCATENATION", [m.const("two", np.array([2], I32)), s], [bshape], "ConcatenationOptions", Axis=0)
    bt = m.tensor("bt", [2, 2, 3], signature=[2, -1, 3])
    m.op("BROADCAST_TO", [x, bshape], [bt], "BroadcastToOptions", version=2)
    m.output(f, z, r, bt)
    check_with_litert(m.finish(), [{"x": rand(2, 3)}, {"x": rand(4, 3, seed=2)}])


def test_range_from_shape():
    m = ModelBuilder()
    x = m.input("x", [5], signature=[-1])
    s = m.tensor("s", [1], "INT32")
    m.op("SHAPE", [x], [s], "ShapeOptions", OutType=2)
    n = m.tensor("n", [], "INT32")
    m.op("RESHAPE", [s], [n], "ReshapeOptions", NewShape=[])
    r = m.tensor("r", [5], "INT32", signature=[-1])
    m.op("RANGE", [m.const("a", np.array(0, I32)), n, m.const("d", np.array(1, I32))], [r], "RangeOptions")
    m.output(r)
    check_with_litert(m.finish(), [{"x": rand(5)}, {"x": rand(8, seed=3)}])


@pytest.mark.parametrize("mode", [0, 1])
def test_mirror_pad(mode):
    pads = np.array([[0, 0], [2, 1], [1, 3]], I32)
    data, feeds = _dynamic("MIRROR_PAD", [2, 4, 5], [pads], "MirrorPadOptions", dyn=(0, 1), sizes=(3, 6), Mode=mode)
    check_with_litert(data, feeds)


def test_depth_to_space_space_to_depth():
    for op, options, shape in (("DEPTH_TO_SPACE", "DepthToSpaceOptions", [1, 2, 3, 8]),
                               ("SPACE_TO_DEPTH", "SpaceToDepthOptions", [1, 4, 6, 3])):
        data, feeds = _dynamic(op, shape, [], options, BlockSize=2)
        check_with_litert(data, feeds)


def test_space_to_depth_dynamic_hw():
    data = _model("SPACE_TO_DEPTH", [1, 4, 6, 3], [1, 2, 3, 12], [], "SpaceToDepthOptions", sig_in=[1, -1, -1, 3],
                  sig_out=[1, -1, -1, 12], BlockSize=2)
    check_with_litert(data, [{"x": rand(1, 4, 6, 3)}, {"x": rand(1, 8, 2, 3, seed=1)}])


@pytest.mark.parametrize("shape,block,pads", [
    ([2, 5, 6, 3], [2, 3], [[1, 0], [0, 0]]),
    ([2, 4, 3], [2], [[1, 1]]),
    ([1, 4, 6, 2], [2, 2], [[0, 0], [1, 1]]),
])
def test_space_to_batch_and_back(shape, block, pads):
    consts = [np.array(block, I32), np.array(pads, I32)]
    data, feeds = _dynamic("SPACE_TO_BATCH_ND", shape, consts)
    check_with_litert(data, feeds)
    probe = _model("SPACE_TO_BATCH_ND", shape, [1], consts)
    s2b = run_litert(probe, {"x": rand(*shape)})[0].shape
    data, feeds = _dynamic("BATCH_TO_SPACE_ND", list(s2b), consts, sizes=(s2b[0], 3 * int(np.prod(block))))
    check_with_litert(data, feeds)


@pytest.mark.parametrize("op,options", [("RESIZE_BILINEAR", "ResizeBilinearOptions"),
                                        ("RESIZE_NEAREST_NEIGHBOR", "ResizeNearestNeighborOptions")])
@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("hw,size", [((4, 5), (8, 10)), ((6, 6), (4, 3)), ((3, 5), (7, 4)), ((5, 4), (1, 4))])
def test_resize(op, options, align, half, hw, size):
    data, feeds = _dynamic(op, [1, *hw, 3], [np.array(size, I32)], options, AlignCorners=align,
                           HalfPixelCenters=half)
    check_with_litert(data, feeds)


def _transpose_conv(in_hw, out_hw, k, stride, padding, with_bias, act=0):
    """SHAPE -> STRIDED_SLICE -> CONCATENATION builds output_shape with the input's (dynamic) batch."""
    m = ModelBuilder()
    x = m.input("x", [1, *in_hw, 3], signature=[-1, *in_hw, 3])
    s = m.tensor("s", [4], "INT32")
    m.op("SHAPE", [x], [s], "ShapeOptions", OutType=2)
    n = m.tensor("n", [1], "INT32")
    m.op("STRIDED_SLICE", [s, m.const("b", np.array([0], I32)), m.const("e", np.array([1], I32)),
                           m.const("st", np.array([1], I32))], [n], "StridedSliceOptions")
    shape = m.tensor("shape", [4], "INT32")
    m.op("CONCATENATION", [n, m.const("hwc", np.array([*out_hw, 4], I32))], [shape], "ConcatenationOptions",
         Axis=0)
    w = m.const("w", rand(4, k[0], k[1], 3, seed=7))
    bias = m.const("bias", rand(4, seed=8)) if with_bias else -1
    y = m.tensor("y", [1, *out_hw, 4], signature=[-1, *out_hw, 4])
    m.op("TRANSPOSE_CONV", [shape, w, x, bias], [y], "TransposeConvOptions", version=4 if act else 3,
         Padding=padding, StrideH=stride[0], StrideW=stride[1], FusedActivationFunction=act)
    m.output(y)
    return m.finish()


@pytest.mark.parametrize("in_hw,out_hw,k,stride,padding", [
    ((3, 4), (6, 8), (3, 3), (2, 2), 0),
    ((3, 4), (5, 7), (3, 3), (2, 2), 0),
    ((3, 4), (7, 9), (3, 3), (2, 2), 1),
    ((4, 4), (4, 4), (3, 2), (1, 1), 0),
    ((2, 3), (6, 8), (2, 2), (3, 3), 1),
    ((3, 3), (5, 5), (3, 3), (1, 1), 1),
])
@pytest.mark.parametrize("with_bias", [False, True])
def test_transpose_conv(in_hw, out_hw, k, stride, padding, with_bias):
    data = _transpose_conv(in_hw, out_hw, k, stride, padding, with_bias)
    check_with_litert(data, [{"x": rand(1, *in_hw, 3)}, {"x": rand(3, *in_hw, 3, seed=2)}])


def test_transpose_conv_input_not_fitting_output_shape_is_refused():
    """LiteRT refuses an input size other than the one output_shape and the padding imply; so does tosaconv."""
    with pytest.raises(TosaconvError, match="fits output_shape"):
        convert(_transpose_conv((3, 4), (4, 5), (3, 3), (2, 2), 0, False))


def test_transpose_conv_fused_relu():
    data = _transpose_conv((3, 4), (6, 8), (3, 3), (2, 2), 0, True, act=1)
    check_with_litert(data, [{"x": rand(2, 3, 4, 3)}])


@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True)])
def test_resize_bilinear_dynamic_hw(align, half):
    data = _model("RESIZE_BILINEAR", [1, 4, 4, 2], [1, 6, 5, 2], [np.array([6, 5], I32)], "ResizeBilinearOptions",
                  sig_in=[1, -1, -1, 2], sig_out=[1, 6, 5, 2], AlignCorners=align, HalfPixelCenters=half)
    check_with_litert(data, [{"x": rand(1, 4, 4, 2)}, {"x": rand(1, 3, 7, 2, seed=3)}])


def test_resize_nearest_symbolic_hw_is_refused():
    """TFLite's float32 picks depend on the input size (14 -> 18 differs from the exact mapping)."""
    data = _model("RESIZE_NEAREST_NEIGHBOR", [1, 14, 2, 1], [1, 18, 2, 1], [np.array([18, 2], I32)],
                  "ResizeNearestNeighborOptions", sig_in=[1, -1, 2, 1], sig_out=[1, 18, 2, 1])
    with pytest.raises(ConversionError, match="symbolic input axis 1"):
        convert(data)


def test_resize_nearest_dynamic_batch_float32_tie():
    data = _model("RESIZE_NEAREST_NEIGHBOR", [1, 14, 3, 2], [1, 18, 3, 2], [np.array([18, 3], I32)],
                  "ResizeNearestNeighborOptions", sig_in=[-1, 14, 3, 2], sig_out=[-1, 18, 3, 2])
    check_with_litert(data, [{"x": rand(1, 14, 3, 2)}, {"x": rand(2, 14, 3, 2, seed=3)}])


def test_gather_of_shape_and_int_data():
    """GATHER picks symbolic dims out of SHAPE; TILE, GATHER_ND and ZEROS_LIKE take int32 data."""
    m = ModelBuilder()
    x = m.input("x", [2, 3], "INT32", signature=[-1, 3])
    s = m.tensor("s", [2], "INT32")
    m.op("SHAPE", [x], [s], "ShapeOptions", OutType=2)
    g = m.tensor("g", [2], "INT32")
    m.op("GATHER", [s, m.const("i", np.array([1, 0], I32))], [g], "GatherOptions", Axis=0)
    t = m.tensor("t", [3, 2], "INT32", signature=[3, -1])
    m.op("TILE", [m.const("one", np.ones((1, 1), I32)), g], [t])
    nd = m.tensor("nd", [2], "INT32", signature=[2])
    m.op("GATHER_ND", [x, m.const("ij", np.array([[1, 2], [0, 1]], I32))], [nd])
    z = m.tensor("z", [2, 3], "INT32", signature=[-1, 3])
    m.op("ZEROS_LIKE", [x], [z], "ZerosLikeOptions")
    m.output(t, nd, z)
    feeds = [{"x": np.arange(6, dtype=I32).reshape(2, 3)}, {"x": np.arange(15, dtype=I32).reshape(5, 3)}]
    check_with_litert(m.finish(), feeds)


@pytest.mark.parametrize("align,half,hw,size", [(False, False, (14, 3), (18, 6)), (True, False, (7, 11), (29, 25)),
                                                (False, True, (14, 6), (9, 37))])
def test_resize_nearest_float32_ties(align, half, hw, size):
    """Sizes where TFLite's float32 scale breaks exact ties the other way (see the converter's docstring)."""
    data, feeds = _dynamic("RESIZE_NEAREST_NEIGHBOR", [1, *hw, 2], [np.array(size, I32)],
                           "ResizeNearestNeighborOptions", AlignCorners=align, HalfPixelCenters=half)
    check_with_litert(data, feeds)


def test_fill_with_runtime_value_and_dynamic_dims():
    m = ModelBuilder()
    x = m.input("x", [2, 3], signature=[-1, 3])
    v = m.input("v", [])
    s = m.tensor("s", [2], "INT32")
    m.op("SHAPE", [x], [s], "ShapeOptions", OutType=2)
    f = m.tensor("f", [2, 3], signature=[-1, 3])
    m.op("FILL", [s, v], [f])
    m.output(f)
    feeds = [{"x": rand(2, 3), "v": np.array(1.25, np.float32)}, {"x": rand(5, 3), "v": np.array(-3.0, np.float32)}]
    check_with_litert(m.finish(), feeds)
