"""The transpose-cancel pass sinks a TRANSPOSE below elementwise ops, except below an
axis-dependent one: a per-channel RESCALE pairs its i-th multiplier with the last axis."""
from __future__ import annotations

import numpy as np

from tosaconv.interpreter import evaluate
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType
from tosaconv.passes.transpose_cancel import cancel_transposes


def _graph(per_channel: bool) -> Graph:
    g = Graph()
    x = g.add_input("x", TensorType(DType.INT32, (2, 3, 4)))
    b = Builder(g)
    t = b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs((0, 2, 1)))          # [2, 4, 3]
    n = 3 if per_channel else 1
    mult = tuple(1 << 30 for _ in range(n)) if not per_channel else (1 << 30, 1 << 29, 1 << 28)
    y = b.emit(Op.RESCALE, t, attrs=A.RescaleAttrs(mult, (31,) * n, per_channel=per_channel))
    g.set_outputs([y], ["y"])
    return g


def _rescale_input_producer(g):
    op = next(o for o in g.ops if o.op is Op.RESCALE)
    return op.operands[0].producer


def test_per_channel_rescale_keeps_its_transpose_above_it():
    g = _graph(per_channel=True)
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4) * 8
    before = evaluate(g, {"x": x})["y"]
    cancel_transposes(g)
    assert _rescale_input_producer(g).op is Op.TRANSPOSE
    np.testing.assert_array_equal(evaluate(g, {"x": x})["y"], before)


def test_per_tensor_rescale_lets_the_transpose_sink():
    g = _graph(per_channel=False)
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4) * 8
    before = evaluate(g, {"x": x})["y"]
    cancel_transposes(g)
    assert _rescale_input_producer(g) is None          # RESCALE now reads the input; TRANSPOSE follows it
    np.testing.assert_array_equal(evaluate(g, {"x": x})["y"], before)
