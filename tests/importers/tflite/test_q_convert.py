"""Quantized TFLite QUANTIZE, requantize and DEQUANTIZE against LiteRT's reference kernels, bit for bit.

The float -> int8/uint8/int16 cases feed exact ties ``(k + 0.5) * scale``
and their float32 neighbours (where ``x / scale`` rounds across a half), as
well as random and huge values, with a dynamic batch fed at two sizes; the
harness also runs the emitted .tosa on the official reference model.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, check_exact_with_litert, convert
from tosaconv.diagnostics import ConversionError

RNG = np.random.default_rng(11)
NP = {"INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16}
RANGE = {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767)}


def one_op(op, in_type, out_type, in_q, out_q, width=96) -> bytes:
    m = ModelBuilder()
    x = m.input("x", [2, width], in_type, [-1, width], quant=None if in_q is None else ([in_q[0]], [in_q[1]], 0))
    y = m.tensor("y", [2, width], out_type, [-1, width],
                 quant=None if out_q is None else ([out_q[0]], [out_q[1]], 0))
    m.op(op, [x], [y])
    m.output(y)
    return m.finish()


def tie_floats(scale, count, span):
    """``(k + 0.5) * scale`` rounded to float32, and the float32 values one ulp either side."""
    k = RNG.integers(-span, span, size=count) + 0.5
    ties = (k * np.float64(np.float32(scale))).astype(np.float32)
    bits = ties.view(np.int32)
    return np.concatenate([ties, (bits + 1).view(np.float32), (bits - 1).view(np.float32)])


def int_feeds(dtype, width=96):
    lo, hi = RANGE[dtype]
    first = RNG.integers(lo, hi + 1, size=(2, width))
    first[0, :3] = [lo, hi, 0 if dtype != "UINT8" else 128]
    return [{"x": first.astype(NP[dtype])}, {"x": RNG.integers(lo, hi + 1, size=(3, width)).astype(NP[dtype])}]


@pytest.mark.parametrize("dtype,scale,zp", [
    ("INT8", 0.05, 3), ("INT8", 1.0 / 3, -128), ("INT8", 0.0039, 127), ("INT8", 7.5, 0),
    ("UINT8", 0.3, 128), ("UINT8", 0.0123, 0), ("INT16", 0.001, 0), ("INT16", 2.0 ** -12, 0)])
def test_quantize_float(dtype, scale, zp, tmp_path):
    data = one_op("QUANTIZE", "FLOAT32", dtype, None, (scale, zp))
    span = 40000 if dtype == "INT16" else 300
    ties = tie_floats(scale, 64, span).reshape(2, 96)
    edge = np.float32(2.0 ** 31) * np.float32(scale)          # where LiteRT's int32 cast overflows
    edges = [np.nextafter(edge, np.float32(0)), edge, np.nextafter(edge, np.float32(np.inf))]
    wild = np.concatenate([RNG.standard_normal(200) * scale * span, [0.0, -0.0, 1e30, -1e30, np.inf, -np.inf],
                           edges, np.negative(edges), RNG.standard_normal(76) * 1e-3 * scale]
                          ).astype(np.float32).reshape(3, 96)
    check_exact_with_litert(data, [{"x": ties}, {"x": wild}], tmp_path)


@pytest.mark.parametrize("in_type,out_type", [
    ("INT8", "INT8"), ("INT8", "UINT8"), ("UINT8", "INT8"), ("UINT8", "UINT8"), ("INT8", "INT16"),
    ("UINT8", "INT16"), ("INT16", "INT8"), ("INT16", "INT16")])
@pytest.mark.parametrize("in_scale,out_scale", [(0.05, 0.037), (0.002, 0.5), (0.4, 0.003)])
def test_requantize(in_type, out_type, in_scale, out_scale, tmp_path):
    in_zp = {"INT8": -7, "UINT8": 131, "INT16": 0}[in_type]
    out_zp = {"INT8": 12, "UINT8": 120, "INT16": 0}[out_type]
    data = one_op("QUANTIZE", in_type, out_type, (in_scale, in_zp), (out_scale, out_zp))
    check_exact_with_litert(data, int_feeds(in_type), tmp_path)


def test_uint8_io_model(tmp_path):
    """uint8 in -> int8 -> ADD (int8) -> uint8 out: how converters wrap int8 models for uint8 I/O."""
    m = ModelBuilder()
    x = m.input("x", [2, 96], "UINT8", [-1, 96], quant=([0.02], [128], 0))
    x8 = m.tensor("x8", [2, 96], "INT8", [-1, 96], quant=([0.02], [0], 0))
    c = m.const("c", RNG.integers(-128, 128, size=(96,)).astype(np.int8), quant=([0.01], [-3], 0))
    s = m.tensor("s", [2, 96], "INT8", [-1, 96], quant=([0.03], [-10], 0))
    y = m.tensor("y", [2, 96], "UINT8", [-1, 96], quant=([0.03], [118], 0))
    m.op("QUANTIZE", [x], [x8])
    m.op("ADD", [x8, c], [s], "AddOptions", FusedActivationFunction=1)
    m.op("QUANTIZE", [s], [y])
    m.output(y)
    check_exact_with_litert(m.finish(), int_feeds("UINT8"), tmp_path)


@pytest.mark.parametrize("dtype,scale,zp", [("INT8", 0.05, 3), ("UINT8", 0.3, 131), ("INT16", 0.00123, 0),
                                            ("INT8", 13.7, -128)])
def test_dequantize(dtype, scale, zp, tmp_path):
    data = one_op("DEQUANTIZE", dtype, "FLOAT32", (scale, zp), None)
    check_exact_with_litert(data, int_feeds(dtype), tmp_path)


def test_dequantize_per_channel_constant(tmp_path):
    """Per-channel int8 weights folded at import (``PerChannelDequantize``), added to a float input."""
    m = ModelBuilder()
    x = m.input("x", [2, 3, 4], "FLOAT32", [-1, 3, 4])
    w = m.const("w", RNG.integers(-128, 128, size=(3, 4)).astype(np.int8),
                quant=([0.5, 0.013, 0.0071], [0, 0, 0], 0))
    wf = m.tensor("wf", [3, 4])
    y = m.tensor("y", [2, 3, 4], signature=[-1, 3, 4])
    m.op("DEQUANTIZE", [w], [wf])
    m.op("ADD", [x, wf], [y], "AddOptions")
    m.output(y)
    feeds = [{"x": np.zeros((2, 3, 4), np.float32)}, {"x": RNG.standard_normal((3, 3, 4)).astype(np.float32)}]
    check_exact_with_litert(m.finish(), feeds, tmp_path)


def test_requantize_int16_to_uint8_refused():
    data = one_op("QUANTIZE", "INT16", "UINT8", (0.001, 0), (0.05, 128))
    with pytest.raises(ConversionError, match="QUANTIZE from INT16 to UINT8 is not supported"):
        convert(data)


def test_quantize_int16_zero_point_refused():
    data = one_op("QUANTIZE", "FLOAT32", "INT16", None, (0.001, 5))
    with pytest.raises(ConversionError, match="TFLite's QUANTIZE requires 0 for int16"):
        convert(data)
