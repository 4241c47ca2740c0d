"""3-D Conv (TOSA CONV3D) and ConvTranspose groups, dilations and 3-D against onnxruntime:
pads, strides, dilations, groups (depthwise included), every auto_pad, output_padding and
output_shape, constant and run-time weights, on symbolic dims run at two shapes and through
specialization and emission. Also the IR (CONV3D per group; a 3-D ConvTranspose as a stride-1
CONV3D of the spread input with the flipped kernel) and the CONV3D interpreter kernel against a
direct loop over the spec pseudocode.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv import api
from tests.interpreter.helpers import run_op
from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.ops import Op
from tosaconv.ir.verifier import check

from .harness import assert_close, check_with_onnxruntime, convert, rand, run_graph
from .test_nn_conv import _conv_model

SYM3, SHAPES3 = ["N", 4, "D", "H", "W"], [(1, 4, 5, 6, 7), (2, 4, 7, 5, 6)]
SYM2, SHAPES2 = ["N", 4, "H", "W"], [(1, 4, 7, 9), (2, 4, 8, 6)]
SYM1, SHAPES1 = ["N", 4, "L"], [(1, 4, 11), (2, 4, 16)]


def _feeds(shapes, w_shape=None):
    feeds = [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)]
    for f in feeds if w_shape else []:
        f["W"] = rand(*w_shape, seed=7)
    return feeds


def _check(op, dims, shapes, w_shape, runtime_weight=False, **attrs):
    """onnxruntime at every shape; each binding specializes and emits."""
    model = _conv_model(op, dims, w_shape, runtime_weight=runtime_weight, **attrs)
    feeds = _feeds(shapes, w_shape if runtime_weight else None)
    graph = check_with_onnxruntime(model, feeds)
    check(graph)
    for f in feeds:
        static = api.specialize(graph, api.solve_bindings(graph, {k: v.shape for k, v in f.items()}))
        api.emit(static)
        assert_close(run_graph(static, f)[0], run_graph(graph, f)[0], 1e-6, 1e-6)
    return graph


CONV_3D = [
    ((6, 4, 3, 3, 3), {}),
    ((6, 4, 3, 2, 3), dict(strides=[2, 1, 2], pads=[1, 0, 1, 1, 1, 0])),
    ((6, 2, 3, 3, 3), dict(group=2, dilations=[1, 2, 1], pads=[1, 1, 1, 1, 1, 1])),
    ((8, 1, 3, 3, 3), dict(group=4, auto_pad="SAME_UPPER")),
    ((6, 4, 2, 2, 2), dict(auto_pad="VALID", strides=[1, 2, 1])),
]


@pytest.mark.parametrize("runtime_weight", [False, True])
@pytest.mark.parametrize("w_shape,attrs", CONV_3D, ids=str)
def test_conv3d(w_shape, attrs, runtime_weight):
    graph = _check("Conv", SYM3, SHAPES3, w_shape, runtime_weight, **attrs)
    assert graph.histogram()["CONV3D"] == attrs.get("group", 1)


TRANSPOSE_2D = [
    (SYM2, SHAPES2, (4, 3, 3, 3), dict(group=2)),
    (SYM2, SHAPES2, (4, 3, 3, 3), dict(group=4, strides=[2, 2], pads=[1, 0, 1, 1])),
    (SYM2, SHAPES2, (4, 3, 3, 2), dict(dilations=[2, 3])),
    (SYM2, SHAPES2, (4, 3, 3, 2), dict(dilations=[2, 2], strides=[2, 3], output_padding=[1, 0], group=2)),
    (SYM2, SHAPES2, (4, 3, 3, 3), dict(dilations=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER")),
    (SYM1, SHAPES1, (4, 3, 3), dict(dilations=[2], group=2, strides=[2])),
]


@pytest.mark.parametrize("runtime_weight", [False, True])
@pytest.mark.parametrize("dims,shapes,w_shape,attrs", TRANSPOSE_2D, ids=lambda v: str(v)[:50])
def test_conv_transpose_groups_and_dilations(dims, shapes, w_shape, attrs, runtime_weight):
    graph = _check("ConvTranspose", dims, shapes, w_shape, runtime_weight, **attrs)
    assert graph.histogram()["TRANSPOSE_CONV2D"] == attrs.get("group", 1)


TRANSPOSE_3D = [
    ((4, 3, 3, 3, 3), {}),
    ((4, 3, 3, 2, 3), dict(strides=[2, 1, 3], pads=[1, 0, 0, 1, 2, 1], output_padding=[1, 0, 2])),
    ((4, 2, 2, 3, 2), dict(group=2, dilations=[2, 1, 2], strides=[1, 2, 2])),
    ((4, 3, 3, 3, 3), dict(strides=[2, 2, 2], auto_pad="SAME_LOWER")),
    ((4, 3, 2, 2, 2), dict(pads=[3, 2, 2, 3, 2, 2], strides=[3, 3, 3])),     # crops beyond the kernel
]


@pytest.mark.parametrize("runtime_weight", [False, True])
@pytest.mark.parametrize("w_shape,attrs", TRANSPOSE_3D, ids=str)
def test_conv_transpose_3d(w_shape, attrs, runtime_weight):
    graph = _check("ConvTranspose", SYM3, SHAPES3, w_shape, runtime_weight, **attrs)
    ops = graph.histogram()
    assert ops["CONV3D"] == attrs.get("group", 1) and "TRANSPOSE_CONV2D" not in ops


def test_conv_transpose_3d_output_shape():
    model = _conv_model("ConvTranspose", [1, 4, 3, 4, 5], (4, 2, 3, 3, 3), strides=[2, 2, 2],
                        output_shape=[8, 9, 10])
    graph = check_with_onnxruntime(model, _feeds([(1, 4, 3, 4, 5)]))
    assert graph.outputs[0].type.shape == (1, 2, 8, 9, 10)


def _conv3d_loop(x, w, bias, pad, stride, dilation):
    """The spec pseudocode, one output element at a time."""
    n, ids, ih, iw, _ = x.shape
    oc, kd, kh, kw, _ = w.shape
    out = [(size - 1 + pad[2 * i] + pad[2 * i + 1] - (k - 1) * dilation[i]) // stride[i] + 1
           for i, (size, k) in enumerate(((ids, kd), (ih, kh), (iw, kw)))]
    y = np.zeros((n, *out, oc), np.float64)
    for b, od, oy, ox, o in np.ndindex(n, *out, oc):
        acc = 0.0
        for a, c, e in np.ndindex(kd, kh, kw):
            d = od * stride[0] - pad[0] + a * dilation[0]
            yy = oy * stride[1] - pad[2] + c * dilation[1]
            xx = ox * stride[2] - pad[4] + e * dilation[2]
            if 0 <= d < ids and 0 <= yy < ih and 0 <= xx < iw:
                acc += float(np.dot(x[b, d, yy, xx], w[o, a, c, e]))
        y[b, od, oy, ox, o] = acc + bias[o]
    return y


@pytest.mark.parametrize("pad,stride,dilation", [((0,) * 6, (1, 1, 1), (1, 1, 1)),
                                                 ((1, 0, 2, 1, 0, 1), (2, 1, 2), (1, 2, 1))], ids=str)
def test_conv3d_kernel_follows_the_spec_pseudocode(pad, stride, dilation):
    x, w, bias = rand(2, 4, 5, 6, 3, seed=1), rand(5, 2, 3, 2, 3, seed=2), rand(5, seed=3)
    got = run_op(Op.CONV3D, [x, w, bias], A.Conv3dAttrs(pad, stride, dilation, DType.FP32))
    assert_close(got, _conv3d_loop(x, w, bias, pad, stride, dilation).astype(np.float32), 1e-5, 1e-5)


def test_conv3d_is_ndhwc_between_a_transpose_pair():
    graph = convert(_conv_model("Conv", SYM3, (6, 4, 3, 3, 3)))
    conv = next(o for o in graph.ops if o.op is Op.CONV3D)
    assert conv.operands[0].producer.attrs.perms == (0, 2, 3, 4, 1)
    assert conv.operands[1].type.shape == (6, 3, 3, 3, 4)
