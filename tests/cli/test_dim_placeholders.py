"""The command line on a Paddle-style model whose input is [?, 3, ?, ?]: each ``?`` is its own symbol
(x.0, x.2, x.3), so --input-shape and --bind give the axes different sizes, and the emitted .tosa run
by ``tosaconv run`` matches onnxruntime."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from tests.importers.onnx.test_dim_placeholders import paddle_conv_model


def _onnxruntime(path, x):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


@pytest.mark.parametrize("shape, how", [
    ((1, 3, 48, 192), ["--input-shape", "x=1,3,48,192"]),
    ((2, 3, 5, 31), ["--bind", "x.0=2", "--bind", "x.2=5", "--bind", "x.3=31"]),
])
def test_question_mark_dims_bind_independently(cli, tmp_path, shape, how):
    model = tmp_path / "paddle.onnx"
    onnx.save(paddle_conv_model(), str(model))
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    r = cli("convert", model, "-o", "m.tosa", *how)
    assert r.exit_code == 0, r.stderr
    r = cli("run", "m.tosa", "--inputs", "in.npz", "-o", "out.npz")
    assert r.exit_code == 0, r.stderr
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["y"], _onnxruntime(model, x), rtol=1e-4, atol=1e-5)
