"""RESIZE against a per-pixel transcription of the spec pseudocode (nearest and bilinear, float and int8)."""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import KernelError
from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.ops import Op

from .helpers import one_op_graph, run_op, tensor

RNG = np.random.default_rng(5)


def naive_resize(x, scale, offset, border, mode):
    n, ih, iw, c = x.shape
    sy_n, sy_d, sx_n, sx_d = scale
    oh = ((ih - 1) * sy_n - offset[0] + border[0]) // sy_d + 1
    ow = ((iw - 1) * sx_n - offset[1] + border[1]) // sx_d + 1
    is_float = x.dtype.kind == "f"
    out = np.zeros((n, oh, ow, c), dtype=np.float64 if is_float else np.int64)
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                y, xx = oy * sy_d + offset[0], ox * sx_d + offset[1]
                iy, ix = y // sy_n, xx // sx_n              # Python // is idiv_floor
                ry, rx = y - iy * sy_n, xx - ix * sx_n
                iy0, iy1 = max(iy, 0), min(iy + 1, ih - 1)
                ix0, ix1 = max(ix, 0), min(ix + 1, iw - 1)
                for ch in range(c):
                    if mode == "NEAREST":
                        py = iy1 if 2 * ry >= sy_n else iy0
                        px = ix1 if 2 * rx >= sx_n else ix0
                        out[b, oy, ox, ch] = x[b, py, px, ch]
                        continue
                    if is_float:
                        dy, dx, uy, ux = ry / sy_n, rx / sx_n, 1.0, 1.0
                    else:
                        dy, dx, uy, ux = ry, rx, sy_n, sx_n
                    v = [[x[b, iy0, ix0, ch], x[b, iy0, ix1, ch]], [x[b, iy1, ix0, ch], x[b, iy1, ix1, ch]]]
                    v = [[float(e) if is_float else int(e) for e in r] for r in v]
                    out[b, oy, ox, ch] = (v[0][0] * (uy - dy) * (ux - dx) + v[0][1] * (uy - dy) * dx
                                          + v[1][0] * dy * (ux - dx) + v[1][1] * dy * dx)
    return out


PARAMS = [
    ((4, 2, 4, 2), (-1, -1), (1, 1)),        # 2x upscale, half-pixel centres
    ((2, 1, 2, 1), (0, 0), (0, 0)),          # align-corners style 2x
    ((3, 5, 5, 3), (0, 1), (-2, 0)),         # uneven scales with an offset
    ((1, 2, 1, 2), (0, 0), (0, 0)),          # downscale
]


@pytest.mark.parametrize("scale,offset,border", PARAMS)
@pytest.mark.parametrize("mode", ["NEAREST", "BILINEAR"])
def test_float_resize_matches_the_pseudocode(scale, offset, border, mode):
    x = RNG.standard_normal((2, 5, 6, 3)).astype(np.float32)
    got = run_op(Op.RESIZE, [x], A.ResizeAttrs(scale, offset, border, mode))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, naive_resize(x, scale, offset, border, mode), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("scale,offset,border", PARAMS)
def test_int8_nearest_matches_the_pseudocode(scale, offset, border):
    x = RNG.integers(-128, 128, (1, 5, 6, 2)).astype(np.int8)
    got = run_op(Op.RESIZE, [x], A.ResizeAttrs(scale, offset, border, "NEAREST"))
    np.testing.assert_array_equal(got, naive_resize(x, scale, offset, border, "NEAREST"))


@pytest.mark.parametrize("scale,offset,border", PARAMS)
def test_int8_bilinear_is_int32_scaled_by_the_numerators(scale, offset, border):
    x = RNG.integers(-128, 128, (1, 5, 6, 2)).astype(np.int8)
    attrs = A.ResizeAttrs(scale, offset, border, "BILINEAR")
    typed = one_op_graph(Op.RESIZE, [x], attrs)[0].outputs[0].type.with_dtype(DType.INT32)
    got = run_op(Op.RESIZE, [x], attrs, result_type=typed)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, naive_resize(x, scale, offset, border, "BILINEAR"))


def test_int8_bilinear_is_typed_int32_and_an_int8_result_is_refused():
    x = np.zeros((1, 2, 2, 1), np.int8)
    attrs = A.ResizeAttrs((2, 1, 2, 1), (0, 0), (0, 0), "BILINEAR")
    assert run_op(Op.RESIZE, [x], attrs).dtype == np.int32
    with pytest.raises(KernelError, match="need an i32 or i48 result"):
        run_op(Op.RESIZE, [x], attrs, result_type=tensor(DType.INT8, (1, 3, 3, 1)))


def test_bilinear_hand_worked():
    x = np.array([[0.0, 4.0], [8.0, 12.0]], dtype=np.float32).reshape(1, 2, 2, 1)
    got = run_op(Op.RESIZE, [x], A.ResizeAttrs((2, 1, 2, 1), (0, 0), (0, 0), "BILINEAR"))
    want = [[0, 2, 4], [4, 6, 8], [8, 10, 12]]
    np.testing.assert_array_equal(got[0, :, :, 0], want)
