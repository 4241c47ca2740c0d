"""One-op static graphs for the emitter tests, built with the IR builder.

Each case is a function returning a :class:`Case`: the graph, random inputs
(seeded, so every run is the same), and, where the result is easy to state in
numpy, the expected outputs. Values are chosen to avoid rounding ties and
saturation unless a case is about them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

F32, I8, I32, BOOL = DType.FP32, DType.INT8, DType.INT32, DType.BOOL
CASES: dict = {}


@dataclass
class Case:
    graph: Graph
    inputs: dict
    expected: Optional[dict] = None
    atol: float = 1e-5
    shapes: dict = field(default_factory=dict)  # output name -> shape, filled in by finish()


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _rng():
    return np.random.default_rng(1234)


def _graph(**inputs):
    """A graph with the given inputs (name -> (dtype, shape)) and its builder."""
    g = Graph()
    values = [g.add_input(n, TensorType(dt, tuple(shape))) for n, (dt, shape) in inputs.items()]
    return g, Builder(g, Location("Test", "op", "test")), values


def _finish(g, b, y, inputs, expected=None, atol=1e-5):
    g.set_outputs([y], ["y"])
    exp = None if expected is None else {"y": expected}
    return Case(g, inputs, exp, atol, {"y": y.type.shape})


def _one(op, in_specs: dict, inputs: dict, attrs=None, expected=None, result_type=None, atol=1e-5):
    g, b, vals = _graph(**in_specs)
    with b.at(Location(op.name.title(), op.name.lower() + "_node", "onnx")):
        y = b.emit(op, *vals, attrs=attrs, result_type=result_type)
    return _finish(g, b, y, inputs, expected, atol)


def _rand(shape, lo=-2.0, hi=2.0):
    return _rng().uniform(lo, hi, size=shape).astype(np.float32)


@case
def add():
    x, z = _rand((2, 3)), _rand((1, 3)) + 1
    return _one(Op.ADD, {"x": (F32, (2, 3)), "z": (F32, (1, 3))}, {"x": x, "z": z}, expected=x + z)


@case
def mul_fp32():
    x = _rand((2, 3))
    return _one(Op.MUL, {"x": (F32, (2, 3)), "z": (F32, (2, 3))}, {"x": x, "z": x + 1},
                A.MulAttrs(0), expected=x * (x + 1))


@case
def mul_int32_shift():
    rng = _rng()
    x, z = rng.integers(-1000, 1000, (2, 4)), rng.integers(-1000, 1000, (2, 4))
    expected = ((x.astype(np.int64) * z + (1 << 2)) >> 3).astype(np.int32)
    return _one(Op.MUL, {"x": (I32, (2, 4)), "z": (I32, (2, 4))}, {"x": x, "z": z},
                A.MulAttrs(3), expected=expected, atol=0)


@case
def reshape():
    x = _rand((2, 3, 4))
    return _one(Op.RESHAPE, {"x": (F32, (2, 3, 4))}, {"x": x}, A.ReshapeAttrs((6, 4)),
                expected=x.reshape(6, 4))


@case
def slice_():
    x = _rand((4, 5))
    return _one(Op.SLICE, {"x": (F32, (4, 5))}, {"x": x}, A.SliceAttrs((1, 2), (2, 3)), expected=x[1:3, 2:5])


@case
def pad():
    x = _rand((2, 3))
    expected = np.pad(x, ((1, 0), (2, 1)), constant_values=1.5)
    return _one(Op.PAD, {"x": (F32, (2, 3))}, {"x": x}, A.PadAttrs((1, 0, 2, 1), 1.5), expected=expected)


@case
def tile():
    x = _rand((2, 3))
    return _one(Op.TILE, {"x": (F32, (2, 3))}, {"x": x}, A.TileAttrs((2, 1)), expected=np.tile(x, (2, 1)))


@case
def transpose():
    x = _rand((2, 3, 4))
    return _one(Op.TRANSPOSE, {"x": (F32, (2, 3, 4))}, {"x": x}, A.TransposeAttrs((2, 0, 1)),
                expected=x.transpose(2, 0, 1))


@case
def concat():
    x, z = _rand((2, 3)), _rand((2, 2))
    return _one(Op.CONCAT, {"x": (F32, (2, 3)), "z": (F32, (2, 2))}, {"x": x, "z": z}, A.AxisAttrs(1),
                expected=np.concatenate([x, z], axis=1))


@case
def matmul():
    a, c = _rand((1, 2, 3)), _rand((1, 3, 4))
    return _one(Op.MATMUL, {"a": (F32, (1, 2, 3)), "c": (F32, (1, 3, 4))}, {"a": a, "c": c},
                A.MatMulAttrs(), expected=a @ c)


@case
def reduce_sum():
    x = _rand((2, 3, 4))
    return _one(Op.REDUCE_SUM, {"x": (F32, (2, 3, 4))}, {"x": x}, A.AxisAttrs(1),
                expected=x.sum(axis=1, keepdims=True))


@case
def clamp():
    x = _rand((3, 4))
    return _one(Op.CLAMP, {"x": (F32, (3, 4))}, {"x": x}, A.ClampAttrs(-0.5, 0.75),
                expected=np.clip(x, -0.5, 0.75))


@case
def cast_fp32_int32():
    # No .5 ties here; test_reference.py checks ties separately.
    x = np.array([[-3.7, -1.2, 0.2, 0.8], [1.49, 2.51, 100.9, -100.1]], dtype=np.float32)
    return _one(Op.CAST, {"x": (F32, (2, 4))}, {"x": x}, A.CastAttrs(I32), expected=np.rint(x).astype(np.int32),
                atol=0)


@case
def select():
    rng = _rng()
    cond, x, z = rng.random((2, 3)) > 0.5, _rand((2, 3)), _rand((2, 3))
    return _one(Op.SELECT, {"c": (BOOL, (2, 3)), "x": (F32, (2, 3)), "z": (F32, (2, 3))},
                {"c": cond, "x": x, "z": z}, expected=np.where(cond, x, z))


@case
def gather():
    values = _rand((1, 5, 3))
    idx = np.array([[4, 0, 2, 2]], dtype=np.int32)
    return _one(Op.GATHER, {"v": (F32, (1, 5, 3)), "i": (I32, (1, 4))}, {"v": values, "i": idx},
                expected=values[:, idx[0], :])


@case
def table_int8():
    table = _rng().integers(-128, 128, 256).astype(np.int8)
    x = np.arange(-128, 128, dtype=np.int8).reshape(4, 64)
    return _one(Op.TABLE, {"x": (I8, (4, 64))}, {"x": x}, A.TableAttrs(table),
                expected=table[x.astype(np.int32) + 128], atol=0)
