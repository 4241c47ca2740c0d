"""A SLICE in a static program runs a kernel made once per plan (data_layout.prepared_slice): later runs must
give numpy's slice of each new input, as the first (checked) run does, for the SLICE alone and for one that
reads a PAD the plan passes on (pad_slices.py)."""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import evaluate
from tosaconv.interpreter.plan import plan_for
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

RNG = np.random.default_rng(9)
SHAPE = (2, 5, 6, 3)


def slice_graph(start: tuple, size: tuple, padded: bool) -> Graph:
    """y = SLICE(x + 1) (or SLICE(PAD(x + 1)) with one row and column of 7 at the end) + 0.5."""
    graph = Graph()
    b = Builder(graph, Location("Slice", "cut", "onnx"))
    x = graph.add_input("x", TensorType(DType.FP32, SHAPE))
    value = b.emit(Op.ADD, x, b.const(np.ones((1, 1, 1, 1), np.float32)))
    if padded:
        value = b.emit(Op.PAD, value, attrs=A.PadAttrs((0, 0, 0, 1, 0, 1, 0, 0), 7.0))
    cut = b.emit(Op.SLICE, value, attrs=A.SliceAttrs(start, size))
    graph.set_outputs([b.emit(Op.ADD, cut, b.const(np.full((1, 1, 1, 1), 0.5, np.float32)))], ["y"])
    return graph


@pytest.mark.parametrize("start, size, padded", [
    ((1, 1, 2, 0), (1, 3, 4, 2), False),
    ((0, 0, 0, 0), SHAPE, True),                 # the PAD is passed on from the second run
    ((0, 2, 1, 1), (2, 4, 6, 2), True),          # reads the padding: the PAD stays
])
def test_later_runs_give_numpys_slice(start, size, padded):
    graph = slice_graph(start, size, padded)
    for _ in range(3):
        x = RNG.standard_normal(SHAPE).astype(np.float32)
        full = np.pad(x + np.float32(1), ((0, 0), (0, 1), (0, 1), (0, 0)), constant_values=7.0) if padded else x + 1
        index = tuple(slice(s, s + n) for s, n in zip(start, size))
        np.testing.assert_array_equal(evaluate(graph, {"x": x})["y"], full[index] + np.float32(0.5))
    step = [s for s in plan_for(graph, {}).steps if s.opdef.name == "SLICE"][0]
    assert step.call is not step.kernel
