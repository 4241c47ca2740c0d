"""Quantized FILL (int8, uint8, int16) against LiteRT, bit for bit: a runtime value and a constant one,
and unequal value/output quantization refused as fill.cc refuses it."""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, check_exact_with_litert, convert
from tosaconv.diagnostics import ConversionError

NP = {"INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16}
QUANT = {"INT8": ([0.05], [-3], 0), "UINT8": ([0.05], [131], 0), "INT16": ([0.002], [0], 0)}


def fill_model(dtype, const_value=None, out_q=None) -> bytes:
    m = ModelBuilder()
    dims = m.const("dims", np.array([2, 3, 4], np.int32))
    if const_value is None:
        v = m.input("v", [], dtype, quant=QUANT[dtype])
    else:
        v = m.const("v", np.array(const_value, NP[dtype]), dtype, quant=QUANT[dtype])
    y = m.tensor("y", [2, 3, 4], dtype, quant=out_q or QUANT[dtype])
    m.op("FILL", [dims, v], [y])
    m.output(y)
    return m.finish()


@pytest.mark.parametrize("dtype", ["INT8", "UINT8", "INT16"])
def test_fill_runtime_value(dtype, tmp_path):
    info = np.iinfo(NP[dtype])
    feeds = [{"v": np.array(v, NP[dtype])} for v in (info.min, info.max, 7)]
    check_exact_with_litert(fill_model(dtype), feeds, tmp_path)


@pytest.mark.parametrize("dtype,value", [("INT8", -100), ("UINT8", 200), ("INT16", -30000)])
def test_fill_constant_value(dtype, value, tmp_path):
    check_exact_with_litert(fill_model(dtype, value), [{}], tmp_path)


def test_fill_requantizing_refused():
    with pytest.raises(ConversionError, match="TFLite.s FILL kernel requires them equal"):
        convert(fill_model("INT8", out_q=([0.1], [-3], 0)))
