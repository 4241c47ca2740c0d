"""Quantized FULLY_CONNECTED and BATCH_MATMUL, bit-exact against LiteRT's reference kernels and
the TOSA reference model (int8 per-tensor and per-channel, uint8, int16x8), with a dynamic batch
fed at two sizes."""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.diagnostics import TosaconvError
from tests.importers.tflite.harness import ModelBuilder, check_exact_with_litert, convert, run_litert
from fractions import Fraction

from tosaconv.importers.tflite.ops.q_matmul import _plan
from tests.importers.tflite.qconv_models import (QModel, bias_probe, bias_values, double_real, fc_bias_model, mbqm,
                                                    out_scale, qdata, round_double_product, single_round,
                                                    weight_scales)

FORMS = ["int8", "uint8", "int16x8"]
ZPS = {"int8": (7, -9), "uint8": (100, 140), "int16x8": (0, 0)}


def check(data, feeds, tmp_path):
    check_exact_with_litert(data, feeds, tmp_path)
    assert len(np.unique(run_litert(data, feeds[0])[0])) >= 8


def fully_connected(form, per_channel=False, keep=False, act=0, k=24, o=7, lead=(3,), o_scale=None, w_zp=0):
    in_zp, out_zp = ZPS[form]
    q = QModel(form, in_scale=0.04, in_zp=in_zp, out_zp=out_zp)
    x = q.input([1, *lead, k], [-1, *lead, k])
    ws = weight_scales(o, per_channel, seed=3)
    w = q.weights(q.weight_data([o, k], seed=4), ws, 0, zp=w_zp)
    bv, bs = bias_values(o, q.in_scale, ws, form, seed=5)
    b = q.bias(bv, bs if per_channel else [bs[0]])
    rows = int(np.prod(lead))
    shape, sig = ([1, *lead, o], [-1, *lead, o]) if keep else ([rows, o], [-1, o])
    y = q.output(shape, o_scale or out_scale(q.in_scale, ws, k, form), sig)
    q.m.op("FULLY_CONNECTED", [x, w, b], [y], "FullyConnectedOptions", version=5, KeepNumDims=keep,
           FusedActivationFunction=act)
    return q.m.finish(), q.feeds([2, *lead, k], (0,)) + q.feeds([4, *lead, k], (1,))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("keep", [False, True])
def test_fully_connected(form, keep, tmp_path):
    check(*fully_connected(form, keep=keep, w_zp=130 if form == "uint8" else 0), tmp_path)


@pytest.mark.parametrize("form", ["int8", "int16x8"])
@pytest.mark.parametrize("keep", [False, True])
def test_fully_connected_per_channel(form, keep, tmp_path):
    check(*fully_connected(form, per_channel=True, keep=keep, lead=(2, 3)), tmp_path)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("act", [1, 3])
def test_fully_connected_fused_activation(form, act, tmp_path):
    scale = 24.0 / (65535 if form == "int16x8" else 255)
    check(*fully_connected(form, act=act, o_scale=scale), tmp_path)


def test_fully_connected_int8_weight_zero_point(tmp_path):
    """The per-tensor int8 kernel subtracts the weight zero point (reference_integer_ops::FullyConnected)."""
    check(*fully_connected("int8", w_zp=3), tmp_path)


def test_fully_connected_deep(tmp_path):
    check(*fully_connected("int8", per_channel=True, k=1000, o=5), tmp_path)


def batch_matmul(form, a_shape, b_shape, out_shape, adj_x=False, adj_y=False, sig=True):
    q = QModel(form, in_scale=0.03, in_zp=ZPS[form][0], out_zp=ZPS[form][1])
    b_zp = -20 if form == "int8" else 0
    a = q.input(a_shape, [-1, *a_shape[1:]] if sig else None, name="a")
    b = q.m.input("b", b_shape, q.x_t, quant=([0.02], [b_zp], 0))
    k = a_shape[-1] if not adj_x else a_shape[-2]
    scale = out_scale(q.in_scale, [0.02], k, form, 1.0 if form == "int8" else 1 / 256)
    y = q.output(out_shape, scale, [-1, *out_shape[1:]] if sig else None)
    q.m.op("BATCH_MATMUL", [a, b], [y], "BatchMatMulOptions", version=4, AdjX=adj_x, AdjY=adj_y)
    feeds = []
    for n, seed in ((2, 0), (3, 1)):
        fa = q.feeds([n, *a_shape[1:]], (seed,), name="a")[0]
        fa["b"] = qdata(b_shape, q.np_t, b_zp, seed + 10)
        feeds.append(fa)
    return q.m.finish(), feeds


@pytest.mark.parametrize("form", ["int8", "int16x8"])
@pytest.mark.parametrize("adj_x,adj_y", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_matmul(form, adj_x, adj_y, tmp_path):
    a = [1, 4, 6] if not adj_x else [1, 6, 4]
    b = [1, 6, 5] if not adj_y else [1, 5, 6]
    data, feeds = batch_matmul(form, a, b, [1, 4, 5], adj_x, adj_y, sig=False)
    for f, n in zip(feeds, (1, 1)):
        f["a"] = f["a"][:n]
    check(data, feeds, tmp_path)


@pytest.mark.parametrize("form", ["int8", "int16x8"])
def test_batch_matmul_broadcast_dynamic_batch(form, tmp_path):
    """A [N, 2, 3, 8] x [2, 8, 4] product, N dynamic (fed as 2 and 3)."""
    check(*batch_matmul(form, [1, 2, 3, 8], [2, 8, 4], [1, 2, 3, 4]), tmp_path)


def test_hybrid_fully_connected_is_refused():
    m = ModelBuilder()
    x = m.input("x", [2, 4])
    w = m.const("w", np.ones((3, 4), np.int8), "INT8", quant=([0.1], [0], 0))
    y = m.tensor("y", [2, 3])
    m.op("FULLY_CONNECTED", [x, w, -1], [y], "FullyConnectedOptions")
    m.output(y)
    with pytest.raises(TosaconvError, match="hybrid FULLY_CONNECTED .*not supported"):
        convert(m.finish())


def test_uint8_batch_matmul_is_refused():
    data, _ = batch_matmul("uint8", [1, 2, 3], [1, 3, 2], [1, 2, 2])
    with pytest.raises(TosaconvError, match="UINT8 input and UINT8 weights is not a form"):
        convert(data)


FC_FORMS = [("int8", False), ("int8", True), ("uint8", False), ("int16x8", False), ("int16x8", True)]


@pytest.mark.parametrize("form,per_channel", FC_FORMS)
def test_multiplier_formula(form, per_channel, tmp_path):
    """Accumulators on which the all-double multiplier and GetQuantizedConvolutionMultipler's float
    product disagree (see test_q_conv): LiteRT's reference FULLY_CONNECTED uses the double one in every form."""
    data, feeds, (a, b), accs = bias_probe("FULLY_CONNECTED", form, per_channel=per_channel,
                                           rounding=round_double_product)
    assert np.any(round_double_product(accs, a) != round_double_product(accs, b))
    check_exact_with_litert(data, feeds, tmp_path)


@pytest.mark.parametrize("form,per_channel", FC_FORMS)
def test_not_gemmlowp_rounding(form, per_channel, tmp_path):
    """Accumulators where gemmlowp's two roundings (MultiplyByQuantizedMultiplier) and one rounding differ."""
    data, feeds, (a, _), accs = bias_probe("FULLY_CONNECTED", form, per_channel=per_channel,
                                           rounding=round_double_product)
    bits = 16 if form == "int16x8" else 8
    x = np.arange(-(1 << 20), 1 << 20, dtype=np.int64) * (1 << (bits - 8))
    ours = round_double_product(x, a)
    hits = x[(mbqm(x, a) != ours) & (np.abs(ours) < (1 << (bits - 1)) - 20)]
    assert hits.size >= len(accs)
    data = data.replace(accs.astype(np.int64 if bits == 16 else np.int32).tobytes(),
                        hits[:len(accs)].astype(np.int64 if bits == 16 else np.int32).tobytes())
    check_exact_with_litert(data, feeds, tmp_path)


@pytest.mark.parametrize("form,per_channel", FC_FORMS)
def test_ties_away_from_zero(form, per_channel, tmp_path):
    """Exact ties (multiplier 0.5 * 0.5 / 1.0): round() goes away from zero, not half up."""
    accs = np.array([6, -6, 2, -2, 10, -10, 14, -14, 0, 1, -1, 3, -3])
    half_up = np.floor(accs / 4 + 0.5)
    assert np.any(half_up != round_double_product(accs, 0.25))
    check_exact_with_litert(*fc_bias_model(form, accs, (0.5, 0.5, 1.0), per_channel), tmp_path)


@pytest.mark.parametrize("form,per_channel", FC_FORMS)
def test_product_rounded_to_double(form, per_channel, tmp_path):
    """fl(1/6) lies below 1/6, yet fl(3 * fl(1/6)) is exactly 0.5: LiteRT rounds the double product,
    so 3, 9, 15 give 1, 2, 3 where the exact product would give 0, 1, 2."""
    accs = np.array([3, 9, 15, 21, 33, -3, -9, -15, -21, -33, 4, -4])
    real = double_real(1.0, 1.0, 6.0)
    exact = [int(np.sign(a)) * int(abs(Fraction(int(a)) * Fraction(real)) + Fraction(1, 2)) for a in accs]
    assert np.any(np.array(exact) != round_double_product(accs, real))
    check_exact_with_litert(*fc_bias_model(form, accs, (1.0, 1.0, 6.0), per_channel), tmp_path)


def corrected_case(per_channel: bool):
    """An int16x8 multiplier near 1e-3, where the 31-bit RESCALE misses some of LiteRT's thresholds, and
    accumulators on both sides of the first few missed ones (and their negations)."""
    scales = (float(np.float32(3e-5)), float(np.float32(0.0123)), float(np.float32(3.7e-4)))
    real = double_real(*scales)
    _, _, _, terms = _plan(real, 32769, "test")
    ts = np.array(sorted({t for t, _ in terms}))[:4]
    accs = np.concatenate([ts, ts - 1, -ts, 1 - ts])
    assert np.any(round_double_product(accs, real) != single_round(accs, real))
    return fc_bias_model("int16x8", accs, scales, per_channel)


@pytest.mark.parametrize("per_channel", [False, True])
def test_int16_threshold_corrections(per_channel, tmp_path):
    """Accumulators right at the thresholds the single RESCALE gets wrong: the corrections make them exact."""
    check_exact_with_litert(*corrected_case(per_channel), tmp_path)


def test_tiny_int16_multiplier_is_refused():
    scales = (float(np.float32(3e-6)), float(np.float32(0.37)), float(np.float32(0.041)))    # 8106 corrections
    data, _ = fc_bias_model("int16x8", [1, 2], scales)
    with pytest.raises(TosaconvError, match="FULLY_CONNECTED 'y': output multiplier .* is so small .* threshold corrections .* "
                                            "requantize with a larger output multiplier"):
        convert(data)


@pytest.mark.parametrize("dtype,np_t,scales", [("INT8", np.int8, (0.5, 0.25, 2.0)),
                                               ("INT16", np.int16, (0.5, 0.5, 1.0))])
def test_batch_matmul_at_exact_ties(dtype, np_t, scales, tmp_path):
    """Power-of-two scales put many products exactly on halves; LiteRT's gemmlowp rounding decides them."""
    from tests.importers.tflite.harness import ModelBuilder
    rng = np.random.default_rng(3)
    m = ModelBuilder()
    a = m.input("a", [2, 4, 8], dtype, quant=([scales[0]], [0], 0))
    b = m.input("b", [2, 8, 3], dtype, quant=([scales[1]], [0], 0))
    y = m.tensor("y", [2, 4, 3], dtype, quant=([scales[2]], [0], 0))
    m.op("BATCH_MATMUL", [a, b], [y], "BatchMatMulOptions")
    m.output(y)
    lim = 12 if dtype == "INT8" else 60
    feeds = [{"a": rng.integers(-lim, lim, (2, 4, 8)).astype(np_t),
              "b": rng.integers(-lim, lim, (2, 8, 3)).astype(np_t)} for _ in range(3)]
    period = round(scales[2] / (scales[0] * scales[1]))
    ties = sum(int(np.sum(np.abs(f["a"].astype(np.int64) @ f["b"].astype(np.int64)) % period == period // 2))
               for f in feeds)
    assert ties >= 5, ties
    check_exact_with_litert(m.finish(), feeds, tmp_path)
