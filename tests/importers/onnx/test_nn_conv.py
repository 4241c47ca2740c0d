"""ONNX Conv and ConvTranspose against onnxruntime: 1-D and 2-D, group 1,
depthwise (multiplier 1 and 2) and grouped convolutions, pads, strides,
dilations, every auto_pad, with and without bias, constant and run-time
weights, ConvTranspose output_padding and output_shape, each on symbolic
input dims run at two shapes (3-D, ConvTranspose groups and dilations are in
test_nn_conv3d.py). Also the IR they become (TOSA ops in NHWC
between a TRANSPOSE pair, weights transposed at import, DYN_SLICE fitting a
stride on a symbolic size), where ONNX's reference and onnxruntime disagree,
and the conversion errors for what TOSA cannot express.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from tosaconv.diagnostics import ConversionError
from tosaconv.ir.ops import Op
from tosaconv.ir.verifier import check
from tosaconv.symbolic.expr import dim_str

from .harness import F32, assert_close, check_with_onnxruntime, const, convert, info, make_model, rand, run_graph


def _conv_model(op, x_dims, w_shape, bias=True, opset=17, runtime_weight=False, **attrs):
    out_channels = w_shape[0] if op == "Conv" else w_shape[1] * attrs.get("group", 1)
    inits = [] if runtime_weight else [const("W", rand(*w_shape, seed=1))]
    inputs = [info("x", F32, x_dims)] + ([info("W", F32, list(w_shape))] if runtime_weight else [])
    names = ["x", "W"]
    if bias:
        inits.append(const("B", rand(out_channels, seed=2)))
        names.append("B")
    node = helper.make_node(op, names, ["y"], name="conv", **attrs)
    return make_model([node], inputs, [info("y", F32, None)], inits, opset)


def _feeds(*shapes, runtime_weight=None):
    feeds = [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)]
    if runtime_weight is not None:
        for f in feeds:
            f["W"] = rand(*runtime_weight, seed=1)
    return feeds


SHAPES_2D = [(1, 4, 7, 9), (2, 4, 10, 6)]
SYM_2D = ["N", 4, "H", "W"]

CONV_2D = [
    dict(),
    dict(pads=[1, 1, 1, 1]),
    dict(pads=[0, 1, 2, 1], strides=[2, 2]),
    dict(strides=[3, 2]),
    dict(dilations=[2, 1], pads=[2, 0, 1, 1]),
    dict(dilations=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(auto_pad="VALID", strides=[2, 1]),
    dict(auto_pad="SAME_UPPER"),
    dict(auto_pad="SAME_LOWER"),
    dict(auto_pad="SAME_UPPER", kernel_shape=[3, 3]),
]


@pytest.mark.parametrize("attrs", CONV_2D, ids=str)
@pytest.mark.parametrize("opset", [11, 17, 21])
def test_conv2d(attrs, opset):
    model = _conv_model("Conv", SYM_2D, (6, 4, 3, 3), opset=opset, **attrs)
    check(check_with_onnxruntime(model, _feeds(*SHAPES_2D)))


@pytest.mark.parametrize("attrs", [dict(strides=[2, 2], auto_pad="SAME_UPPER"),
                                   dict(strides=[2, 2], auto_pad="SAME_LOWER"),
                                   dict(strides=[2, 3], pads=[1, 0, 0, 1])], ids=str)
def test_conv2d_same_with_stride_on_static_sizes(attrs):
    for shape in SHAPES_2D:
        model = _conv_model("Conv", list(shape), (6, 4, 3, 3), **attrs)
        check_with_onnxruntime(model, _feeds(shape))


@pytest.mark.parametrize("kernel,auto_pad", [(2, "SAME_UPPER"), (1, "SAME_UPPER"), (1, "SAME_LOWER")], ids=str)
def test_conv2d_same_with_stride_on_symbolic_sizes_when_the_begin_pad_is_fixed(kernel, auto_pad):
    """With kernel <= stride the begin pad is the same for every size; only the end pad varies."""
    model = _conv_model("Conv", SYM_2D, (6, 4, kernel, kernel), strides=[2, 2], auto_pad=auto_pad)
    check_with_onnxruntime(model, _feeds(*SHAPES_2D))


@pytest.mark.parametrize("attrs", [dict(), dict(strides=[2], pads=[1, 2]), dict(dilations=[2]),
                                   dict(auto_pad="SAME_LOWER"), dict(auto_pad="VALID", strides=[3])], ids=str)
def test_conv1d(attrs):
    model = _conv_model("Conv", ["N", 4, "L"], (5, 4, 3), **attrs)
    check_with_onnxruntime(model, _feeds((1, 4, 9), (3, 4, 12)))


@pytest.mark.parametrize("group,w_shape", [(4, (4, 1, 3, 3)), (4, (8, 1, 3, 3)), (2, (6, 2, 3, 3)),
                                           (4, (4, 1, 1, 1))], ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_grouped_and_depthwise(group, w_shape, bias):
    model = _conv_model("Conv", SYM_2D, w_shape, bias=bias, group=group, strides=[2, 2], pads=[1, 1, 1, 1])
    graph = check_with_onnxruntime(model, _feeds(*SHAPES_2D))
    ops = graph.histogram()
    if w_shape[1] == 1:
        assert ops.get("DEPTHWISE_CONV2D") == 1 and "CONV2D" not in ops
    else:
        assert ops.get("CONV2D") == group and ops.get("CONCAT") == 1


def test_depthwise_weight_layout_is_kh_kw_c_m():
    w = rand(8, 1, 3, 2, seed=1)
    graph = convert(_conv_model("Conv", SYM_2D, (8, 1, 3, 2), group=4))
    dw = next(o for o in graph.ops if o.op is Op.DEPTHWISE_CONV2D)
    np.testing.assert_array_equal(dw.operands[1].producer.attrs.values, w.reshape(4, 2, 3, 2).transpose(2, 3, 0, 1))


def test_conv_is_nhwc_between_a_transpose_pair_with_ohwi_weights():
    graph = convert(_conv_model("Conv", [1, 4, 7, 9], (6, 4, 3, 2), pads=[1, 1, 1, 1]))
    names = [o.op.name for o in graph.ops if o.op.name not in ("CONST",)]
    assert names == ["TRANSPOSE", "CONV2D", "TRANSPOSE"]
    conv = next(o for o in graph.ops if o.op is Op.CONV2D)
    assert conv.operands[1].type.shape == (6, 3, 2, 4)
    assert conv.attrs.pad == (1, 1, 1, 1) and conv.attrs.acc_type.value == "f32"


def test_runtime_weights():
    model = _conv_model("Conv", SYM_2D, (6, 2, 3, 3), runtime_weight=True, group=2, pads=[1, 1, 1, 1])
    check_with_onnxruntime(model, _feeds(*SHAPES_2D, runtime_weight=(6, 2, 3, 3)))


def test_symbolic_stride_fits_the_input_and_keeps_onnx_output_size():
    graph = convert(_conv_model("Conv", SYM_2D, (6, 4, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1]))
    check(graph)
    assert "DYN_SLICE" in graph.histogram() and "PAD" in graph.histogram()
    n, c, h, w = graph.outputs[0].type.shape
    assert (dim_str(n), c, dim_str(h), dim_str(w)) == ("N", 6, "floordiv(H - 1, 2) + 1", "floordiv(W - 1, 2) + 1")


def test_static_stride_trims_the_end_pad_to_exact_division():
    graph = convert(_conv_model("Conv", [1, 4, 8, 8], (6, 4, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1]))
    conv = next(o for o in graph.ops if o.op is Op.CONV2D)
    assert conv.attrs.pad == (1, 0, 1, 0) and conv.result.type.shape == (1, 4, 4, 6)


# -- ConvTranspose ---------------------------------------------------------------------

CONV_TRANSPOSE = [
    dict(),
    dict(strides=[2, 2]),
    dict(strides=[2, 3], pads=[1, 0, 1, 2]),
    dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 0]),
    dict(strides=[3, 2], pads=[3, 0, 0, 4]),             # pads beyond the kernel: out_pad clamps, SLICE cuts
    dict(strides=[2, 2], auto_pad="SAME_UPPER"),
    dict(strides=[2, 2], auto_pad="SAME_LOWER", output_padding=[1, 1]),
    dict(strides=[1, 2], auto_pad="VALID"),
]


@pytest.mark.parametrize("attrs", CONV_TRANSPOSE, ids=str)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("opset", [11, 21])
def test_conv_transpose_2d(attrs, bias, opset):
    model = _conv_model("ConvTranspose", SYM_2D, (4, 3, 3, 3), bias=bias, opset=opset, **attrs)
    check(check_with_onnxruntime(model, _feeds(*SHAPES_2D)))


@pytest.mark.parametrize("attrs", [dict(strides=[2]), dict(strides=[3], pads=[1, 2], output_padding=[2])],
                         ids=str)
def test_conv_transpose_1d(attrs):
    model = _conv_model("ConvTranspose", ["N", 4, "L"], (4, 2, 4), **attrs)
    check_with_onnxruntime(model, _feeds((1, 4, 5), (2, 4, 8)))


@pytest.mark.parametrize("output_shape", [[15, 18], [16, 19], [14, 17]], ids=str)
def test_conv_transpose_output_shape(output_shape):
    model = _conv_model("ConvTranspose", [1, 4, 7, 9], (4, 3, 3, 3), strides=[2, 2], output_shape=output_shape)
    check_with_onnxruntime(model, _feeds(SHAPES_2D[0]))


def test_conv_transpose_is_transpose_conv2d_with_ohwi_weights():
    w = rand(4, 3, 3, 2, seed=1)
    graph = convert(_conv_model("ConvTranspose", [1, 4, 5, 5], (4, 3, 3, 2), strides=[2, 2], pads=[1, 0, 0, 1],
                                output_padding=[1, 1]))
    tc = next(o for o in graph.ops if o.op is Op.TRANSPOSE_CONV2D)
    np.testing.assert_array_equal(tc.operands[1].producer.attrs.values, w.transpose(1, 2, 3, 0))
    assert tc.attrs.out_pad == (-1, 1, 0, 0) and tc.attrs.stride == (2, 2)


def test_same_with_kernel_below_stride_follows_the_onnx_reference():
    """The spec's SAME output is in*stride; onnxruntime gives one less when kernel < stride."""
    model = _conv_model("ConvTranspose", [1, 4, 5, 7], (4, 3, 2, 2), strides=[3, 3], auto_pad="SAME_LOWER")
    x = rand(1, 4, 5, 7)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert want.shape == (1, 3, 15, 21)
    assert_close(run_graph(convert(model), {"x": x})[0], want, 1e-4, 1e-5)


# -- what TOSA cannot express ------------------------------------------------------------

UNSUPPORTED = [
    ("Conv", SYM_2D, (6, 4, 3, 3), dict(strides=[2, 2], auto_pad="SAME_UPPER"),
     "SAME padding on symbolic input axis 2 .* begin pad is 0 or 1"),
    ("Conv", SYM_2D, (6, 4, 2, 2), dict(strides=[2, 2], auto_pad="SAME_LOWER"),
     "SAME padding on symbolic input axis 2 .* begin pad is 0 or 1"),
    ("Conv", ["N", 4, 5, 5, 5, 5], (6, 4, 3, 3, 3, 3), dict(), "Conv input of rank 6: input X of rank other than 3, 4 or 5"),
    ("ConvTranspose", SYM_2D, (3, 3, 3, 3), dict(group=2), "3 input channels cannot be split into 2 groups"),
    ("ConvTranspose", SYM_2D, (4, 3, 3, 3), dict(strides=[2, 2], output_shape=[15, 17]),
     "output_shape on symbolic input axis 2"),
]


@pytest.mark.parametrize("op,dims,w_shape,attrs,message", UNSUPPORTED, ids=lambda v: str(v)[:40])
def test_unsupported_is_a_conversion_error(op, dims, w_shape, attrs, message):
    with pytest.raises(ConversionError, match=message) as err:
        convert(_conv_model(op, dims, w_shape, **attrs))
    assert err.value.diagnostics[0].code == "E-CONVERT"
    assert err.value.diagnostics[0].location.name == "conv"
