"""REVERSE_V2 (BirdNET's mel front-end reverses its frequency axis with it): float and int8 against
LiteRT's reference kernels, symbolic dims bound twice, the emitted .tosa on the official reference model,
and the refusals of a bad axis operand."""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import (ModelBuilder, check_exact_with_litert, check_reference_model,
                                            check_with_litert, convert, rand, run_graph, specialize_and_emit)
from tosaconv.diagnostics import TosaconvError

Q = ((0.05,), (3,), 0)


def _model(shape, axes, signature=None, dtype="FLOAT32", quant=None, version=3) -> bytes:
    m = ModelBuilder()
    x = m.input("x", shape, dtype, signature, quant)
    y = m.tensor("y", shape, dtype, signature, quant)
    m.op("REVERSE_V2", [x, m.const("axis", np.asarray(axes, np.int32))], [y], version=version)
    m.output(y)
    return m.finish()


@pytest.mark.parametrize("axes", [[0], [2], [-1], [1, 2], [2, 1, 3]], ids=str)
def test_float_reverse_matches_litert(axes, tmp_path):
    data = _model([2, 3, 4, 5], axes, signature=[-1, 3, -1, 5])
    graph = check_with_litert(data, [{"x": rand(2, 3, 4, 5)}, {"x": rand(1, 3, 7, 5)}], rtol=0, atol=0)
    static, tosa = specialize_and_emit(graph, {"x": (1, 3, 7, 5)})
    feeds = {"x": rand(1, 3, 7, 5)}
    check_reference_model(tosa, static, feeds, run_graph(static, feeds), tmp_path)


def test_int8_reverse_is_bit_exact(tmp_path):
    data = _model([2, 6, 3], [1], dtype="INT8", quant=Q)
    rng = np.random.default_rng(4)
    feeds = [{"x": rng.integers(-128, 128, (2, 6, 3)).astype(np.int8)}]
    check_exact_with_litert(data, feeds, tmp_path)


@pytest.mark.parametrize("axes,why", [([4], "must be distinct axes"), ([1, 1], "must be distinct axes"),
                                      ([-5], "must be distinct axes")])
def test_bad_axes_are_refused(axes, why):
    with pytest.raises(TosaconvError) as err:
        convert(_model([2, 3, 4, 5], axes))
    message = err.value.diagnostics[0].message
    assert "REVERSE_V2" in message and why in message, message
