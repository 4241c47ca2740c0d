"""The integer LayerNorm cones (:mod:`tosaconv.importers.onnx.ops.qdq_layernorm`) against onnxruntime and
against the exact math.

Models are QDQ LayerNorms as onnxruntime's quantizer writes them (:mod:`.layernorm_models`): every stage
is a model output, so each integer cone is checked on its own. Two references:

* onnxruntime with graph optimizations disabled (its optimized u8s8 kernels saturate on some CPUs), which
  computes each cone in float32 and quantizes it: at most one unit apart, on few elements;
* the exact cone in float64 on the integer stages before it (``x``, ``var_eps``): at most one unit
  apart, only next to a rounding tie (the bound the module's docstring derives).

The official reference model runs the emitted program bit-exactly like our interpreter, and the
program holds no float op but the input's quantization (which ``--int-io`` removes).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import numpy_helper

from tosaconv import api
from tosaconv.importers.onnx.ops.qdq_layernorm import MAX_ROW
from tosaconv.importers.onnx.ops.qdq_layernorm_whole import FULL_MAX_ERROR

from .harness import check_reference_model, convert, run_graph, run_onnxruntime, specialize_and_emit
from .layernorm_models import I8, NUMPY, STAGES, U8, split_layernorm, whole_layernorm

# (activation type, shape, eps, transpose, square): row lengths 32..768, both squarings, the Transpose
# of PP-OCRv6_rec_small, eps from 1e-12 (the variance's quantization decides) to 0.1
CASES = [
    (I8, (2, 5, 32), 1e-5, False, "Pow"), (U8, (2, 5, 32), 1e-5, False, "Mul"),
    (U8, (1, 120, 9), 1e-6, True, "Pow"), (I8, (1, 120, 9), 1e-6, True, "Pow"),
    (I8, (3, 256), 1e-5, False, "Mul"), (U8, (3, 256), 0.1, False, "Pow"),
    (U8, (2, 2, 768), 1e-12, False, "Pow"), (I8, (2, 2, 768), 1e-5, False, "Mul"),
    (I8, (1, 64, 5), 0.1, True, "Mul"),
]
MAX_DIFFERING = 0.02     # share of elements one unit away from onnxruntime


def _ids(case) -> str:
    act, shape, eps, transpose, square = case
    return f"{'u8' if act == U8 else 's8'}-{'x'.join(map(str, shape))}-eps{eps:g}-{square}{'-T' if transpose else ''}"


def _input(shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * rng.uniform(0.1, 3.0, shape)).astype(np.float32)


def _float_ops(graph) -> list:
    static = api.specialize(graph, {})
    return [str(op) for op in static.ops if op.location.op_type != "QuantizeLinear" and op.op.name != "CONST"
            and any(getattr(v.type, "dtype", None) is not None and v.type.dtype.is_float
                    for v in [*op.operands, *op.results])]


@pytest.fixture(scope="module", params=CASES, ids=_ids)
def case(request):
    act, shape, eps, transpose, square = request.param
    model, _ = split_layernorm(act, shape, eps=eps, transpose=transpose, square=square, seed=len(shape) + shape[-1])
    return model, convert(model), shape, transpose


def test_layernorm_is_all_integer(case):
    model, graph, _, _ = case
    assert not _float_ops(graph), _float_ops(graph)


@pytest.mark.parametrize("seed", [1, 2])
def test_layernorm_agrees_with_onnxruntime(case, seed):
    model, graph, shape, _ = case
    feeds = {"x": _input(shape, seed)}
    got, want = run_graph(graph, feeds), run_onnxruntime(model, feeds, optimize=False)
    for stage, g, w in zip(STAGES, got, want):
        diff = np.abs(g.astype(w.dtype).astype(np.int64) - w.astype(np.int64))
        assert diff.max() <= 1, f"{stage}: max |diff| {diff.max()} vs onnxruntime"
        assert (diff > 0).mean() <= MAX_DIFFERING, f"{stage}: {(diff > 0).mean():.1%} differ from onnxruntime"


@pytest.mark.parametrize("seed", [3, 4])
def test_layernorm_within_one_unit_of_exact_math(case, seed):
    """Each cone against float64 math on the integer stages it reads; one unit off only near a tie."""
    model, graph, shape, transpose = case
    dtype = NUMPY[_act(model)]           # uint8 results come back as their int8 bits
    got = {s: v.astype(dtype) for s, v in zip(STAGES, run_graph(graph, {"x": _input(shape, seed)}))}
    qp = _qparams(model)
    x = _dequantized(got, "x", qp)
    if transpose:
        x = np.swapaxes(x, 1, -1)
    d = x - x.mean(axis=-1, keepdims=True)
    var_eps = _dequantized(got, "var_eps", qp)
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = {"var": (d * d).mean(axis=-1, keepdims=True), "norm": d / np.sqrt(var_eps)}
    for stage, value in exact.items():
        scale, zp = qp[stage]
        real = value / scale + zp
        ok = np.broadcast_to(np.isfinite(real), got[stage].shape)
        want = np.clip(np.rint(real), np.iinfo(dtype).min, np.iinfo(dtype).max)
        diff = np.abs(got[stage].astype(np.float64) - want)[ok]
        assert diff.max() <= 1, f"{stage}: max |diff| {diff.max()} vs the exact value rounded"
        near_tie = np.abs(np.abs(real - np.floor(real)) - 0.5) < 2 ** -6
        assert np.all(np.broadcast_to(near_tie, ok.shape)[ok][diff > 0]), \
            f"{stage}: a unit off away from a rounding tie"


def _qparams(model) -> dict:
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return {s: (np.float64(inits[s + "_s"]), int(inits[s + "_z"])) for s in STAGES}


def _act(model) -> int:
    return model.graph.output[0].type.tensor_type.elem_type


def _dequantized(got: dict, stage: str, qp: dict) -> np.ndarray:
    scale, zp = qp[stage]
    return (got[stage].astype(np.float64) - zp) * scale


def test_layernorm_bit_exact_on_reference_model(case, tmp_path):
    _, graph, shape, _ = case
    feeds = {"x": _input(shape, 5)}
    static, tosa = specialize_and_emit(graph, {"x": shape})
    check_reference_model(tosa, static, feeds, run_graph(static, feeds), tmp_path)


@pytest.mark.parametrize("act", [I8, U8], ids=["s8", "u8"])
def test_zero_variance_saturates_like_onnxruntime(act):
    """A row whose ``var + eps`` quantizes to 0 divides by zero in float: +-inf quantizes to the bound of
    its sign, 0/0 (a constant row) to the type's minimum, as onnxruntime does; so here."""
    model, _ = split_layernorm(act, (2, 3, 64), eps=1e-12, seed=3)
    graph = convert(model)
    x = _input((2, 3, 64), 6)
    x[0, 1, :] = 0.5                  # a constant row: 0 / 0
    x[1, 2, :] = 0.5
    x[1, 2, 5] = 0.6                  # one element off: +-inf
    got, want = run_graph(graph, {"x": x}), run_onnxruntime(model, {"x": x}, optimize=False)
    norm = STAGES.index("norm")
    assert want[norm][1, 2, 5] == np.iinfo(NUMPY[act]).max and want[norm][0, 1, 0] == np.iinfo(NUMPY[act]).min
    for stage, g, w in zip(STAGES, got, want):
        np.testing.assert_array_equal(g.astype(w.dtype), w, err_msg=stage)


def test_row_too_long_for_int32_stays_float_and_says_why():
    """A row longer than MAX_ROW could overflow the int32 sum of squares: the variance stays float, and
    the report's float islands say why."""
    model, _ = split_layernorm(I8, (1, MAX_ROW + 1), seed=1)
    graph = convert(model)
    reasons = graph.float_reasons
    assert any(loc.startswith("QuantizeLinear 'var_q'") and "could overflow the int32 sum of squares" in r
               for loc, r in reasons.items()), reasons


# -- a whole LayerNorm between DequantizeLinear and QuantizeLinear --------------------------------

WHOLE = [(I8, 32, 1e-5, "op"), (U8, 64, 1e-5, "primitives"), (U8, 256, 1e-6, "op"), (I8, 363, 1e-5, "op"),
         (I8, 128, 1e-12, "primitives"), (U8, 100, 0.01, "op"), (U8, 768, 1e-5, "op"), (I8, 512, 1e-6, "primitives"),
         (I8, 2048, 1e-5, "op")]


def _whole_ids(case) -> str:
    act, n, eps, spelled = case
    return f"{'u8' if act == U8 else 's8'}-{n}-eps{eps:g}-{spelled}"


@pytest.fixture(scope="module", params=WHOLE, ids=_whole_ids)
def whole(request):
    act, n, eps, spelled = request.param
    model = whole_layernorm(act, (2, 5, n), eps=eps, spelled=spelled, seed=n)
    return model, convert(model), (2, 5, n), eps


def _rows(shape, seed: int) -> np.ndarray:
    """Rows of different spreads: one constant (its output is beta exactly), one at the largest variance
    (every element at one end of the int8 range), one with a single element off by a little."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * rng.uniform(0.05, 2.0, shape[:-1] + (1,))).astype(np.float32)
    x[0, 0, :] = 0.25
    x[1, 1, :] = np.where(np.arange(shape[-1]) % 2, 10.0, -10.0)
    x[1, 2, :] = 0.25
    x[1, 2, 3] = 0.3
    return x


def test_whole_layernorm_is_all_integer(whole):
    assert not _float_ops(whole[1]), _float_ops(whole[1])


@pytest.mark.parametrize("seed", [1, 2])
def test_whole_layernorm_agrees_with_onnxruntime(whole, seed):
    model, graph, shape, _ = whole
    feeds = {"x": _rows(shape, seed)}
    (_, got), (_, want) = run_graph(graph, feeds), run_onnxruntime(model, feeds, optimize=False)
    diff = np.abs(got.astype(want.dtype).astype(np.int64) - want.astype(np.int64))
    assert diff.max() <= 1 and (diff > 0).mean() <= MAX_DIFFERING, (diff.max(), (diff > 0).mean())


@pytest.mark.parametrize("seed", [3, 4])
def test_whole_layernorm_within_one_unit_of_exact_math(whole, seed):
    """float64 LayerNorm of the quantized input; one unit off only within FULL_MAX_ERROR of a tie."""
    model, graph, shape, eps = whole
    dtype = NUMPY[_act(model)]
    xq, y = (v.astype(dtype) for v in run_graph(graph, {"x": _rows(shape, seed)}))
    inits = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    x = (xq - inits["x_z"]) * inits["x_s"]
    d = x - x.mean(axis=-1, keepdims=True)
    norm = d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + eps)
    real = (norm * inits["gamma"] + inits["beta"]) / inits["y_s"] + inits["y_z"]
    want = np.clip(np.rint(real), np.iinfo(dtype).min, np.iinfo(dtype).max)
    diff = np.abs(y.astype(np.float64) - want)
    assert diff.max() <= 1, f"max |diff| {diff.max()} vs the exact value rounded"
    near_tie = np.abs(np.abs(real - np.floor(real)) - 0.5) < FULL_MAX_ERROR
    assert np.all(near_tie[diff > 0]), "a unit off away from a rounding tie"


def test_whole_layernorm_bit_exact_on_reference_model(whole, tmp_path):
    _, graph, shape, _ = whole
    feeds = {"x": _rows(shape, 5)}
    static, tosa = specialize_and_emit(graph, {"x": shape})
    check_reference_model(tosa, static, feeds, run_graph(static, feeds), tmp_path)


def test_whole_layernorm_row_too_long_stays_float_and_says_why():
    graph = convert(whole_layernorm(I8, (1, 2, MAX_ROW + 1)))
    assert _float_ops(graph)
    assert any(loc.startswith("LayerNormalization") and "could overflow the int32 sum of squares" in r
               for loc, r in graph.float_reasons.items()), graph.float_reasons
