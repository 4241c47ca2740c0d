"""``tosaconv`` runs OpenBLAS on one thread for commands that run no interpreter (start-up, issue 13).

The choice is made from the command line before numpy is imported (:func:`tosaconv.__main__._blas_threads`);
a user's own ``OPENBLAS_NUM_THREADS`` wins. The bytes of a conversion do not depend on it: the
sample models converted with one and with two BLAS threads give the same ``.tosa``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tosaconv.__main__ import _blas_threads

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("argv, expected", [
    (["convert", "m.onnx", "-o", "m.tosa"], "1"),
    (["--debug", "convert", "m.onnx", "-o", "m.tosa"], "1"),
    (["import", "m.onnx", "-o", "m.tosair"], "1"),
    (["specialize", "m.tosair", "--bind", "n=2", "-o", "m.tosa"], "1"),
    (["convert", "m.onnx", "-o", "m.tosa", "--run"], None),
    (["convert", "m.onnx", "-o", "m.tosa", "--outputs", "o.npz"], None),
    (["convert", "m.onnx", "-o", "m.tosa", "--outputs=o.npz"], None),
    (["run", "m.onnx"], None),
    (["--version"], None),
])
def test_one_blas_thread_only_without_a_run(monkeypatch, argv, expected):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setattr(sys, "modules", {k: v for k, v in sys.modules.items() if k != "numpy"})
    _blas_threads(argv)
    assert os.environ.get("OPENBLAS_NUM_THREADS") == expected


def test_the_users_setting_wins(monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    monkeypatch.setattr(sys, "modules", {k: v for k, v in sys.modules.items() if k != "numpy"})
    _blas_threads(["convert", "m.onnx", "-o", "m.tosa"])
    assert os.environ["OPENBLAS_NUM_THREADS"] == "2"


@pytest.mark.parametrize("model, binds", [("sample_models/tiny_transformer.onnx", ["--bind", "batch=2", "--bind", "seq=16"]),
                                          ("sample_models/small_cnn.onnx", ["--bind", "N=2", "--bind", "H=32", "--bind", "W=32"]),
                                          ("sample_models/tflite/small_cnn.tflite", [])])
def test_the_bytes_do_not_depend_on_the_blas_threads(tmp_path, model, binds):
    outs = []
    for threads in ("1", "2"):
        out = tmp_path / f"m{threads}.tosa"
        env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": threads}
        proc = subprocess.run([sys.executable, "-m", "tosaconv", "convert", model, *binds, "-o", str(out), "-q"],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
