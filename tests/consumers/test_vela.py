"""Vela, Arm's Ethos-U compiler, as a real consumer of the integer TFLite samples' ``.tosa``.

Each int8 and int16 sample is converted with ``tosaconv convert`` (the dynamic-batch one with its batch
symbol bound) and compiled by Vela 5.2 for the Ethos-U85-256. A ``.tosa`` has no CPU fallback, so every
operator must land on the NPU (``NPU operators = N (100.0%)``, no CPU operators), and the summary CSV must
carry a ``cycles_total`` estimate. ``int8_float_io`` is left out: its float QUANTIZE / DEQUANTIZE edges are
float ops Vela rejects until an integer-I/O option removes them.

Also checked: the helper's failure path (Vela's rejection of a float program is an error, not a pass).
"""
from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from tests.vela_tools import VelaError, compile_with_vela, layer_cycles
from tosaconv.cli import cli

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models", "tflite")
INTEGER_SAMPLES = {"int8_cnn": [], "uint8_io": [], "int16x8": [], "int8_dynamic_batch": ["--bind", "image.0=1"]}


def _convert(name: str, tmp_path, extra=()) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = str(tmp_path / f"{name}.tosa")
    r = CliRunner().invoke(cli, ["convert", os.path.join(SAMPLES, f"{name}.tflite"), "-o", out, *extra])
    assert r.exit_code == 0, r.output
    return out


@pytest.mark.parametrize("name", sorted(INTEGER_SAMPLES))
def test_integer_sample_runs_entirely_on_the_npu(name, tmp_path):
    result = compile_with_vela(_convert(name, tmp_path, INTEGER_SAMPLES[name]), tmp_path / "vela",
                               verbose_performance=True)
    assert result.cpu_ops == 0 and result.npu_ops > 0
    assert result.npu_percent == 100.0
    assert result.cycles_total > 0
    layers = layer_cycles(result.stdout)
    assert layers and all(cycles >= 0 for _, _, cycles, _ in layers)


def test_a_float_program_is_reported_as_a_vela_failure(tmp_path):
    with pytest.raises(VelaError, match="vela exited 1 on small_cnn.tosa: .*Compilation failed.*not supported"):
        compile_with_vela(_convert("small_cnn", tmp_path), tmp_path / "vela")


@pytest.mark.parametrize("name", ["int8_cnn", "int16x8"])
def test_npu_fast_samples_run_on_the_npu_in_fewer_cycles(name, tmp_path):
    """--npu-fast's single-RESCALE ADD inputs and FULLY_CONNECTED let Vela fuse what the exact forms keep
    apart; the estimate must drop, with every operator still on the NPU."""
    exact = compile_with_vela(_convert(name, tmp_path / "exact"), tmp_path / "exact" / "vela")
    fast = compile_with_vela(_convert(name, tmp_path / "fast", ["--npu-fast"]), tmp_path / "fast" / "vela")
    assert fast.cpu_ops == 0 and fast.npu_percent == 100.0
    assert fast.cycles_total < exact.cycles_total
