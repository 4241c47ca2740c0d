"""The NPU-cheap lowerings of quantized TFLite ops, and the one option that trades exactness for cycles.

Exact by default (checked against LiteRT's reference kernels on full-range data, and the emitted .tosa on
the official reference model):

- MEAN over H and W of a static NHWC tensor is one DEPTHWISE_CONV2D (no REDUCE_SUM, no int32 copy);
- ADD/SUB inputs take one RESCALE each where that is exact on the term or, checked over every pair of
  8-bit values, on the output; exact against LiteRT over every pair;
- FULLY_CONNECTED's threshold corrections with neighbouring thresholds are single EQUAL points.

``--npu-fast`` (``api.load(..., npu_fast=True)``) makes FULLY_CONNECTED one MultiplyByQuantizedMultiplier
RESCALE: within 1 of LiteRT on every output, including the accumulators at the thresholds where it differs.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from click.testing import CliRunner

from tests.importers.tflite.harness import (ModelBuilder, as_stored, check_exact_with_litert, check_reference_model,
                                            convert, run_graph, run_litert, specialize_and_emit)
from tests.importers.tflite.qconv_models import double_real, fc_bias_model
from tests.importers.tflite.test_q_data import Q
from tests.importers.tflite.test_q_matmul import corrected_case, fully_connected
from tosaconv import api
from tosaconv.cli import cli
from tosaconv.importers.tflite.ops.q_matmul import _plan
from tosaconv.ir.ops import Op

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "sample_models", "tflite")


def ops_of(graph) -> list:
    return [op.op for op in graph.ops]


def load(data: bytes, tmp_path, npu_fast: bool):
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    return api.load(str(path), npu_fast=npu_fast)


# -- MEAN ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,out_q", [("INT8", ([0.011], [17], 0)), ("UINT8", ([0.013], [200], 0)),
                                         ("INT16", ([0.0051], [0], 0))])
def test_spatial_mean_is_one_depthwise_conv(dtype, out_q, tmp_path):
    from tests.importers.tflite.test_q_pool import reduce_feeds, reduce_model
    data = reduce_model("MEAN", dtype, [2, 5, 7, 6], [1, 2], False, out_q)
    graph = check_exact_with_litert(data, reduce_feeds(dtype, [2, 5, 7, 6]), tmp_path)
    assert Op.DEPTHWISE_CONV2D in ops_of(graph) and Op.REDUCE_SUM not in ops_of(graph)


def test_mean_over_a_dynamic_hw_keeps_the_reduction(tmp_path):
    m = ModelBuilder()
    x = m.input("x", [1, 4, 4, 3], "INT8", [1, -1, -1, 3], quant=Q["INT8"])
    y = m.tensor("y", [1, 3], "INT8", quant=([0.02], [4], 0))
    m.op("MEAN", [x, m.const("axes", np.array([1, 2], np.int32))], [y], "ReducerOptions", KeepDims=False)
    m.output(y)
    assert Op.REDUCE_SUM in ops_of(convert(m.finish()))


# -- ADD -------------------------------------------------------------------------------------------------
def all_pairs_add(qa, qb, qy, dtype="INT8", op="ADD"):
    """ADD (or SUB) over every pair of int8 (or uint8) values: a [1, 256, 256, 1] grid."""
    m = ModelBuilder()
    a = m.input("a", [1, 256, 256, 1], dtype, quant=([qa[0]], [qa[1]], 0))
    b = m.input("b", [1, 256, 256, 1], dtype, quant=([qb[0]], [qb[1]], 0))
    y = m.tensor("y", [1, 256, 256, 1], dtype, quant=([qy[0]], [qy[1]], 0))
    m.op(op, [a, b], [y], {"ADD": "AddOptions", "SUB": "SubOptions"}[op])
    m.output(y)
    np_t = np.int8 if dtype == "INT8" else np.uint8
    grid = np.arange(256).astype(np.uint8).view(np_t) if dtype == "INT8" else np.arange(256, dtype=np.uint8)
    va, vb = np.meshgrid(grid, grid, indexing="ij")
    return m.finish(), {"a": va.reshape(1, 256, 256, 1), "b": vb.reshape(1, 256, 256, 1)}


def _rescales_before_add(graph) -> int:
    kinds = ops_of(graph)
    return kinds[:kinds.index(Op.ADD)].count(Op.RESCALE)


@pytest.mark.parametrize("dtype,qa,qb,qy,rescales", [
    ("INT8", (0.05, 3), (0.02, -10), (0.07, 5), 2),              # a pair form: one RESCALE per input
    ("INT8", (0.003, -128), (0.5, 100), (1.7, 127), 2),
    ("INT8", (0.01, 0), (0.0101, 1), (0.0003, 0), 2),
    ("INT8", (0.0137, -128), (0.0196, 0), (0.0176, -128), 3),    # no exact pair form: the smaller-scale input takes two
    ("UINT8", (0.05, 128), (0.1, 100), (0.08, 130), 4)])         # + the two unsigned -> signed RESCALEs
def test_add_over_every_pair_of_values(dtype, qa, qb, qy, rescales, tmp_path):
    data, feeds = all_pairs_add(qa, qb, qy, dtype)
    graph = check_exact_with_litert(data, [feeds], tmp_path)
    assert _rescales_before_add(graph) == rescales


@pytest.mark.parametrize("qa,qb,qy", [((0.05, 3), (0.02, -10), (0.07, 5)), ((0.01, 0), (0.0101, 1), (0.0003, 0))])
def test_sub_over_every_pair_of_values(qa, qb, qy, tmp_path):
    data, feeds = all_pairs_add(qa, qb, qy, op="SUB")
    graph = check_exact_with_litert(data, [feeds], tmp_path)
    kinds = ops_of(graph)
    assert kinds[:kinds.index(Op.SUB)].count(Op.RESCALE) == 2


def test_add_input_with_a_single_rescale_form(tmp_path):
    """Scales for which the smaller input too has a one-RESCALE form: two RESCALEs in all, still exact."""
    data, feeds = all_pairs_add((0.0390625, 0), (0.0625, 0), (0.1, 0))
    graph = check_exact_with_litert(data, [feeds], tmp_path)
    assert _rescales_before_add(graph) == 2


# -- FULLY_CONNECTED -------------------------------------------------------------------------------------
def test_neighbouring_threshold_corrections_are_points(tmp_path):
    data, feeds = corrected_case(per_channel=True)
    graph = check_exact_with_litert(data, feeds, tmp_path)
    assert Op.EQUAL in ops_of(graph) and Op.GREATER_EQUAL not in ops_of(graph)


def _fast_vs_litert(data, feeds, tmp_path) -> np.ndarray:
    """|tosaconv --npu-fast - LiteRT| per output element (the reference model agreeing with our run)."""
    graph = load(data, tmp_path, npu_fast=True)
    diffs = []
    for i, f in enumerate(feeds):
        ours = {k: as_stored(v) for k, v in f.items()}
        got = run_graph(graph, ours)
        static, tosa = specialize_and_emit(graph, {k: np.shape(v) for k, v in ours.items()})
        check_reference_model(tosa, static, ours, run_graph(static, ours), tmp_path / str(i))
        want = run_litert(data, f)[0]
        got = got[0].view(want.dtype) if want.dtype == np.uint8 else got[0]
        diffs.append(np.abs(got.astype(np.int64) - want.astype(np.int64)).reshape(-1))
    assert Op.EQUAL not in ops_of(graph) and Op.GREATER_EQUAL not in ops_of(graph)
    return np.concatenate(diffs)


def test_npu_fast_fully_connected_is_within_one_at_the_thresholds(tmp_path):
    """Accumulators on both sides of every threshold where a 31-bit multiplier misses LiteRT's double
    product: the fast form is off by one on some of them, and never by more."""
    scales = (float(np.float32(3e-5)), float(np.float32(0.0123)), float(np.float32(3.7e-4)))
    real = double_real(*scales)
    ts = np.array(sorted({t for t, _ in _plan(real, 32769, "test")[3]}))
    accs = np.concatenate([ts, ts - 1, ts + 1, -ts, 1 - ts])
    data, feeds = fc_bias_model("int16x8", accs, scales, True)
    assert _fast_vs_litert(data, feeds, tmp_path).max() == 1     # off by one somewhere, never by more


@pytest.mark.parametrize("form", ["int8", "uint8", "int16x8"])
def test_npu_fast_fully_connected_on_full_range_data(form, tmp_path):
    data, feeds = fully_connected(form, per_channel=form != "uint8")
    assert _fast_vs_litert(data, feeds, tmp_path).max() <= 1


def test_npu_fast_from_the_command_line(tmp_path):
    model = os.path.join(SAMPLES, "int16x8.tflite")
    out = {}
    for flag in ([], ["--npu-fast"]):
        path = tmp_path / f"m{len(flag)}.tosa"
        r = CliRunner().invoke(cli, ["convert", model, "-o", str(path), *flag])
        assert r.exit_code == 0, r.output
        out[bool(flag)] = ops_of(api.load(str(path)))
    assert Op.EQUAL in out[False] and Op.EQUAL not in out[True]
    assert len(out[True]) < len(out[False])


def _fast_add_diff(data, feeds, tmp_path) -> np.ndarray:
    graph = load(data, tmp_path, npu_fast=True)
    static, tosa = specialize_and_emit(graph, {k: np.shape(v) for k, v in feeds.items()})
    got = run_graph(static, feeds)
    check_reference_model(tosa, static, feeds, got, tmp_path / "ref")
    assert _rescales_before_add(graph) == 2       # one per input: what Vela fuses into one NPU ADD
    return np.abs(got[0].astype(np.int64) - run_litert(data, feeds)[0].astype(np.int64))


@pytest.mark.parametrize("qa,qb,qy", [((0.0137, -128), (0.0196, 0), (0.0176, -128)),
                                      ((0.05, 3), (0.02, -10), (0.07, 5)), ((0.01, 0), (0.0101, 1), (0.0003, 0))])
def test_npu_fast_add_is_within_one_on_every_pair(qa, qb, qy, tmp_path):
    data, feeds = all_pairs_add(qa, qb, qy)
    assert _fast_add_diff(data, feeds, tmp_path).max() <= 1


def test_npu_fast_add_differs_somewhere(tmp_path):
    """The bound is reached: on these scales the single rounding moves 7 of the 65,536 sums by one."""
    data, feeds = all_pairs_add((0.0137, -128), (0.0196, 0), (0.0176, -128))
    assert _fast_add_diff(data, feeds, tmp_path).max() == 1


def test_npu_fast_int16_add_is_within_one(tmp_path):
    from tests.importers.tflite.test_q_arith import binary_feeds, binary_q_model
    data = binary_q_model("ADD", "INT16", (0.001, 0), (0.0007, 0), (0.002, 0), (2, 64, 64), (2, 64, 64))
    graph = load(data, tmp_path, npu_fast=True)
    for f in binary_feeds("INT16", (2, 64, 64), (2, 64, 64)):
        diff = np.abs(run_graph(graph, f)[0].astype(np.int64) - run_litert(data, f)[0].astype(np.int64))
        assert diff.max() <= 1


@pytest.mark.parametrize("op,dtype", [("RELU", "INT8"), ("RELU6", "INT8"), ("RELU_N1_TO_1", "INT8"),
                                      ("RELU", "INT16"), ("RELU6", "INT16")])     # LiteRT's int16 RELUs
def test_relu_with_equal_parameters_is_a_clamp(op, dtype, tmp_path):
    m = ModelBuilder()
    x = m.input("x", [2, 33, 17], dtype, quant=Q[dtype])
    y = m.tensor("y", [2, 33, 17], dtype, quant=Q[dtype])
    m.op(op, [x], [y])
    m.output(y)
    from tests.importers.tflite.test_q_data import q_data
    graph = check_exact_with_litert(m.finish(), [{"x": q_data(dtype, [2, 33, 17])}], tmp_path)
    assert ops_of(graph) == [Op.CLAMP]


@pytest.mark.parametrize("op", ["ADD", "SUB"])
@pytest.mark.parametrize("qa,qb,qy", [((0.001, 0), (0.0007, 0), (0.002, 0)), ((0.0003, 0), (0.0011, 0), (0.0009, 0))])
def test_int16_add_sub_over_every_value_of_each_input(op, qa, qb, qy, tmp_path):
    """Every int16 value on each side (against random partners), through the split form of the
    smaller-scale input (a SINGLE_ROUND RESCALE, then a rounding shift of b - [b < 0])."""
    m = ModelBuilder()
    opts = {"ADD": "AddOptions", "SUB": "SubOptions"}[op]
    a = m.input("a", [2, 256, 256], "INT16", quant=([qa[0]], [0], 0))
    b = m.input("b", [2, 256, 256], "INT16", quant=([qb[0]], [0], 0))
    y = m.tensor("y", [2, 256, 256], "INT16", quant=([qy[0]], [0], 0))
    m.op(op, [a, b], [y], opts, PotScaleInt16=False)
    m.output(y)
    rng = np.random.default_rng(5)
    every = np.arange(-32768, 32768, dtype=np.int16).reshape(256, 256)
    partner = rng.integers(-32768, 32768, size=(256, 256)).astype(np.int16)
    feeds = {"a": np.stack([every, partner]), "b": np.stack([partner, every])}
    graph = check_exact_with_litert(m.finish(), [feeds], tmp_path)
    assert Op.LOGICAL_RIGHT_SHIFT in ops_of(graph)


def test_npu_fast_run_stays_within_one_of_the_exact_run(tmp_path):
    model = os.path.join(SAMPLES, "int16x8.tflite")
    outs = []
    for flag in ([], ["--npu-fast"]):
        path = tmp_path / f"r{len(flag)}.npz"
        r = CliRunner().invoke(cli, ["run", model, "-o", str(path), "--seed", "3", *flag])
        assert r.exit_code == 0, r.output
        outs.append(np.load(path)["logits"].astype(np.int64))
    assert np.abs(outs[0] - outs[1]).max() <= 1
