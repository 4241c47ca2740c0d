"""The NN converters end to end: a symbolic model is imported, specialized at
two bindings, emitted as TOSA 1.0, run by the official reference model and
compared with onnxruntime. This is where TOSA's own rules are checked that
the numpy interpreter does not enforce: exact division of the window sizes
by the stride (the fitted pads and DYN_SLICE cuts), pads smaller than pool
kernels, RESIZE's scale/offset/border limits, CONV3D, and the interpolation
matrices of cubic Resize.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.tosa_tools import run_reference_model
from tosaconv import api

from .harness import F32, assert_close, const, convert, info, make_model, rand, run_onnxruntime

SYM = ["N", 4, "H", "W"]
SHAPES = [(1, 4, 7, 9), (2, 4, 8, 6)]
SYM_3D = ["N", 4, "D", "H", "W"]
SHAPES_BY_RANK = {3: [(1, 4, 11), (2, 4, 16)], 4: SHAPES, 5: [(1, 4, 5, 6, 7), (2, 4, 6, 5, 4)]}


def _weights(*shape):
    return [const("W", rand(*shape, seed=1)), const("B", rand(shape[0], seed=2))]


def _resize_inputs(scales):
    return [const("roi", np.zeros((0,), np.float32)), const("scales", np.array(scales, np.float32))]


MODELS = {
    "conv_stride2_pads": ("Conv", SYM, _weights(6, 4, 3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1])),
    "conv_depthwise_m2": ("Conv", SYM, _weights(8, 1, 3, 3), dict(group=4, strides=[2, 1], pads=[1, 1, 1, 1])),
    "conv_grouped_same": ("Conv", SYM, _weights(6, 2, 3, 3), dict(group=2, auto_pad="SAME_UPPER")),
    "conv_1d_stride3": ("Conv", ["N", 4, "L"], _weights(5, 4, 3), dict(strides=[3], pads=[0, 2])),
    "conv_transpose": ("ConvTranspose", SYM, [const("W", rand(4, 3, 3, 3, seed=1))],
                       dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 0])),
    "max_pool_ceil": ("MaxPool", SYM, [], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)),
    "avg_pool_exclude": ("AveragePool", SYM, [], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    "avg_pool_include": ("AveragePool", SYM, [], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                                                     count_include_pad=1)),
    "global_avg_pool": ("GlobalAveragePool", SYM, [], {}),
    "resize_linear_x2x3": ("Resize", SYM, _resize_inputs([1, 1, 2, 3]), dict(mode="linear")),
    "resize_nearest_floor": ("Resize", SYM, _resize_inputs([1, 1, 2, 2]),
                             dict(mode="nearest", nearest_mode="floor", coordinate_transformation_mode="asymmetric")),
    # interpolation matrices (INTERP_MATRIX on symbolic H, W decays to a CONST) and MATMUL
    "resize_cubic_x2": ("Resize", SYM, _resize_inputs([1, 1, 2, 2]), dict(mode="cubic")),
    "resize_cubic_align_corners": ("Resize", SYM, _resize_inputs([1, 1, 2, 3]),
                                   dict(mode="cubic", coordinate_transformation_mode="align_corners")),
    "conv3d_group_stride": ("Conv", SYM_3D, _weights(6, 2, 3, 3, 3), dict(group=2, strides=[2, 1, 2],
                                                                           pads=[1, 1, 1, 1, 0, 1])),
    "conv_transpose_3d": ("ConvTranspose", SYM_3D, [const("W", rand(4, 3, 3, 2, 3, seed=1))],
                          dict(strides=[2, 1, 2], pads=[1, 0, 1, 1, 0, 1], output_padding=[1, 0, 0])),
    "conv_transpose_group_dilation": ("ConvTranspose", SYM, [const("W", rand(4, 3, 3, 3, seed=1))],
                                      dict(group=2, dilations=[2, 2], strides=[2, 2])),
    "max_pool_3d_dilated": ("MaxPool", SYM_3D, [], dict(kernel_shape=[2, 2, 2], dilations=[1, 2, 1],
                                                        strides=[1, 2, 1])),
    "avg_pool_3d_include": ("AveragePool", SYM_3D, [], dict(kernel_shape=[3, 3, 3], strides=[2, 1, 2],
                                                            pads=[1, 1, 1, 1, 1, 1], count_include_pad=1)),
    "lp_pool_3d": ("LpPool", SYM_3D, [], dict(kernel_shape=[2, 2, 2], p=3)),
}


def _one_op(op, dims, inits, attrs):
    node = helper.make_node(op, ["x"] + [t.name for t in inits], ["y"], **attrs)
    return make_model([node], [info("x", F32, dims)], [info("y", F32, None)], inits)


def _check(model, feeds, tmp_path):
    graph = convert(model)
    for i, f in enumerate(feeds):
        bindings = api.solve_bindings(graph, {k: v.shape for k, v in f.items()})
        tosa = api.emit(api.specialize(graph, bindings))
        got = run_reference_model(tosa, f, graph.output_names, tmp_path / str(i))[graph.output_names[0]]
        assert_close(got, run_onnxruntime(model, f)[0], 1e-4, 1e-4, f"binding {bindings}")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_reference_model_agrees_with_onnxruntime(name, tmp_path):
    op, dims, inits, attrs = MODELS[name]
    shapes = SHAPES_BY_RANK[len(dims)]
    _check(_one_op(op, dims, inits, attrs), [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)], tmp_path)


@pytest.mark.parametrize("a_dims,b_dims,a_shapes,b_shapes", [
    (["B", 1, "S", 8], ["H", 8, "T"], [(2, 1, 3, 8), (1, 1, 5, 8)], [(4, 8, 5), (3, 8, 2)]),
    ([8], ["B", 8, "T"], [(8,), (8,)], [(2, 8, 3), (1, 8, 4)]),
], ids=["broadcast_batch", "vector_by_batch"])
def test_matmul_reference_model(a_dims, b_dims, a_shapes, b_shapes, tmp_path):
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    model = make_model([node], [info("a", F32, a_dims), info("b", F32, b_dims)], [info("y", F32, None)])
    feeds = [{"a": rand(*sa, seed=1), "b": rand(*sb, seed=2)} for sa, sb in zip(a_shapes, b_shapes)]
    _check(model, feeds, tmp_path)
