"""Pools TOSA's 2-D pools cannot express, pooled one axis at a time, against onnxruntime: 3-D
MaxPool / AveragePool / LpPool, dilations (with pads, strides, ceil_mode, count_include_pad),
LpPool with p = 1, 2, 3, 4, and MaxPool's Indices output (row- and column-major
storage_order, ties), on symbolic dims run at two shapes and through specialization. Also the
IR (no 2-D pool op; SLICE taps), and what is refused.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv import api
from tosaconv.diagnostics import ConversionError
from tosaconv.ir.verifier import check

from .harness import F32, I64, assert_close, check_with_onnxruntime, convert, info, one_node, rand, run_graph

SYM3, SHAPES3 = ["N", 3, "D", "H", "W"], [(1, 3, 6, 7, 9), (2, 3, 9, 5, 6)]
SYM2, SHAPES2 = ["N", 3, "H", "W"], [(1, 3, 7, 9), (2, 3, 10, 6)]
SYM1, SHAPES1 = ["N", 3, "L"], [(1, 3, 11), (2, 3, 8)]


def _pool(op, dims, indices=False, opset=19, **attrs):
    outputs = [info("y", F32, None)] + ([info("i", I64, None)] if indices else [])
    return one_node(op, [info("x", F32, dims)], outputs, opset=opset, **attrs)


def _feeds(shapes):
    return [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)]


def _check(model, shapes):
    """onnxruntime at every shape, then the specialized program agrees with the symbolic one."""
    graph = check_with_onnxruntime(model, _feeds(shapes))
    check(graph)
    for feeds in _feeds(shapes):
        static = api.specialize(graph, api.solve_bindings(graph, {"x": feeds["x"].shape}))
        for got, want in zip(run_graph(static, feeds), run_graph(graph, feeds)):
            assert_close(got, want, 1e-6, 1e-6)
    return graph


POOL_3D = [
    dict(kernel_shape=[2, 3, 2]),
    dict(kernel_shape=[3, 3, 3], strides=[2, 1, 2], pads=[1, 1, 0, 1, 1, 0]),
    dict(kernel_shape=[2, 2, 2], auto_pad="SAME_UPPER"),
    dict(kernel_shape=[3, 2, 2], strides=[2, 2, 2], ceil_mode=1),
    dict(kernel_shape=[2, 2, 3], dilations=[2, 1, 2], strides=[1, 2, 1]),
]
DILATED = [
    (SYM2, SHAPES2, dict(kernel_shape=[2, 2], dilations=[2, 2])),
    (SYM2, SHAPES2, dict(kernel_shape=[3, 2], dilations=[2, 3], strides=[2, 1], pads=[1, 1, 2, 0])),
    (SYM2, SHAPES2, dict(kernel_shape=[3, 3], dilations=[2, 2], strides=[3, 2], ceil_mode=1)),
    (SYM1, SHAPES1, dict(kernel_shape=[3], dilations=[2], strides=[2], pads=[2, 1])),
]


@pytest.mark.parametrize("attrs", POOL_3D, ids=str)
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "LpPool"])
def test_3d_pools(op, attrs):
    graph = _check(_pool(op, SYM3, **attrs), SHAPES3)
    assert not {"MAX_POOL2D", "AVG_POOL2D"} & set(graph.histogram())


@pytest.mark.parametrize("dims,shapes,attrs", DILATED, ids=lambda v: str(v)[:60])
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "LpPool"])
def test_dilated_pools(op, dims, shapes, attrs):
    _check(_pool(op, dims, **attrs), shapes)


@pytest.mark.parametrize("dims,shapes,attrs", [
    (SYM3, SHAPES3, dict(kernel_shape=[3, 3, 3], pads=[1, 1, 1, 1, 1, 1])),
    (SYM2, SHAPES2, dict(kernel_shape=[3, 3], dilations=[2, 1], pads=[2, 1, 1, 2], strides=[2, 2])),
    ([1, 3, 10, 7], [(1, 3, 10, 7)], dict(kernel_shape=[3, 3], dilations=[2, 1], pads=[2, 1, 1, 2], strides=[2, 2],
                                           ceil_mode=1)),
], ids=lambda v: str(v)[:60])
def test_average_counting_pads(dims, shapes, attrs):
    _check(_pool("AveragePool", dims, count_include_pad=1, **attrs), shapes)


@pytest.mark.parametrize("p", [1, 2, 3, 4])
def test_lp_pool_orders(p):
    _check(_pool("LpPool", SYM2, kernel_shape=[2, 3], pads=[1, 0, 1, 1], p=p), SHAPES2)


def test_lp_pool_opset_11():
    _check(_pool("LpPool", SYM2, opset=11, kernel_shape=[3, 3], strides=[2, 2], p=3), SHAPES2)


INDICES = [
    (SYM2, SHAPES2, dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    (SYM2, SHAPES2, dict(kernel_shape=[3, 3], strides=[2, 2], storage_order=1)),
    (SYM3, SHAPES3, dict(kernel_shape=[2, 2, 2], dilations=[1, 2, 1])),
    (SYM3, SHAPES3, dict(kernel_shape=[2, 3, 2], storage_order=1)),
    (SYM1, SHAPES1, dict(kernel_shape=[3], strides=[2], ceil_mode=1)),
]


@pytest.mark.parametrize("dims,shapes,attrs", INDICES, ids=lambda v: str(v)[:60])
def test_max_pool_indices(dims, shapes, attrs):
    _check(_pool("MaxPool", dims, indices=True, **attrs), shapes)


def test_max_pool_indices_keep_the_first_maximum_in_row_major_order():
    model = _pool("MaxPool", SYM2, indices=True, kernel_shape=[2, 2], strides=[2, 2])
    x = np.zeros((2, 3, 4, 6), np.float32)     # every window is all ties
    x[1, 2, 3, 5] = 1.0
    y, i = run_graph(convert(model), {"x": x})
    want = (np.arange(6)[:, None, None] * 24 + np.array([[0, 2, 4], [12, 14, 16]])).reshape(2, 3, 2, 3)
    want[1, 2, 1, 2] = 1 * 72 + 2 * 24 + 3 * 6 + 5
    np.testing.assert_array_equal(i, want)
    assert y.max() == 1.0


def test_pools_of_the_separable_form_have_no_2d_pool_op():
    ops = convert(_pool("MaxPool", [1, 3, 7, 9], kernel_shape=[2, 2], dilations=[2, 2])).histogram()
    assert "MAX_POOL2D" not in ops and ops["MAXIMUM"] == 2 and ops["SLICE"] == 4


# -- refused ----------------------------------------------------------------------------------

REFUSED = [
    ("MaxPool", dict(kernel_shape=[2, 2], dilations=[2, 2], auto_pad="SAME_UPPER"), "ill-defined"),
    ("LpPool", dict(kernel_shape=[2, 2], dilations=[2, 2], auto_pad="SAME_LOWER"), "ill-defined"),
    ("AveragePool", dict(kernel_shape=[3, 3], dilations=[2, 1], strides=[2, 2], pads=[2, 1, 1, 2], ceil_mode=1),
     "last window"),
    ("LpPool", dict(kernel_shape=[2, 2], p=0), "p=0 is not supported"),
]


@pytest.mark.parametrize("op,attrs,message", REFUSED, ids=lambda v: str(v)[:50])
def test_refused_is_a_conversion_error(op, attrs, message):
    with pytest.raises(ConversionError, match=message) as err:
        convert(_pool(op, SYM2, **attrs))
    assert err.value.diagnostics[0].code == "E-CONVERT"
