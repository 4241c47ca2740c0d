"""Data layout, scatter/gather, reduction and CONST kernels on small hand-checked tensors."""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import KernelError, evaluate
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op

from .helpers import LOC, run_op

M = np.arange(6, dtype=np.int32).reshape(2, 3)       # [[0, 1, 2], [3, 4, 5]]


def test_concat():
    got = run_op(Op.CONCAT, [M, np.full((2, 1), 9, np.int32)], A.AxisAttrs(1))
    np.testing.assert_array_equal(got, [[0, 1, 2, 9], [3, 4, 5, 9]])


def test_pad_with_a_constant():
    got = run_op(Op.PAD, [M], A.PadAttrs((1, 0, 0, 2), -1.0))
    np.testing.assert_array_equal(got, [[-1, -1, -1, -1, -1], [0, 1, 2, -1, -1], [3, 4, 5, -1, -1]])


def test_reshape_reverse_transpose_identity():
    np.testing.assert_array_equal(run_op(Op.RESHAPE, [M], A.ReshapeAttrs((3, 2))), [[0, 1], [2, 3], [4, 5]])
    np.testing.assert_array_equal(run_op(Op.REVERSE, [M], A.AxisAttrs(1)), [[2, 1, 0], [5, 4, 3]])
    np.testing.assert_array_equal(run_op(Op.TRANSPOSE, [M], A.TransposeAttrs((1, 0))), [[0, 3], [1, 4], [2, 5]])
    np.testing.assert_array_equal(run_op(Op.IDENTITY, [M]), M)


def test_slice_and_its_bounds_check():
    np.testing.assert_array_equal(run_op(Op.SLICE, [M], A.SliceAttrs((1, 1), (1, 2))), [[4, 5]])
    with pytest.raises(KernelError, match="out of bounds for axis 1"):
        run_op(Op.SLICE, [M], A.SliceAttrs((0, 2), (1, 2)))


def test_tile():
    got = run_op(Op.TILE, [M[:, :2]], A.TileAttrs((2, 2)))
    np.testing.assert_array_equal(got, [[0, 1, 0, 1], [3, 4, 3, 4], [0, 1, 0, 1], [3, 4, 3, 4]])


def test_gather_rows_per_batch():
    values = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    indices = np.array([[2, 0], [1, 1]], dtype=np.int32)
    got = run_op(Op.GATHER, [values, indices])
    np.testing.assert_array_equal(got, [[[4, 5], [0, 1]], [[8, 9], [8, 9]]])


def test_gather_index_out_of_range():
    with pytest.raises(KernelError, match=r"indices must be in \[0, 3\)"):
        run_op(Op.GATHER, [np.zeros((1, 3, 1), np.float32), np.array([[3]], np.int32)])


def test_scatter_overwrites_rows_and_keeps_the_rest():
    values_in = np.zeros((1, 4, 2), np.int32)
    update = np.array([[[1, 2], [3, 4]]], np.int32)
    got = run_op(Op.SCATTER, [values_in, np.array([[3, 1]], np.int32), update])
    np.testing.assert_array_equal(got, [[[0, 0], [3, 4], [0, 0], [1, 2]]])
    assert not values_in.any()                                     # the operand is not modified


def test_scatter_refuses_duplicate_indices():
    with pytest.raises(KernelError, match="repeat"):
        run_op(Op.SCATTER, [np.zeros((1, 4, 1), np.int32), np.array([[2, 2]], np.int32),
                            np.zeros((1, 2, 1), np.int32)])


def test_reductions_keep_the_axis():
    np.testing.assert_array_equal(run_op(Op.REDUCE_SUM, [M], A.AxisAttrs(1)), [[3], [12]])
    np.testing.assert_array_equal(run_op(Op.REDUCE_PRODUCT, [M.astype(np.float32) + 1], A.AxisAttrs(0)),
                                  [[4, 10, 18]])
    np.testing.assert_array_equal(run_op(Op.REDUCE_MAX, [M], A.AxisNanAttrs(0)), [[3, 4, 5]])
    np.testing.assert_array_equal(run_op(Op.REDUCE_MIN, [M], A.AxisNanAttrs(1)), [[0], [3]])
    b = np.array([[True, False], [True, True]])
    np.testing.assert_array_equal(run_op(Op.REDUCE_ALL, [b], A.AxisAttrs(1)), [[False], [True]])
    np.testing.assert_array_equal(run_op(Op.REDUCE_ANY, [b], A.AxisAttrs(0)), [[True, True]])


def test_reduce_sum_int32_wraps():
    x = np.array([2**31 - 1, 1], np.int32)
    np.testing.assert_array_equal(run_op(Op.REDUCE_SUM, [x], A.AxisAttrs(0)), [-2**31])


@pytest.mark.parametrize("mode,want", [("PROPAGATE", [np.nan, np.nan]), ("IGNORE", [2.0, np.nan])])
def test_reduce_max_nan_modes(mode, want):
    x = np.array([[np.nan, 2.0, 1.0], [np.nan, np.nan, np.nan]], np.float32)
    np.testing.assert_array_equal(run_op(Op.REDUCE_MAX, [x], A.AxisNanAttrs(1, mode)).ravel(), want)


def _const_graph(array):
    graph = Graph()
    out = Builder(graph, LOC).const(array)
    graph.set_outputs([out], ["c"])
    return graph


def test_const_returns_its_array_without_copying():
    weights = np.arange(4, dtype=np.float32)
    assert evaluate(_const_graph(weights), {})["c"] is weights


def test_const_int64_values_narrow_to_int32_when_they_fit():
    got = evaluate(_const_graph(np.array([1, -2], np.int64)), {})["c"]
    assert got.dtype == np.int32
    with pytest.raises(KernelError, match="CONST values"):
        evaluate(_const_graph(np.array([2**40], np.int64)), {})
