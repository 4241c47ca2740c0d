"""The seed's helper and data-dependent ops: Index arithmetic, dims, expand/collapse, DYN_SLICE, DYN_TILE, IOTA."""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import KernelError, evaluate
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

from .helpers import LOC, run_op


@pytest.mark.parametrize("op,a,b,want", [
    (Op.INDEX_ADD, 7, -2, 5), (Op.INDEX_SUB, 7, 9, -2), (Op.INDEX_MUL, -3, 4, -12),
    (Op.INDEX_FLOORDIV, -7, 2, -4), (Op.INDEX_FLOORDIV, 7, 2, 3), (Op.INDEX_MOD, -7, 2, 1),
    (Op.INDEX_MOD, 7, 3, 1), (Op.INDEX_MIN, 3, -1, -1), (Op.INDEX_MAX, 3, -1, 3),
])
def test_index_arithmetic_has_floor_semantics(op, a, b, want):
    assert int(run_op(op, [a, b])) == want


def test_index_floordiv_by_a_data_dependent_zero():
    graph = Graph()
    b = Builder(graph, LOC)
    t = graph.add_input("t", TensorType(DType.INT32, (1,)))
    quotient = b.emit(Op.INDEX_FLOORDIV, b.index(1), b.extract_dim(t, 0))
    graph.set_outputs([quotient], ["q"])
    assert int(evaluate(graph, {"t": np.array([-1], np.int32)})["q"]) == -1
    with pytest.raises(KernelError, match="INDEX_FLOORDIV by zero"):
        evaluate(graph, {"t": np.array([0], np.int32)})


def test_index_const_and_get_dim():
    assert int(run_op(Op.INDEX_CONST, [], A.IndexConstAttrs(42))) == 42
    assert int(run_op(Op.GET_DIM, [np.zeros((2, 5, 3), np.float32)], A.DimIndexAttrs(1))) == 5


def test_dims_to_tensor():
    got = run_op(Op.DIMS_TO_TENSOR, [2, 3, 4], A.DimsToTensorAttrs(DType.INT32))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [2, 3, 4])


def test_expand_and_collapse_dims():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    expanded = run_op(Op.EXPAND_DIMS, [x], A.IndicesAttrs((0, 2)))
    assert expanded.shape == (1, 3, 1, 4)
    collapsed = run_op(Op.COLLAPSE_DIMS, [expanded], A.IndicesAttrs((0, 2)))
    np.testing.assert_array_equal(collapsed, x)


def test_dyn_slice_dyn_tile_and_iota():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(run_op(Op.DYN_SLICE, [x, 1, 2, 2, 1]), [[6], [10]])
    np.testing.assert_array_equal(run_op(Op.DYN_TILE, [x[:1, :2], 2, 1]), [[0, 1], [0, 1]])
    got = run_op(Op.IOTA, [5], A.IotaAttrs(DType.INT32))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [0, 1, 2, 3, 4])


def test_extract_dim_reads_data_and_binds_its_symbol():
    graph = Graph()
    b = Builder(graph, LOC)
    t = graph.add_input("t", TensorType(DType.INT32, (2,)))
    length = b.extract_dim(t, 1)
    out = b.emit(Op.IOTA, length, attrs=A.IotaAttrs(DType.INT32))
    graph.set_outputs([out], ["range"])
    np.testing.assert_array_equal(evaluate(graph, {"t": np.array([9, 3], np.int32)})["range"], [0, 1, 2])
    np.testing.assert_array_equal(evaluate(graph, {"t": np.array([9, 1], np.int32)})["range"], [0])
