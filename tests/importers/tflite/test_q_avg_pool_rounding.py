"""Quantized AVERAGE_POOL_2D lowered to TOSA's own AVG_POOL2D rounds exactly as LiteRT does, on every sum.

TFLite divides a window sum half away from zero; tosaconv emits one AVG_POOL2D, whose reciprocal multiplier
(numerator ``2**30 + 1``) makes its half-up rounding agree, negative halves included (the argument is in
``tosaconv/importers/tflite/ops/q_pool.py``). These tests build windows whose sums enumerate *every* value
the type can reach for a window of ``n`` taps (every sum for int8 and uint8 at n = 1..9, 16 and 25;
every sum for int16 at n = 4 and 9, with a stride over the rest) and compare LiteRT's reference kernel
with tosaconv's runs and the official reference model on the emitted ``.tosa``. One more checks the
argument with the spec's arithmetic up to the largest window it covers, and that larger windows and
padded symbolic geometries keep the exact INTDIV form.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, check_exact_with_litert, convert
from tests.importers.tflite.test_q_data import NP, Q, RANGE
from tosaconv.importers.tflite.ops.q_pool import NATIVE_AREA_LIMIT
from tosaconv.interpreter.fixed_point import apply_scale_32, reciprocal_scale
from tosaconv.ir.ops import Op

VALID = 1


def tflite_mean(s, n):
    """reference_integer_ops::AveragePool: ``s > 0 ? (s + n/2) / n : (s - n/2) / n``, C truncation."""
    return np.where(s > 0, (s + n // 2) // n, -((n // 2 - s) // n))


def windows_with_sums(sums, n: int, lo: int, hi: int) -> np.ndarray:
    """One row of ``n`` in-range values per target sum (``sum // n`` each, the remainder spread by 1s)."""
    sums = np.asarray(sums, np.int64)
    base = np.floor_divide(sums, n)
    rows = np.repeat(base[:, None], n, axis=1) + (np.arange(n)[None, :] < (sums - base * n)[:, None])
    assert rows.min() >= lo and rows.max() <= hi and np.array_equal(rows.sum(1), sums)
    return rows


def pool_over(rows: np.ndarray, kernel, dtype: str):
    """A VALID pool with stride = kernel over [1, kh, kw * W, 1] holding one window per row."""
    kh, kw = kernel
    w = rows.shape[0]
    x = rows.reshape(w, kh, kw).transpose(1, 0, 2).reshape(1, kh, kw * w, 1).astype(NP[dtype])
    m = ModelBuilder()
    xi = m.input("x", list(x.shape), dtype, quant=Q[dtype])
    y = m.tensor("y", [1, 1, w, 1], dtype, quant=Q[dtype])
    m.op("AVERAGE_POOL_2D", [xi], [y], "Pool2DOptions", Padding=VALID, StrideH=kh, StrideW=kw,
         FilterHeight=kh, FilterWidth=kw)
    m.output(y)
    return m.finish(), x


KERNELS = [(1, 1), (1, 2), (1, 3), (2, 2), (1, 5), (2, 3), (1, 7), (2, 4), (3, 3), (4, 4), (5, 5)]


@pytest.mark.parametrize("dtype", ["INT8", "UINT8"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_every_eight_bit_sum_rounds_as_litert(kernel, dtype, tmp_path):
    lo, hi = RANGE[dtype]
    n = kernel[0] * kernel[1]
    data, x = pool_over(windows_with_sums(np.arange(n * lo, n * hi + 1), n, lo, hi), kernel, dtype)
    graph = check_exact_with_litert(data, [{"x": x}], tmp_path)
    assert [op.op for op in graph.ops if op.op in (Op.AVG_POOL2D, Op.INTDIV)] == [Op.AVG_POOL2D]


@pytest.mark.parametrize("kernel,step", [((2, 2), 1), ((3, 3), 7)])
def test_int16_sums_round_as_litert(kernel, step, tmp_path):
    lo, hi = RANGE["INT16"]
    n = kernel[0] * kernel[1]
    sums = np.unique(np.concatenate([np.arange(n * lo, n * hi + 1, step),             # a stride over all
                                     np.arange(n * lo + n // 2, n * hi, n),            # every half
                                     np.arange(-20 * n, 20 * n + 1), [n * lo, n * hi]]))
    data, x = pool_over(windows_with_sums(sums, n, lo, hi), kernel, "INT16")
    check_exact_with_litert(data, [{"x": x}], tmp_path)


@pytest.mark.parametrize("n", [*range(1, 50), 64, 100, 255, 1000, 4096, NATIVE_AREA_LIMIT - 1])
def test_spec_reciprocal_rounds_half_away_over_the_int16_range(n):
    """The argument of q_pool's docstring, with the spec's own helpers: every sum of n int16 values
    (a stride of n - 1 plus every half and the ends for large n, to keep it quick)."""
    lo, hi = RANGE["INT16"]
    s = np.arange(n * lo, n * hi + 1, max(1, n - 1) if n > 100 else 1)
    s = np.concatenate([s, np.arange(n * lo + n // 2, n * hi, n), [n * lo, n * hi]]) if n > 100 else s
    m, shift = reciprocal_scale(n)
    assert np.array_equal(apply_scale_32(s, m, shift), tflite_mean(s, n))


def test_windows_from_the_limit_keep_the_exact_division():
    m = ModelBuilder()
    k = 128     # 128 x 128 = 2**14 taps: the argument no longer covers it
    x = m.input("x", [1, k, k, 1], "INT8", quant=Q["INT8"])
    y = m.tensor("y", [1, 1, 1, 1], "INT8", quant=Q["INT8"])
    m.op("AVERAGE_POOL_2D", [x], [y], "Pool2DOptions", Padding=VALID, StrideH=1, StrideW=1,
         FilterHeight=k, FilterWidth=k)
    m.output(y)
    ops = {op.op for op in convert(m.finish()).ops}
    assert Op.INTDIV in ops and Op.AVG_POOL2D not in ops
