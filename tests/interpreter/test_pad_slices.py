"""A PAD that its only reader slices back inside the input (interpreter/pad_slices.py), against numpy truth.

PP-OCR's "same" padding: x -> PAD (one row and column at the end) -> SLICE (from 0, x's size) -> CONV2D with
its own padding. From the second run the plan lets the PAD pass x on; every run must still give the
convolution of x, computed here in numpy on small integers (exact float32 sums). Where x could be
written in place while the SLICE's view of it lives, or the SLICE reads padding, the PAD must stay.
"""
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

SHAPE = (1, 4, 5, 2)
WEIGHTS = np.array([1, -2, 0, 3, 2, 1, -1, 1, 0, 1, 2, -3], np.float32).reshape(1, 2, 3, 2)
ONE = np.ones((1, 1, 1, 1), np.float32)


def same_pad_graph(size: tuple = SHAPE, reuse: str = "") -> Graph:
    """y = CONV2D(SLICE(PAD(x + 1)), pad top/left 1); with ``reuse`` x + 1 is also read, between the SLICE and
    the CONV2D, by an ABS ("read") or by an ADD it dies with ("add", which may write into it), returned as a
    second output."""
    graph = Graph()
    b = Builder(graph, Location("Pad", "stem/pad", "onnx"))
    x = graph.add_input("x", TensorType(DType.FP32, SHAPE))
    shifted = b.emit(Op.ADD, x, b.const(ONE))
    padded = b.emit(Op.PAD, shifted, attrs=A.PadAttrs((0, 0, 0, 1, 0, 1, 0, 0), 7.0))
    cut = b.emit(Op.SLICE, padded, attrs=A.SliceAttrs((0, 0, 0, 0), size))
    later = None
    if reuse:
        later = b.emit(Op.ABS, shifted) if reuse == "read" else b.emit(Op.ADD, shifted, b.const(ONE))
    y = b.emit(Op.CONV2D, cut, b.const(WEIGHTS), b.const(np.zeros(1, np.float32)),
               attrs=A.Conv2dAttrs((1, 0, 1, 0), (1, 1), (1, 1), DType.FP32))
    graph.set_outputs([y, later] if later else [y], ["y", "later"] if later else ["y"])
    return graph


def numpy_truth(x: np.ndarray, size: tuple = SHAPE) -> np.ndarray:
    """The convolution of SLICE(PAD(x + 1, 7.0)), padded by one zero row and column before."""
    padded = np.full((1, SHAPE[1] + 1, SHAPE[2] + 1, 2), 7.0, np.float32)
    padded[:, :SHAPE[1], :SHAPE[2]] = x + 1
    cut = padded[:, :size[1], :size[2]]
    framed = np.pad(cut, ((0, 0), (1, 0), (1, 0), (0, 0)))
    oh, ow = size[1] + 1 - 2 + 1, size[2] + 1 - 3 + 1
    out = np.zeros((1, oh, ow, 1), np.float32)
    for i in range(oh):
        for j in range(ow):
            out[0, i, j, 0] = np.sum(framed[0, i:i + 2, j:j + 3] * WEIGHTS[0])
    return out


def unpadded(graph: Graph) -> bool:
    return any(s.call.__name__ == "_unpadded" for s in plan_for(graph, {}).steps)


@pytest.mark.parametrize("reuse, skipped", [("", True), ("read", True), ("add", False)])
def test_the_pad_is_skipped_only_where_nothing_can_write_into_its_input(reuse, skipped):
    graph = same_pad_graph(reuse=reuse)
    rng = np.random.default_rng(3)
    for run in range(3):
        x = rng.integers(-3, 4, SHAPE).astype(np.float32)
        out = evaluate(graph, {"x": x})
        assert out["y"].tobytes() == numpy_truth(x).tobytes(), f"run {run}"
        if reuse:
            np.testing.assert_array_equal(out["later"], np.abs(x + 1) if reuse == "read" else x + 2)
    assert unpadded(graph) is skipped


def test_a_slice_that_reads_the_padding_keeps_the_pad():
    size = (1, SHAPE[1] + 1, SHAPE[2], 2)      # the padded row of 7s is read
    graph = same_pad_graph(size)
    x = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE) % 5
    for _ in range(3):
        assert evaluate(graph, {"x": x})["y"].tobytes() == numpy_truth(x, size).tobytes()
    assert not unpadded(graph)
