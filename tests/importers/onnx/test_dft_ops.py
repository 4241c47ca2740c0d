"""ONNX DFT (opsets 17 and 20) and STFT, lowered to TOSA FFT2D/RFFT2D (EXT-FFT) or to a MATMUL DFT.

Every form is compared with onnxruntime at two batch bindings, through the
symbolic program and the specialized, emitted and read-back ``.tosa``, in each
``--dft`` mode that applies; the official reference model runs the emitted
program. Tolerance: a float32 DFT of n terms of size <= 2 errs by about
``n * 2 * eps32 * log2(n)`` at most for FFTs and ``n * 2 * eps32`` summed
terms for the matrix form; 2e-4 absolute covers n <= 64 with margin
(``sqrt(n) * 2 * n * 1.2e-7`` ~ 1.2e-4 at n = 64). The refusals (a length
that is not a power of two with ``--dft fft``, inverse with onesided, a
runtime dft_length) are checked by message.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tosaconv import api
from tosaconv.diagnostics import TosaconvError
from tosaconv.lowering.dft import dft_mode

from .harness import (F32, I64, check_reference_model, check_with_onnxruntime, const, convert, info,
                      make_model, rand, run_graph, specialize_and_emit)

ATOL, RTOL = 2e-4, 1e-4


def _dft_model(shape_tail, c: int, opset: int, n_out=None, axis=None, **attrs):
    """DFT of a ``[batch, *shape_tail, c]`` input; ``n_out`` a constant dft_length; ``axis`` per opset."""
    inits, names = [], ["x", ""]
    if n_out is not None:
        inits.append(const("n", np.array(n_out, np.int64)))
        names[1] = "n"
    if opset >= 20 and axis is not None:
        inits.append(const("axis", np.array(axis, np.int64)))
        names.append("axis")
    elif axis is not None:
        attrs["axis"] = axis
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node("DFT", names, ["y"], name="dft", **attrs)
    x = info("x", F32, ["batch", *shape_tail, c])
    return make_model([node], [x], [info("y", F32, None)], inits, opset=opset)


def _check(model, tails, c: int, mode: str, tmp_path):
    with dft_mode(mode):
        graph = check_with_onnxruntime(model, [{"x": rand(b, *tails, c, seed=b)} for b in (1, 3)],
                                       rtol=RTOL, atol=ATOL)
    feeds = {"x": rand(2, *tails, c, seed=9)}
    static, tosa = specialize_and_emit(graph, {"x": feeds["x"].shape})
    check_reference_model(tosa, static, feeds, run_graph(static, feeds), tmp_path)
    return static


def _ops(graph) -> set:
    return {op.op.name for op in graph.ops}


CASES = [  # (opset, input tail, c, attrs, dft_length, axis)
    (17, (16,), 1, {"onesided": 1}, None, 1),
    (17, (16,), 1, {}, None, 1),
    (17, (8,), 2, {}, None, 1),
    (17, (8,), 2, {"inverse": 1}, None, 1),
    (17, (8, 3), 1, {"onesided": 1}, None, 1),
    (20, (3, 16), 2, {}, None, -2),
    (20, (4, 8), 1, {"onesided": 1}, None, 1),
    (20, (12,), 1, {"onesided": 1}, 16, None),
    (20, (12,), 2, {"inverse": 1}, 8, None),
    (20, (10,), 1, {}, None, None),
]


@pytest.mark.parametrize("mode", ["auto", "matmul"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_dft_matches_onnxruntime(case, mode, tmp_path):
    opset, tails, c, attrs, n_out, axis = CASES[case]
    static = _check(_dft_model(tails, c, opset, n_out, axis, **attrs), tails, c, mode, tmp_path)
    n = n_out or tails[0 if axis in (1, None, -2) and len(tails) == 1 else (0 if axis == 1 else 1)]
    uses_fft = bool(_ops(static) & {"FFT2D", "RFFT2D"})
    assert uses_fft == (mode == "auto" and n & (n - 1) == 0)
    assert ("MATMUL" in _ops(static)) != uses_fft


def test_real_onesided_power_of_two_uses_rfft2d(tmp_path):
    static = _check(_dft_model((16,), 1, 17, onesided=1), (16,), 1, "fft", tmp_path)
    assert "RFFT2D" in _ops(static) and "FFT2D" not in _ops(static)


def test_dft_fft_mode_refuses_a_length_that_is_not_a_power_of_two():
    with dft_mode("fft"), pytest.raises(TosaconvError, match=r"DFT 'dft' has length 10, which is not a power "
                                                             r"of two.*use --dft matmul"):
        convert(_dft_model((10,), 1, 17))


@pytest.mark.parametrize("mode", ["auto", "matmul"])
@pytest.mark.parametrize("bins,n_out,n", [(5, None, 8), (4, 7, 7), (9, 16, 16), (3, 4, 4)])
def test_inverse_onesided_is_an_irfft(bins, n_out, n, mode, tmp_path):
    # opset 20: a one-sided spectrum to n real samples (numpy's irfft); onnxruntime as the judge
    static = _check(_dft_model((bins,), 2, 20, n_out, inverse=1, onesided=1), (bins,), 2, mode, tmp_path)
    assert static.outputs[0].type.shape == (2, n, 1)
    assert bool(_ops(static) & {"FFT2D"}) == (mode == "auto" and n & (n - 1) == 0)


def test_irfft_with_more_bins_than_it_needs_follows_onnx():
    # 5 bins for 7 samples: ONNX's reference (numpy's irfft) uses the first 7 // 2 + 1 = 4 bins;
    # onnxruntime 1.2x reads all 5 differently, so ONNX's own evaluator is the judge here
    from onnx.reference import ReferenceEvaluator
    model = _dft_model((5,), 2, 20, 7, inverse=1, onesided=1)
    x = rand(2, 5, 2, seed=3)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    for mode in ("auto", "matmul"):
        with dft_mode(mode):
            got = run_graph(convert(model), {"x": x})[0]
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_irfft_of_real_data_is_refused():
    with pytest.raises(TosaconvError, match=r"DFT 'dft': inverse with onesided takes a complex"):
        convert(_dft_model((8,), 1, 20, inverse=1, onesided=1))


def test_dft_runtime_length_is_refused():
    node = helper.make_node("DFT", ["x", "n"], ["y"], name="dft")
    model = make_model([node], [info("x", F32, [1, 8, 1]), info("n", I64, [])], [info("y", F32, None)])
    with pytest.raises(TosaconvError, match=r"dft_length: input dft_length or axis not a constant"):
        convert(model)


def _stft_model(length: int, step: int, window: bool, c: int = 1, onesided: int = 1):
    inits = [const("step", np.array(step, np.int64))]
    names = ["x", "step"]
    if window:
        inits.append(const("w", np.hanning(length).astype(np.float32)))
        names.append("w")
    else:
        inits.append(const("len", np.array(length, np.int64)))
        names += ["", "len"]
    node = helper.make_node("STFT", names, ["y"], name="stft", onesided=onesided)
    return make_model([node], [info("x", F32, ["batch", 40, c])], [info("y", F32, None)], inits, opset=17)


@pytest.mark.parametrize("mode", ["auto", "matmul"])
@pytest.mark.parametrize("length,step,window,c,onesided", [(16, 4, True, 1, 1), (12, 5, True, 1, 1),
                                                           (8, 8, False, 2, 0), (16, 3, False, 1, 0)])
def test_stft_matches_onnxruntime(length, step, window, c, onesided, mode, tmp_path):
    model = _stft_model(length, step, window, c, onesided)
    static = _check(model, (40,), c, mode, tmp_path)
    assert bool(_ops(static) & {"FFT2D", "RFFT2D"}) == (mode == "auto" and length & (length - 1) == 0)


def test_stft_runtime_frame_step_is_refused():
    node = helper.make_node("STFT", ["x", "step", "", "len"], ["y"], name="stft")
    model = make_model([node], [info("x", F32, [1, 32, 1]), info("step", I64, [])], [info("y", F32, None)],
                       [const("len", np.array(8, np.int64))])
    with pytest.raises(TosaconvError, match=r"frame_step: input frame_step or frame_length not a constant"):
        convert(model)


def _tosaconv(*args, cwd):
    import os
    import subprocess
    import sys
    from pathlib import Path
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3]))
    return subprocess.run([sys.executable, "-m", "tosaconv", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_command_line_dft_option_chooses_the_extension(tmp_path):
    import json

    import onnx
    onnx.save(_dft_model((16,), 1, 17, onesided=1), tmp_path / "m.onnx")
    seen = {}
    for mode in ("auto", "matmul"):
        r = _tosaconv("convert", "m.onnx", "-o", f"{mode}.tosa", "--bind", "batch=2", "--dft", mode,
                      "--report", f"{mode}.json", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        seen[mode] = json.loads((tmp_path / f"{mode}.json").read_text())["tosa"]["extensions"]
    assert seen == {"auto": ["EXT-FFT"], "matmul": []}
    onnx.save(_dft_model((10,), 1, 17), tmp_path / "odd.onnx")
    r = _tosaconv("convert", "odd.onnx", "-o", "odd.tosa", "--dft", "fft", cwd=tmp_path)
    assert r.returncode == 3 and "use --dft matmul" in r.stdout + r.stderr
    r = _tosaconv("convert", "m.onnx", "-o", "x.tosa", "--dft", "fast", cwd=tmp_path)
    assert r.returncode == 2 and "--dft" in r.stderr


def test_api_load_takes_the_dft_option(tmp_path):
    import onnx
    onnx.save(_dft_model((16,), 1, 17, onesided=1), tmp_path / "m.onnx")
    ops = {mode: _ops(api.load(str(tmp_path / "m.onnx"), dft=mode)) for mode in ("auto", "matmul")}
    assert "RFFT2D" in ops["auto"] and "MATMUL" not in ops["auto"]
    assert "MATMUL" in ops["matmul"] and not ops["matmul"] & {"FFT2D", "RFFT2D"}


def test_symbolic_transform_length_is_refused():
    node = helper.make_node("DFT", ["x"], ["y"], name="dft")
    model = make_model([node], [info("x", F32, [1, "n", 1])], [info("y", F32, None)])
    with pytest.raises(TosaconvError, match=r"DFT 'dft': the transformed axis has a symbolic length n; .*"
                                            r"must give that axis a static size"):
        convert(model)
    node = helper.make_node("STFT", ["x", "step", "", "len"], ["y"], name="stft")
    model = make_model([node], [info("x", F32, [1, "t", 1])], [info("y", F32, None)],
                       [const("step", np.array(4, np.int64)), const("len", np.array(8, np.int64))])
    with pytest.raises(TosaconvError, match=r"STFT: the signal length t is symbolic"):
        convert(model)


@pytest.mark.parametrize("mode", ["auto", "matmul"])
def test_complex_onesided_keeps_the_first_bins(mode):
    # onnxruntime refuses onesided complex input; ONNX's own evaluator defines it (the first n/2 + 1 bins)
    from onnx.reference import ReferenceEvaluator
    model = _dft_model((8,), 2, 17, None, 1, onesided=1)
    x = rand(2, 8, 2, seed=4)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    with dft_mode(mode):
        got = run_graph(convert(model), {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
