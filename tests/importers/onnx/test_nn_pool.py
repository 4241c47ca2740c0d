"""ONNX MaxPool, AveragePool and GlobalAveragePool against onnxruntime: 1-D
and 2-D, pads, strides, ceil_mode, count_include_pad and every auto_pad, on
symbolic input dims run at two shapes where the op allows it (static shapes
where the answer depends on the size). Also the IR they become (the pool in
NHWC between a TRANSPOSE pair; count_include_pad=1 as a zero PAD first; a
symbolic GlobalAveragePool as REDUCE_SUM times 1/(H*W) computed from the
bound sizes) and the conversion errors for what TOSA cannot express. 3-D
pools, dilations, MaxPool's Indices and LpPool are in test_nn_pool_separable.py.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from tosaconv.diagnostics import ConversionError
from tosaconv.ir.ops import Op
from tosaconv.ir.verifier import check

from .harness import F32, check_with_onnxruntime, convert, info, one_node, rand

SHAPES = [(1, 3, 7, 9), (2, 3, 10, 6)]
I8 = TensorProto.INT8
SYM = ["N", 3, "H", "W"]


def _pool(op, dims, opset=17, **attrs):
    return one_node(op, [info("x", F32, dims)], [info("y", F32, None)], opset=opset, **attrs)


def _feeds(*shapes):
    return [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)]


COMMON = [
    dict(kernel_shape=[2, 2]),
    dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 2], strides=[2, 2]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 1, 0]),
    dict(kernel_shape=[3, 3], strides=[1, 2], pads=[0, 0, 2, 0]),
    dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER"),
    dict(kernel_shape=[2, 2], auto_pad="SAME_LOWER"),
    dict(kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER"),
    dict(kernel_shape=[3, 3], strides=[2, 1], auto_pad="VALID"),
    dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
]


@pytest.mark.parametrize("attrs", COMMON, ids=str)
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("opset", [11, 19])
def test_pool_on_symbolic_sizes(op, attrs, opset):
    check(check_with_onnxruntime(_pool(op, SYM, opset, **attrs), _feeds(*SHAPES)))


MAX_ONLY = [
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
    dict(kernel_shape=[3, 3], strides=[3, 3], pads=[2, 2, 2, 2]),
]


@pytest.mark.parametrize("attrs", MAX_ONLY, ids=str)
def test_max_pool_with_end_pads_on_symbolic_sizes(attrs):
    """The end pad is appended with an explicit PAD of -inf, then DYN_SLICE cuts to the windows."""
    graph = check_with_onnxruntime(_pool("MaxPool", SYM, **attrs), _feeds(*SHAPES))
    pad = next(o for o in graph.ops if o.op is Op.PAD)
    assert pad.attrs.pad_const == float("-inf") and "DYN_SLICE" in graph.histogram()


STATIC = [
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
    dict(kernel_shape=[3, 3], strides=[3, 3], pads=[1, 2, 2, 1], ceil_mode=1),
    dict(kernel_shape=[2, 3], strides=[3, 2], ceil_mode=1),
    dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
    dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_LOWER"),
]


@pytest.mark.parametrize("attrs", STATIC, ids=str)
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_pool_on_static_sizes(op, attrs, count_include_pad):
    extra = dict(count_include_pad=count_include_pad) if op == "AveragePool" else {}
    for shape in SHAPES:
        check_with_onnxruntime(_pool(op, list(shape), **attrs, **extra), _feeds(shape))


@pytest.mark.parametrize("attrs", [dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                                   dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
                                   dict(kernel_shape=[2, 2], strides=[1, 1], pads=[1, 0, 1, 0])], ids=str)
def test_average_pool_counting_pads_on_symbolic_sizes(attrs):
    graph = check_with_onnxruntime(_pool("AveragePool", SYM, count_include_pad=1, **attrs), _feeds(*SHAPES))
    pad = next(o for o in graph.ops if o.op is Op.PAD)
    avg = next(o for o in graph.ops if o.op is Op.AVG_POOL2D)
    assert pad.attrs.pad_const == 0.0 and avg.attrs.pad == (0, 0, 0, 0)


@pytest.mark.parametrize("attrs", [dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
                                   dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
                                   dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
                                        count_include_pad=1),
                                   dict(kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER")], ids=str)
def test_average_pool_with_symbolic_end_pad_divides_by_a_pool_of_ones(attrs):
    """An explicit end PAD would be counted by AVG_POOL2D; pooling ones the same way cancels it."""
    graph = check_with_onnxruntime(_pool("AveragePool", SYM, **attrs), _feeds(*SHAPES))
    ops = graph.histogram()
    assert ops["AVG_POOL2D"] == 2 and ops["DYN_TILE"] == 1 and ops["RECIPROCAL"] == 1


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("attrs", [dict(kernel_shape=[3]), dict(kernel_shape=[3], strides=[2], pads=[1, 0]),
                                   dict(kernel_shape=[2], strides=[2], ceil_mode=1),
                                   dict(kernel_shape=[3], auto_pad="SAME_UPPER")], ids=str)
def test_pool_1d(op, attrs):
    check_with_onnxruntime(_pool(op, ["N", 3, "L"], **attrs), _feeds((1, 3, 9), (2, 3, 12)))


def test_int8_max_pool_pads_with_the_lowest_int8():
    model = one_node("MaxPool", [info("x", I8, SYM)], [info("y", I8, None)], opset=12, kernel_shape=[3, 3],
                     strides=[2, 2], pads=[1, 1, 1, 1], storage_order=1)
    feeds = [{"x": np.random.default_rng(i).integers(-128, 128, s).astype(np.int8)} for i, s in enumerate(SHAPES)]
    graph = check_with_onnxruntime(model, feeds)
    assert next(o for o in graph.ops if o.op is Op.PAD).attrs.pad_const == -128.0


def test_max_pool_is_nhwc_between_a_transpose_pair():
    graph = convert(_pool("MaxPool", [1, 3, 8, 8], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    assert [o.op.name for o in graph.ops] == ["TRANSPOSE", "MAX_POOL2D", "TRANSPOSE"]
    assert graph.ops[1].attrs.pad == (1, 0, 1, 0)   # the end pads no window reaches are trimmed


# -- GlobalAveragePool ----------------------------------------------------------------------

@pytest.mark.parametrize("dims,shapes", [(SYM, SHAPES), (["N", 3, 7, 9], [(1, 3, 7, 9), (2, 3, 7, 9)]),
                                         (["N", 3, "L"], [(1, 3, 5), (2, 3, 8)]),
                                         (["N", 3, "D", "H", "W"], [(1, 3, 2, 3, 4), (2, 3, 3, 2, 2)])],
                         ids=["symbolic", "static", "1d", "3d"])
def test_global_average_pool(dims, shapes):
    check(check_with_onnxruntime(_pool("GlobalAveragePool", dims), _feeds(*shapes)))


def test_global_average_pool_static_is_one_avg_pool():
    graph = convert(_pool("GlobalAveragePool", ["N", 3, 7, 9]))
    pool = next(o for o in graph.ops if o.op is Op.AVG_POOL2D)
    assert pool.attrs.kernel == (7, 9) and pool.attrs.stride == (1, 1)


def test_global_average_pool_symbolic_divides_by_the_bound_size():
    graph = convert(_pool("GlobalAveragePool", SYM))
    ops = graph.histogram()
    assert ops["REDUCE_SUM"] == 2 and ops["DIMS_TO_TENSOR"] == 1 and ops["RECIPROCAL"] == 1
    count = next(o for o in graph.ops if o.op is Op.DIMS_TO_TENSOR)
    assert str(count.operands[0].type) == "index<H*W>"


# -- what TOSA cannot express ---------------------------------------------------------------

UNSUPPORTED = [
    ("MaxPool", SYM, dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"), "begin pad is 0 or 1"),
    ("MaxPool", [1, 3, 8, 8], dict(kernel_shape=[2, 2], pads=[2, 2, 2, 2]), "must be smaller than the kernel"),
    ("MaxPool", SYM, dict(kernel_shape=[2, 2], strides=[3, 3], ceil_mode=1), "last window"),
    ("AveragePool", SYM, dict(kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER", count_include_pad=1),
     "counted end pad depends on the size"),
]


@pytest.mark.parametrize("op,dims,attrs,message", UNSUPPORTED, ids=lambda v: str(v)[:40])
def test_unsupported_is_a_conversion_error(op, dims, attrs, message):
    with pytest.raises(ConversionError, match=message) as err:
        convert(_pool(op, dims, **attrs))
    assert err.value.diagnostics[0].code == "E-CONVERT"
