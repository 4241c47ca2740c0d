"""Quantized TFLite SOFTMAX against LiteRT's reference kernel (``reference_ops::Softmax``), bit for bit.

Rows hold every int8 (or uint8) value, constant rows, one-hot rows and random
rows; betas and input scales range from multipliers clipped at 2**31 - 1 to
ones where most differences fall below ``diff_min``; outputs are int8, uint8
and int16; batch dims are dynamic and fed at two sizes.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, check_exact_with_litert, convert
from tosaconv.diagnostics import ConversionError

RNG = np.random.default_rng(11)
NP = {"INT8": np.int8, "UINT8": np.uint8}
RANGE = {"INT8": (-128, 127), "UINT8": (0, 255)}
OUT_Q = {"INT8": (1.0 / 256, -128), "UINT8": (1.0 / 256, 0), "INT16": (1.0 / 32768, 0)}


def softmax_model(dtype, out_dtype, in_q, beta, shape, signature) -> bytes:
    m = ModelBuilder()
    x = m.input("x", shape, dtype, signature, quant=([in_q[0]], [in_q[1]], 0))
    out_q = OUT_Q[out_dtype]
    y = m.tensor("y", shape, out_dtype, signature, quant=([out_q[0]], [out_q[1]], 0))
    m.op("SOFTMAX", [x], [y], "SoftmaxOptions", Beta=beta)
    m.output(y)
    return m.finish()


def rows(dtype, count, width):
    """Special rows first (all values, constant, one-hot, two maxima), then random ones."""
    lo, hi = RANGE[dtype]
    out = RNG.integers(lo, hi + 1, size=(count, width))
    specials = [RNG.permutation(np.arange(lo, hi + 1))[:width], np.full(width, lo), np.full(width, hi),
                np.r_[hi, np.full(width - 1, lo)], np.r_[np.full(max(width - 2, 0), lo + 3), hi, hi][-width:]]
    for i, row in enumerate(specials[:count]):
        out[i] = row
    return out.astype(NP[dtype])


@pytest.mark.parametrize("dtype,out_dtype", [("INT8", "INT8"), ("INT8", "INT16"), ("UINT8", "UINT8"),
                                             ("UINT8", "INT16")])
@pytest.mark.parametrize("in_scale,zp,beta", [(0.1, 3, 1.0), (0.0039, 0, 1.0), (1.7, -20, 1.0),
                                              (0.05, 10, 0.3), (0.02, -5, 7.5), (0.8, 0, 100.0)])
def test_softmax_rows_of_256(dtype, out_dtype, in_scale, zp, beta, tmp_path):
    zp = zp + 128 if dtype == "UINT8" else zp
    data = softmax_model(dtype, out_dtype, (in_scale, zp), beta, [2, 256], [-1, 256])
    feeds = [{"x": rows(dtype, 5, 256)}, {"x": rows(dtype, 3, 256)}]
    check_exact_with_litert(data, feeds, tmp_path)


@pytest.mark.parametrize("width", [1, 3, 40])
def test_softmax_batch_dims(width, tmp_path):
    data = softmax_model("INT8", "INT8", (0.07, -9), 1.0, [1, 2, 3, width], [-1, 2, 3, width])
    feeds = [{"x": rows("INT8", 6, width).reshape(1, 2, 3, width)},
             {"x": rows("INT8", 24, width).reshape(4, 2, 3, width)}]
    check_exact_with_litert(data, feeds, tmp_path)


def test_softmax_rank1(tmp_path):
    data = softmax_model("INT8", "INT8", (0.25, 0), 1.0, [300], None)
    check_exact_with_litert(data, [{"x": RNG.integers(-128, 128, size=300).astype(np.int8)}], tmp_path)


def test_softmax_int8_output_params_refused():
    data = softmax_model("INT8", "INT8", (0.1, 0), 1.0, [2, 8], None)
    data_bad = data.replace(np.float32(1.0 / 256).tobytes(), np.float32(1.0 / 128).tobytes())
    assert data_bad != data
    with pytest.raises(ConversionError, match="scale 1/256 and zero point -128"):
        convert(data_bad)


def test_softmax_mixed_types_refused():
    m = ModelBuilder()
    x = m.input("x", [2, 8], "INT8", quant=([0.1], [0], 0))
    y = m.tensor("y", [2, 8], "UINT8", quant=([1.0 / 256], [0], 0))
    m.op("SOFTMAX", [x], [y], "SoftmaxOptions", Beta=1.0)
    m.output(y)
    with pytest.raises(ConversionError, match="SOFTMAX from INT8 to UINT8"):
        convert(m.finish())


def test_softmax_tiny_beta_refused():
    data = softmax_model("INT8", "INT8", (1e-6, 0), 1e-3, [2, 8], None)
    with pytest.raises(ConversionError, match="too small"):
        convert(data)
