"""FULLY_CONNECTED's float weights are transposed in strips (ops/nn.py ``transposed``), for speed: the
result must be numpy's own transpose, element for element, for any shape, dtype and layout."""
from __future__ import annotations

import numpy as np

from tosaconv.importers.tflite.ops.nn import transposed


def test_the_strip_transpose_is_the_transpose():
    rng = np.random.default_rng(0)
    for shape in [(1, 1), (1, 7), (7, 1), (15, 3), (16, 16), (33, 17), (100, 257)]:
        for dtype in (np.float32, np.float16, np.int8):
            w = rng.uniform(-9, 9, shape).astype(dtype)
            got = transposed(w[::1])
            assert got.flags.c_contiguous and got.dtype == w.dtype and np.array_equal(got, np.transpose(w))
    view = np.arange(60, dtype=np.float32).reshape(6, 10)[:, ::2]   # a strided view transposes too
    assert np.array_equal(transposed(view), view.T)
