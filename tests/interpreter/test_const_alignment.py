"""CONST weights that are views of a file's bytes at odd offsets: numpy runs a misaligned MATMUL operand
in its own loops, far slower than BLAS, so the kernel hands out an aligned copy, made once per array."""
from __future__ import annotations

import numpy as np

from tosaconv.interpreter import evaluate
from tosaconv.interpreter.data_nodes import aligned
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

from .helpers import LOC


def misaligned(values: np.ndarray) -> np.ndarray:
    """``values`` as a read-only view one byte into a buffer, the way a weight can sit in a model file."""
    raw = b"\0" + values.astype(np.float32).tobytes()
    view = np.frombuffer(raw, dtype=np.float32, offset=1).reshape(values.shape)
    assert not view.flags.aligned
    return view


def test_a_misaligned_constant_feeds_matmul_aligned_and_unchanged():
    rng = np.random.default_rng(5)
    weights = rng.standard_normal((1, 6, 4)).astype(np.float32)
    x = rng.standard_normal((1, 3, 6)).astype(np.float32)
    graph = Graph()
    b = Builder(graph, LOC)
    lhs = graph.add_input("x", TensorType(DType.FP32, x.shape))
    const = b.const(misaligned(weights))
    graph.set_outputs([b.emit(Op.MATMUL, lhs, const), const], ["product", "weights"])
    for _ in range(2):                       # the second run reuses the aligned copy
        out = evaluate(graph, {"x": x})
        assert out["weights"].flags.aligned
        np.testing.assert_array_equal(out["weights"], weights)
        np.testing.assert_allclose(out["product"], x @ weights, rtol=1e-6, atol=1e-6)


def test_the_aligned_copy_is_made_once_and_equals_the_view():
    view = misaligned(np.arange(12, dtype=np.float32).reshape(3, 4))
    first, second = aligned(view), aligned(view)
    assert first is second and first.flags.aligned and first.flags.c_contiguous
    np.testing.assert_array_equal(first, view)
    assert not first.flags.writeable          # shared by every run: never written
