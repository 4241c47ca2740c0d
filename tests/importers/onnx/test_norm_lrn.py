"""ONNX LRN for several size/alpha/beta/bias (odd and even windows, windows wider than the
channels, the RSQRT, RECIPROCAL and POW forms of the power) on symbolic N, H, W at two bindings:
against the ONNX definition computed in float64 with numpy (every case; within 1e-6), and against
onnxruntime where it runs the case (odd sizes, 4-D inputs; its pow is off by up to 2e-5 relative
from float64, ours by 3e-7); a 3-D input; the official reference model running the emitted .tosa;
and the refusal of a power TOSA leaves undefined."""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.diagnostics import TosaconvError
from tosaconv.emit import read_tosa

from .harness import (F32, check_reference_model, check_with_onnxruntime, compare_both_paths, convert, info,
                      one_node, rand, run_graph, run_onnxruntime, specialize_and_emit)

CASES = [
    {"size": 5},                                                    # the defaults: alpha 1e-4, beta 0.75, bias 1
    {"size": 3, "alpha": 0.5, "beta": 0.75, "bias": 2.0},
    {"size": 4, "alpha": 0.2, "beta": 0.5, "bias": 1.0},            # even window, RSQRT
    {"size": 2, "alpha": 1.0, "beta": 1.0, "bias": 0.5},            # RECIPROCAL
    {"size": 9, "alpha": 0.3, "beta": 0.6, "bias": 1.5},            # wider than the 6 channels
    {"size": 1, "alpha": 2.0, "beta": 1.3, "bias": 0.1},
]


def _model(dims=("N", 6, "H", "W"), **attrs):
    return one_node("LRN", [info("x", F32, list(dims))], [info("y", F32, None)], opset=13, **attrs)


def lrn_definition(x: np.ndarray, size: int, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0):
    """ONNX's LRN formula in float64: the window ``[c - floor((size-1)/2), c + ceil((size-1)/2)]``, clipped."""
    squares, channels = x.astype(np.float64) ** 2, x.shape[1]
    sums = np.zeros_like(squares)
    for c in range(channels):
        lo, hi = max(0, c - (size - 1) // 2), min(channels - 1, c + size // 2)
        sums[:, c] = squares[:, lo:hi + 1].sum(axis=1)
    return (x / (bias + alpha / size * sums) ** beta).astype(np.float32)


FEEDS = [{"x": rand(1, 6, 5, 7, low=-3, high=3, seed=1)}, {"x": rand(2, 6, 3, 2, low=-3, high=3, seed=2)}]


@pytest.mark.parametrize("attrs", CASES, ids=lambda a: "-".join(f"{k}{v}" for k, v in a.items()))
def test_lrn_matches_its_definition(attrs):
    graph = convert(_model(**attrs))
    for feeds in FEEDS:
        compare_both_paths(graph, feeds, [lrn_definition(feeds["x"], **attrs)], 1e-6, 1e-7)


@pytest.mark.parametrize("attrs", [a for a in CASES if a["size"] % 2], ids=lambda a: "-".join(map(str, a.values())))
def test_lrn_matches_onnxruntime(attrs):
    check_with_onnxruntime(_model(**attrs), FEEDS, rtol=5e-5, atol=1e-6)


def test_lrn_on_a_3d_input():
    attrs = {"size": 4, "alpha": 0.4, "beta": 0.75, "bias": 1.0}
    graph = convert(_model(dims=("N", 6, "L"), **attrs))
    for feeds in ({"x": rand(2, 6, 9, seed=3)}, {"x": rand(1, 6, 4, seed=4)}):
        compare_both_paths(graph, feeds, [lrn_definition(feeds["x"], **attrs)], 1e-6, 1e-7)


def test_lrn_reference_model(tmp_path):
    model = _model(size=3, alpha=0.5, beta=0.75, bias=2.0)
    graph = convert(model)
    feeds = {"x": rand(2, 6, 4, 5, low=-3, high=3, seed=5)}
    static, tosa = specialize_and_emit(graph, {"x": feeds["x"].shape})
    got = run_graph(read_tosa(tosa), feeds)
    check_reference_model(tosa, static, feeds, got, tmp_path)
    np.testing.assert_allclose(got[0], run_onnxruntime(model, feeds)[0], rtol=5e-5, atol=1e-6)


def test_lrn_nonpositive_bias_with_a_general_power_is_refused():
    with pytest.raises(TosaconvError, match=r"LRN with bias 0.0 <= 0 and beta 0.75 .* TOSA POW leaves undefined"):
        convert(_model(size=3, bias=0.0))
