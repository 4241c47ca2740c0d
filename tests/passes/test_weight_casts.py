"""Constant folding keeps fp16 and int8 weights narrow: a widening CAST of a weight CONST to float stays.

The rule (tosaconv.lowering.weight_casts): a CAST of a CONST from fp16, int8 or
int16 to a float type stays a run-time CAST when folding it would add at least
MIN_SAVED_BYTES to the file; a TRANSPOSE, RESHAPE, SLICE, REVERSE or CONCAT of
such weights folds on the narrow constant with the CAST moved after it;
integer results and small weights fold as before; ``fp32_weights()`` (the
command line's ``--fp32-weights``) folds everything. The truth for values is
numpy on the source arrays.
"""
from __future__ import annotations

import numpy as np

from tosaconv.interpreter import evaluate
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType
from tosaconv.lowering.weight_casts import MIN_SAVED_BYTES, fp32_weights
from tosaconv.passes.constant_fold import fold_constants
from tosaconv.passes.dce import eliminate_dead_code

RNG = np.random.default_rng(7)
W16 = RNG.standard_normal((16, 8)).astype(np.float16)
W8 = RNG.integers(-128, 128, (8, 16)).astype(np.int8)


def _program(weight: np.ndarray, *layout) -> tuple:
    """y = x + layout(CAST<f32>(weight)) with x of the result's shape; returns (graph, x shape)."""
    g = Graph()
    b = Builder(g)
    w = b.emit(Op.CAST, b.const(weight), attrs=A.CastAttrs(DType.FP32))
    for op, attrs in layout:
        w = b.emit(op, w, attrs=attrs)
    shape = tuple(w.type.shape)
    x = g.add_input("x", TensorType(DType.FP32, shape))
    g.set_outputs([b.emit(Op.ADD, x, w)], ["y"])
    return g, shape


def _folded(g) -> Graph:
    fold_constants(g)
    eliminate_dead_code(g)
    return g


def _ops(g) -> list:
    return [op.op.name for op in g.ops]


def _consts(g) -> list:
    return [op.attrs.values for op in g.ops if op.op is Op.CONST]


def _run(g, shape) -> np.ndarray:
    x = np.zeros(shape, np.float32)
    return np.asarray(evaluate(g, {"x": x})["y"])


def test_an_fp16_weight_stays_fp16_behind_a_cast():
    g, shape = _program(W16)
    _folded(g)
    assert _ops(g) == ["CONST", "CAST", "ADD"]
    (c,) = _consts(g)
    assert c.dtype == np.float16 and np.array_equal(c, W16)
    np.testing.assert_array_equal(_run(g, shape), W16.astype(np.float32))


def test_a_transpose_of_the_weight_folds_on_the_fp16_constant():
    g, shape = _program(W16, (Op.TRANSPOSE, A.TransposeAttrs((1, 0))), (Op.RESHAPE, A.ReshapeAttrs((1, 8, 16))))
    _folded(g)
    assert _ops(g) == ["CONST", "CAST", "ADD"]
    (c,) = _consts(g)
    assert c.dtype == np.float16 and np.array_equal(c, W16.T.reshape(1, 8, 16))
    np.testing.assert_array_equal(_run(g, shape), W16.T.reshape(1, 8, 16).astype(np.float32))


def test_an_int8_weight_stays_int8_behind_a_cast():
    g, shape = _program(W8, (Op.SLICE, A.SliceAttrs((0, 4), (8, 8))))
    _folded(g)
    assert _ops(g) == ["CONST", "CAST", "ADD"]
    (c,) = _consts(g)
    assert c.dtype == np.int8 and np.array_equal(c, W8[:, 4:12])
    np.testing.assert_array_equal(_run(g, shape), W8[:, 4:12].astype(np.float32))


def test_fp32_weights_folds_the_cast_as_before():
    with fp32_weights():
        g, shape = _program(W16, (Op.TRANSPOSE, A.TransposeAttrs((1, 0))))
        _folded(g)
    assert _ops(g) == ["CONST", "ADD"]
    (c,) = _consts(g)
    assert c.dtype == np.float32 and np.array_equal(c, W16.T.astype(np.float32))


def test_a_small_weight_folds_because_its_cast_costs_more_than_it_saves():
    small = W16.reshape(-1)[:MIN_SAVED_BYTES // 2 - 1]          # saves 2 bytes an element: just under the bar
    g, _ = _program(small)
    _folded(g)
    assert _ops(g) == ["CONST", "ADD"] and _consts(g)[0].dtype == np.float32
    g, _ = _program(W16.reshape(-1)[:MIN_SAVED_BYTES // 2])      # exactly at the bar: kept
    _folded(g)
    assert _ops(g) == ["CONST", "CAST", "ADD"]


def test_integer_casts_of_constants_fold_as_before():
    g = Graph()
    b = Builder(g)
    w = b.emit(Op.CAST, b.const(W8), attrs=A.CastAttrs(DType.INT32))
    x = g.add_input("x", TensorType(DType.INT32, (8, 16)))
    g.set_outputs([b.emit(Op.ADD, x, w)], ["y"])
    _folded(g)
    assert _ops(g) == ["CONST", "ADD"] and _consts(g)[0].dtype == np.int32
