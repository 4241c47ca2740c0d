"""The committed sample models: they match the generator, convert, and agree with LiteRT.

The dynamic models are fed at two sizes each (symbolic run and the specialized,
emitted and read-back .tosa). The shape-chain model must decay to a static
RESHAPE once the batch is bound, and MEAN over a dynamic H x W divides by the
bound size. The integer models (int8, int8 behind float or uint8 I/O, int16x8,
int8 with a dynamic batch) must equal LiteRT's reference kernels bit for bit,
and so must the official reference model running the emitted .tosa; their
feeds span the whole input type (both extremes and the zero point included).
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from click.testing import CliRunner

from tosaconv import api
from tosaconv.cli import cli
from tosaconv.ir.ops import Trait
from tests.importers.onnx.harness import specialize_and_emit
from tests.importers.tflite.harness import check_exact_with_litert, check_with_litert, rand, run_litert
from tests.importers.tflite.qconv_models import qdata
from tests.tosa_tools import run_reference_model

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "sample_models", "tflite")


def _generator():
    spec = importlib.util.spec_from_file_location("tflite_generate", os.path.join(HERE, "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


@pytest.mark.parametrize("name", sorted(GEN.MODELS))
def test_committed_file_matches_generator(name):
    with open(os.path.join(HERE, name), "rb") as f:
        assert f.read() == GEN.MODELS[name](), f"{name} is stale: run sample_models/tflite/generate.py"


def test_small_cnn_matches_litert():
    check_with_litert(GEN.small_cnn(batch=1), [{"image": rand(1, 16, 16, 3)}])


def test_dynamic_batch_cnn_matches_litert_at_two_batches():
    graph = check_with_litert(GEN.small_cnn(), [{"image": rand(2, 16, 16, 3)}, {"image": rand(5, 16, 16, 3, seed=3)}])
    assert "image.0" in graph.scope.symbols


def test_dynamic_hw_mean_divides_by_bound_size():
    data = GEN.dynamic_hw()
    check_with_litert(data, [{"image": rand(1, 8, 8, 3)}, {"image": rand(1, 5, 11, 3, seed=2)}])


def test_shape_chain_becomes_helper_ops_and_decays():
    data = GEN.shape_reshape()
    graph = check_with_litert(data, [{"x": rand(2, 4, 6)}, {"x": rand(7, 4, 6, seed=1)}])
    helpers = [op for op in graph.ops if op.op.has(Trait.SHAPE_HELPER)]
    assert helpers, "the SHAPE chain should become Index helper ops"
    static, _ = specialize_and_emit(graph, {"x": (3, 4, 6)})
    assert not [op for op in static.ops if op.op.has(Trait.SHAPE_HELPER) or op.op.has(Trait.DATA_DEPENDENT)]
    reshapes = [op for op in static.ops if op.op.name == "RESHAPE"]
    assert reshapes and reshapes[0].attrs.new_shape == (3, 24)


def test_committed_dynamic_model_loads_from_disk():
    graph = api.load(os.path.join(HERE, "dynamic_batch.tflite"))
    assert [v.name for v in graph.inputs] == ["image"]
    assert graph.outputs[0].type.shape[1] == 10


def test_every_committed_model_has_a_generator():
    committed = {f for f in os.listdir(HERE) if f.endswith(".tflite")}
    assert committed == set(GEN.MODELS), "a .tflite without its generator (or the reverse)"


# -- integer models -------------------------------------------------------------------------------

IMAGE_ZP = GEN.generate_int.IMAGE_Q[1][0]


def int_feeds(shape, dtype, zp, seeds=(0, 1, 2)) -> list:
    """Random images over the whole range of ``dtype``, each with both extremes and the zero point."""
    return [{"image": qdata(shape, dtype, zp, seed)} for seed in seeds]


def assert_spread(data, feeds, at_least: int):
    """LiteRT's outputs take several values: the model is not saturated into a constant."""
    assert len(np.unique(run_litert(data, feeds)[0])) >= at_least


def test_int8_cnn_bit_exact(tmp_path):
    data = GEN.MODELS["int8_cnn.tflite"]()
    feeds = int_feeds((1, 16, 16, 3), np.int8, IMAGE_ZP)
    assert_spread(data, feeds[0], 6)
    graph = check_exact_with_litert(data, feeds, tmp_path)
    assert [v.type.dtype.name for v in (*graph.inputs, *graph.outputs)] == ["INT8", "INT8"]


def test_int8_dynamic_batch_bit_exact_at_batches_1_and_3(tmp_path):
    data = GEN.MODELS["int8_dynamic_batch.tflite"]()
    feeds = [int_feeds((n, 16, 16, 3), np.int8, IMAGE_ZP, (n,))[0] for n in (1, 3)]
    graph = check_exact_with_litert(data, feeds, tmp_path)
    assert "image.0" in graph.scope.symbols


def test_uint8_io_bit_exact(tmp_path):
    data = GEN.MODELS["uint8_io.tflite"]()
    feeds = int_feeds((1, 16, 16, 3), np.uint8, IMAGE_ZP + 128)
    assert run_litert(data, feeds[0])[0].dtype == np.uint8
    assert_spread(data, feeds[0], 6)
    check_exact_with_litert(data, feeds, tmp_path)


def test_int16x8_bit_exact(tmp_path):
    data = GEN.MODELS["int16x8.tflite"]()
    feeds = int_feeds((1, 8, 8, 4), np.int16, 0)
    assert_spread(data, feeds[0], 6)
    check_exact_with_litert(data, feeds, tmp_path)


def float_images() -> list:
    """Uniform images slightly beyond [-1, 1], and one holding the quantizer's half-way points
    ``(k + 0.5) * scale``, signed zeros, out-of-range and infinite values."""
    scale = np.float32(GEN.generate_int.IMAGE_Q[0][0])
    feeds = [rand(1, 16, 16, 3, low=-1.2, high=1.2, seed=s) for s in (0, 1, 2)]
    edge = feeds[2].reshape(-1)
    halves = ((np.arange(-140, 140) + 0.5) * scale).astype(np.float32)
    edge[:halves.size] = halves
    edge[halves.size:halves.size + 8] = [0.0, -0.0, 3.0, -3.0, 1e10, -1e10, np.inf, -np.inf]
    return [{"image": f} for f in feeds]


def test_int8_float_io_exact(tmp_path):
    """QUANTIZE rounds exactly as LiteRT's AffineQuantize and DEQUANTIZE is one exact product, so the
    float output equals LiteRT's bit for bit (the harness compares with zero tolerance) -- and the
    reference model's too."""
    data = GEN.MODELS["int8_float_io.tflite"]()
    feeds = float_images()
    graph = check_exact_with_litert(data, feeds, tmp_path)
    static, tosa = specialize_and_emit(graph, {"image": (1, 16, 16, 3)})
    for n, f in enumerate(feeds):
        want = run_litert(data, f)[0]
        ref = run_reference_model(tosa, f, static.output_names, tmp_path / f"exact{n}")[static.output_names[0]]
        assert ref.dtype == np.float32 and np.array_equal(ref, want)


def test_cli_converts_and_runs_the_int8_sample(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["convert", os.path.join(HERE, "int8_cnn.tflite"), "-o", "X.tosa", "--run"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "X.tosa").read_bytes()[4:8] == b"TOSA"
    assert np.load(tmp_path / "X.npz")["probs"].dtype == np.int8


def test_cli_runs_the_stateful_sample_step_by_step(tmp_path, monkeypatch):
    """Three --inputs steps on one state: the running sum carries over, as LiteRT's does."""
    from tests.importers.tflite.variable_steps import litert_steps
    monkeypatch.chdir(tmp_path)
    steps = [{"x": rand(1, 4, seed=k)} for k in range(3)]
    for k, feeds in enumerate(steps):
        np.savez(tmp_path / f"s{k}.npz", **feeds)
    args = ["run", os.path.join(HERE, "running_sum.tflite"), "-o", "out.npz"]
    r = CliRunner().invoke(cli, args + [a for k in range(3) for a in ("--inputs", f"s{k}.npz")])
    assert r.exit_code == 0, r.output
    out = np.load(tmp_path / "out.npz")
    with open(os.path.join(HERE, "running_sum.tflite"), "rb") as f:
        want = litert_steps(f.read(), steps)
    for k in range(3):
        np.testing.assert_array_equal(out[f"step{k + 1}/y"], want[k][0])
    np.testing.assert_allclose(out["step3/y"], sum(s["x"] for s in steps), rtol=1e-6)
