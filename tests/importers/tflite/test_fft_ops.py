"""TFLite RFFT2D (with REAL, IMAG and COMPLEX_ABS of its complex result) against LiteRT.

Each model is compared with LiteRT at two batch sizes, through the symbolic
program and the specialized, emitted and read-back ``.tosa``, with ``--dft``
auto (TOSA RFFT2D, EXT-FFT) and matmul (plain PRO-FP); the official reference
model runs the emitted program. fft_length crops and zero-pads. Tolerance
from float32: a DFT of n = H*W <= 128 terms of size <= 2 errs by about
``2 * n * eps32`` ~ 3e-5 per output, so 2e-4 absolute. Refusals: a complex
result as a graph output, and LiteRT's other complex readers.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.diagnostics import TosaconvError
from tosaconv.lowering.dft import dft_mode

from .harness import (ModelBuilder, check_reference_model, check_with_litert, convert, rand, run_graph,
                      specialize_and_emit)

ATOL, RTOL = 2e-4, 1e-4


def _model(shape, fft_length, reader: str):
    m = ModelBuilder()
    x = m.input("x", shape, signature=[-1] + list(shape[1:]))
    n = m.const("n", np.array(fft_length, np.int32))
    bins = list(shape[:-2]) + [fft_length[0], fft_length[1] // 2 + 1]
    z = m.tensor("z", bins, "COMPLEX64", signature=[-1] + bins[1:])
    m.op("RFFT2D", [x, n], [z], "Rfft2dOptions")
    y = m.tensor("y", bins, signature=[-1] + bins[1:])
    m.op(reader, [z], [y])
    m.output(y)
    return m.finish()


CASES = [((1, 4, 8), (4, 8), "REAL"), ((1, 4, 8), (4, 8), "IMAG"), ((1, 3, 16), (2, 16), "COMPLEX_ABS"),
         ((1, 2, 5, 6), (8, 8), "IMAG"), ((1, 1, 16), (1, 16), "REAL")]


@pytest.mark.parametrize("mode", ["auto", "matmul"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_rfft2d_matches_litert(case, mode, tmp_path):
    shape, lengths, reader = CASES[case]
    data = _model(shape, lengths, reader)
    feeds = [{"x": rand(b, *shape[1:], seed=b)} for b in (1, 3)]
    with dft_mode(mode):
        graph = check_with_litert(data, feeds, rtol=RTOL, atol=ATOL)
    ops = {op.op.name for op in graph.ops}
    assert ("RFFT2D" in ops) == (mode == "auto")
    feed = {"x": rand(2, *shape[1:], seed=5)}
    static, tosa = specialize_and_emit(graph, {"x": feed["x"].shape})
    check_reference_model(tosa, static, feed, run_graph(static, feed), tmp_path)


def test_complex_graph_output_is_refused():
    m = ModelBuilder()
    x = m.input("x", (1, 4, 8))
    n = m.const("n", np.array([4, 8], np.int32))
    z = m.tensor("z", (1, 4, 5), "COMPLEX64")
    m.op("RFFT2D", [x, n], [z], "Rfft2dOptions")
    m.output(z)
    with pytest.raises(TosaconvError, match=r"RFFT2D '.*': its complex64 result is a graph output"):
        convert(m.finish())


def test_complex_result_read_by_another_op_is_refused():
    m = ModelBuilder()
    x = m.input("x", (1, 4, 8))
    n = m.const("n", np.array([4, 8], np.int32))
    z = m.tensor("z", (1, 4, 5), "COMPLEX64")
    m.op("RFFT2D", [x, n], [z], "Rfft2dOptions")
    y = m.tensor("y", (1, 4, 5), "COMPLEX64")
    m.op("NEG", [z], [y])
    r = m.tensor("r", (1, 4, 5))
    m.op("REAL", [y], [r])
    m.output(r)
    with pytest.raises(TosaconvError, match=r"is the complex result of RFFT2D .*only REAL, IMAG, COMPLEX_ABS, "
                       r"CAST to a real type and the shape-only RESHAPE, SQUEEZE, EXPAND_DIMS and TRANSPOSE"):
        convert(m.finish())


def test_symbolic_transform_dims_are_refused():
    m = ModelBuilder()
    x = m.input("x", (1, 4, 8), signature=[1, 4, -1])
    n = m.const("n", np.array([4, 8], np.int32))
    z = m.tensor("z", (1, 4, 5), "COMPLEX64")
    m.op("RFFT2D", [x, n], [z], "Rfft2dOptions")
    r = m.tensor("r", (1, 4, 5))
    m.op("REAL", [z], [r])
    m.output(r)
    with pytest.raises(TosaconvError, match=r"RFFT2D '.*': the transformed dims 4, x.2 are symbolic; .*static size"):
        convert(m.finish())
