"""The fixed-point inverse square root of :mod:`tosaconv.lowering.rsqrt`, against float64 math.

The helper's ops run in our interpreter on int32 values across the whole range it accepts (0 to
2**31 - 1, each power of two and its neighbours, plus seeded random values), with and without a
constant fraction, and must meet the relative error the module states; the official reference model
runs the same program bit for bit.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv import api
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.types import TensorType
from tosaconv.lowering.context import LoweringContext
from tosaconv.lowering.rsqrt import normalized_rsqrt

from tests.tosa_tools import run_reference_model

MAX_RELATIVE_ERROR = 2.0 ** -26


def _values() -> np.ndarray:
    powers = np.array([1 << k for k in range(31)], dtype=np.int64)
    edges = np.concatenate([powers - 1, powers, powers + 1, [(1 << 31) - 1]])
    rng = np.random.default_rng(0)
    spread = np.exp2(rng.uniform(0, 31, 2000)).astype(np.int64)
    return np.clip(np.unique(np.concatenate([edges, spread])), 1, (1 << 31) - 1).astype(np.int32)


def _program(n: int, frac: float) -> Graph:
    g = Graph()
    v = g.add_input("v", TensorType(DType.INT32, (n,)))
    r, h = normalized_rsqrt(LoweringContext(g), v, frac)
    g.set_outputs([r, h], ["r", "h"])
    return g


@pytest.mark.parametrize("frac", [0.0, 0.375, 0.999])
def test_rsqrt_relative_error(frac):
    v = _values()
    out = api.run(_program(v.size, frac), {"v": v})
    got = out["r"].astype(np.float64) * np.exp2(out["h"].astype(np.float64) - 44)
    want = 1 / np.sqrt(v.astype(np.float64) + frac)
    rel = np.abs(got / want - 1)
    assert rel.max() < MAX_RELATIVE_ERROR, f"max relative error {rel.max():.3g} at v={v[rel.argmax()]}"


def test_rsqrt_of_zero_is_that_of_one():
    """v = 0 is read as 1 (a LayerNorm only meets it on a constant row, whose centred values are 0)."""
    out = api.run(_program(2, 0.0), {"v": np.array([0, 1], np.int32)})
    assert out["r"][0] == out["r"][1] and out["h"][0] == out["h"][1]


def test_rsqrt_bit_exact_on_reference_model(tmp_path):
    v = _values()
    program = _program(v.size, 0.375)
    ours = api.run(program, {"v": v})
    ref = run_reference_model(api.emit(program), {"v": v}, ["r", "h"], tmp_path)
    for name in ("r", "h"):
        np.testing.assert_array_equal(ref[name], ours[name], err_msg=name)
