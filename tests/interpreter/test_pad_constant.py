"""The interpreter's constant padding gives exactly np.pad's array: values, dtype and memory order."""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter.data_layout import pad_constant

RNG = np.random.default_rng(7)


def _arrays(dtype):
    data = RNG.standard_normal((3, 4, 6)) * 100
    yield data.astype(dtype)                                   # C order
    yield np.asfortranarray(data[0].astype(dtype))            # Fortran order: np.pad keeps it
    yield data.astype(dtype)[:, ::2, 1:]                      # a strided view
    yield np.zeros((0, 2), dtype)                              # empty


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int16, np.int32, np.bool_])
def test_pad_constant_is_np_pad(dtype):
    fills = {"f": (0.0, -np.inf, 2.5), "i": (0, -128, 7), "b": (False, True)}[np.dtype(dtype).kind]
    for x in _arrays(dtype):
        pairs = [(i % 3, (i + 1) % 2) for i in range(x.ndim)]
        for fill in fills:
            want, got = np.pad(x, pairs, constant_values=fill), pad_constant(x, pairs, fill)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes()
            assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)
