"""A TFLite CONV_2D whose input channel dim is dynamic (shape_signature -1 on axis 3).

It crashed with exit 1 when ``==`` on symbolic dims raised. Now the importer records the constraint
``x.3 == 3`` (input channels = filter channels): the model converts, matches LiteRT at two bindings,
and binding x.3 to anything else is refused with exit 4 and the constraint's provenance.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from tosaconv.diagnostics import EXIT_SHAPE
from tosaconv.importers.errors import converting
from tosaconv.importers.tflite.reader import ConvertError
from tosaconv.ir.location import Location
from tosaconv.symbolic.expr import sym

from .harness import ModelBuilder, check_with_litert, rand

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def conv_dynamic_channels() -> bytes:
    m = ModelBuilder()
    x = m.input("x", [1, 6, 7, 3], signature=[1, -1, -1, -1])
    w = m.const("w", np.random.default_rng(3).uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32))
    b = m.const("b", np.array([0.1, -0.2, 0.3, 0.0], np.float32))
    y = m.tensor("y", [1, 4, 5, 4], signature=[1, -1, -1, 4])
    m.op("CONV_2D", [x, w, b], [y], "Conv2DOptions", Padding=1, StrideH=1, StrideW=1,
         DilationHFactor=1, DilationWFactor=1)
    m.output(y)
    return m.finish()


def test_dynamic_channels_convert_and_match_litert():
    graph = check_with_litert(conv_dynamic_channels(), [{"x": rand(1, 6, 7, 3)}, {"x": rand(1, 9, 4, 3, seed=1)}])
    assert [c.text() for c in graph.ledger.entries if "channels" in c.provenance.reason] == ["x.3 == 3"]


def depthwise_dynamic_channels() -> bytes:
    m = ModelBuilder()
    x = m.input("x", [1, 6, 7, 3], signature=[1, -1, -1, -1])
    w = m.const("w", np.random.default_rng(4).uniform(-1, 1, (1, 3, 3, 3)).astype(np.float32))
    b = m.const("b", np.array([0.1, -0.2, 0.3], np.float32))
    y = m.tensor("y", [1, 6, 7, 3], signature=[1, -1, -1, 3])
    m.op("DEPTHWISE_CONV_2D", [x, w, b], [y], "DepthwiseConv2DOptions", Padding=0, StrideH=1, StrideW=1,
         DepthMultiplier=1, DilationHFactor=1, DilationWFactor=1)
    m.output(y)
    return m.finish()


def test_depthwise_with_dynamic_channels_matches_litert():
    graph = check_with_litert(depthwise_dynamic_channels(), [{"x": rand(1, 6, 7, 3)}, {"x": rand(1, 5, 9, 3, seed=2)}])
    assert "x.3 == 3" in [c.text() for c in graph.ledger.entries]


def _tosaconv(tmp_path, *args):
    env = {**os.environ, "PYTHONPATH": REPO}
    return subprocess.run([sys.executable, "-m", "tosaconv", *map(str, args)], cwd=tmp_path, capture_output=True,
                          text=True, env=env, timeout=300)


def test_wrong_channel_binding_is_a_shape_error_not_a_crash(tmp_path):
    (tmp_path / "m.tflite").write_bytes(conv_dynamic_channels())
    ok = _tosaconv(tmp_path, "convert", "m.tflite", "-o", "a.tosa", "--input-shape", "x=1,6,7,3")
    assert ok.returncode == 0, ok.stderr
    bad = _tosaconv(tmp_path, "convert", "m.tflite", "-o", "b.tosa", "--input-shape", "x=1,6,7,4")
    assert bad.returncode == EXIT_SHAPE, bad.stderr
    assert "x.3 == 3 does not hold" in bad.stderr and "CONV_2D input channels = filter channels" in bad.stderr


def test_an_undecidable_ordering_is_a_shape_error_naming_the_op():
    loc = Location("CONV_2D", "conv_a", "tflite")
    try:
        with converting(loc, ConvertError):
            _ = sym("h") < sym("w")
    except Exception as e:   # noqa: BLE001 (the type and its exit code are what is checked)
        err = e
    assert getattr(err, "exit_code", None) == EXIT_SHAPE
    assert err.diagnostics[0].code == "E-UNDECIDED-DIM"
    assert "conv_a" in err.diagnostics[0].message and "cannot decide whether h < w" in err.diagnostics[0].message
