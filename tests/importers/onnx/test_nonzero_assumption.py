"""A NonZero count bound as an assumption (seed 003): the program decays, and the run checks the assumption.

NonZero's count is Exact but data-dependent, so binding it (``--bind nz.1=K``)
is an assumption about the data. Under it the program decays to static TOSA;
when the data has K non-zeros the numpy run of the static program and the
official reference model running the emitted .tosa both equal onnxruntime.
When the data has another count, the numpy run (static or symbolic) fails
with E-ASSUMPTION (exit 4) naming the symbol, the op and both counts; so do
``tosaconv run`` and ``tosaconv convert --run``.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tosaconv import api
from tosaconv.diagnostics import ShapeError

from .harness import BOOL, F32, I64, check_reference_model, convert, info, make_model, run_onnxruntime

I32 = TensorProto.INT32


def _model(elem: int, dims) -> onnx.ModelProto:
    """NonZero, its coordinates as output, and a GatherND of the non-zero values (a typical consumer)."""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"], name="nz"),
             helper.make_node("Transpose", ["nz"], ["idx"], name="t"),
             helper.make_node("GatherND", ["x", "idx"], ["vals"], name="g")]
    return make_model(nodes, [info("x", elem, dims)], [info("nz", I64, None), info("vals", elem, None)], opset=13)


def _data(shape, count: int, dtype, seed: int = 0) -> np.ndarray:
    """An array of ``shape`` with exactly ``count`` non-zero elements at random places."""
    rng = np.random.default_rng(seed)
    flat = np.zeros(int(np.prod(shape)), dtype=dtype)
    where = rng.choice(flat.size, count, replace=False)
    flat[where] = True if dtype == np.bool_ else rng.integers(1, 9, count).astype(dtype) * (-1) ** where
    return flat.reshape(shape)


CASES = [  # (ONNX elem type, numpy dtype, declared dims, bindings of the input symbols, shape)
    (F32, np.float32, ["N", "W"], {"N": 3, "W": 4}, (3, 4)),
    (I32, np.int32, ["N"], {"N": 7}, (7,)),
    (BOOL, np.bool_, [2, "H", 3], {"H": 5}, (2, 5, 3)),
]


@pytest.mark.parametrize("elem, dtype, dims, binds, shape", CASES)
@pytest.mark.parametrize("count", [1, 5])
def test_assumed_count_decays_and_matches_onnxruntime(tmp_path, elem, dtype, dims, binds, shape, count):
    model = _model(elem, dims)
    graph = convert(model)
    symbol = next(op.attrs.count for op in graph.ops if op.op.name == "NONZERO")
    static = api.specialize(graph, {**binds, symbol: count})
    assert "NONZERO" not in static.histogram()
    x = _data(shape, count, dtype, seed=count)
    want = run_onnxruntime(model, {"x": x})
    got = api.run(static, {"x": x})
    np.testing.assert_array_equal(got["nz"], want[0])
    np.testing.assert_array_equal(got["vals"], want[1])
    check_reference_model(api.emit(static), static, {"x": x}, [got["nz"], got["vals"]], tmp_path)


@pytest.mark.parametrize("actual", [2, 6])
def test_a_wrong_assumption_fails_the_run_naming_symbol_op_and_both_counts(actual):
    graph = convert(_model(F32, ["N", "W"]))
    x = _data((3, 4), actual, np.float32)
    static = api.specialize(graph, {"N": 3, "W": 4, "nz.1": 4})
    for program, bindings in ((static, None), (graph, {"nz.1": 4})):   # the static and the symbolic program
        with pytest.raises(ShapeError) as err:
            api.run(program, {"x": x}, bindings)
        (d,) = err.value.diagnostics
        assert err.value.exit_code == 4 and d.code == "E-ASSUMPTION"
        assert d.message == (f"the assumption nz.1=4 does not hold: NonZero 'nz' finds {actual} non-zero "
                             "element(s) in 'x'")


def test_without_the_assumption_specialization_still_refuses():
    graph = convert(_model(F32, ["N", "W"]))
    with pytest.raises(ShapeError, match=r"unless you assume it \(--bind nz.1=K"):
        api.specialize(graph, {"N": 3, "W": 4})


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tosaconv", *map(str, args)], capture_output=True, text=True)


def test_cli_checks_the_assumption_when_it_runs(tmp_path):
    path = tmp_path / "nz.onnx"
    onnx.save(_model(F32, [3, 4]), path)
    good, bad = tmp_path / "good.npz", tmp_path / "bad.npz"
    np.savez(good, x=_data((3, 4), 4, np.float32))
    np.savez(bad, x=_data((3, 4), 5, np.float32))
    ok = _cli("convert", path, "--bind", "nz.1=4", "-o", tmp_path / "nz.tosa", "--inputs", good, "--run")
    assert ok.returncode == 0, ok.stderr
    for args in (("convert", path, "--bind", "nz.1=4", "-o", tmp_path / "x.tosa", "--inputs", bad, "--run"),
                 ("run", path, "--bind", "nz.1=4", "--inputs", bad, "-o", tmp_path / "r.npz")):
        proc = _cli(*args)
        assert proc.returncode == 4, proc.stderr
        assert "E-ASSUMPTION" in proc.stderr and "nz.1=4 does not hold: NonZero 'nz' finds 5" in proc.stderr
        assert not (tmp_path / "x.tosa").exists()


def test_compress_count_assumption_matches_onnxruntime(tmp_path):
    nodes = [helper.make_node("Compress", ["x", "cond"], ["y"], axis=1, name="cmp")]
    model = make_model(nodes, [info("x", F32, [2, "W"]), info("cond", BOOL, ["W"])], [info("y", F32, None)], opset=13)
    graph = convert(model)
    static = api.specialize(graph, {"W": 6, "y.1": 3})
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    cond = np.array([0, 1, 1, 0, 0, 1], bool)
    (want,) = run_onnxruntime(model, {"x": x, "cond": cond})
    got = api.run(static, {"x": x, "cond": cond})["y"]
    np.testing.assert_array_equal(got, want)
    check_reference_model(api.emit(static), static, {"x": x, "cond": cond}, [got], tmp_path)
    with pytest.raises(ShapeError, match=r"y.1=3 does not hold: Compress 'cmp' finds 2 non-zero"):
        api.run(static, {"x": x, "cond": np.array([0, 1, 0, 0, 0, 1], bool)})


def _range_model() -> onnx.ModelProto:
    """Range(0, lim, 1) with ``lim`` read from an input's data (EXTRACT_DIM, an Exact data-dependent value)."""
    nodes = [helper.make_node("Range", ["zero", "lim", "one"], ["r"], name="rng"),
             helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT, name="c")]
    zero, one = (helper.make_tensor(n, I64, [], [v]) for n, v in (("zero", 0), ("one", 1)))
    return make_model(nodes, [info("lim", I64, [])], [info("y", F32, None)], [zero, one], opset=13)


def test_extract_dim_value_assumption_decays_and_is_checked(tmp_path):
    model = _range_model()
    graph = convert(model)
    (symbol,) = [op.result.type.value for op in graph.ops if op.op.name == "EXTRACT_DIM"]
    name = str(symbol)
    static = api.specialize(graph, {name: 4})
    lim = {"lim": np.array(4, np.int64)}
    (want,) = run_onnxruntime(model, lim)
    got = api.run(static, lim)["y"]
    np.testing.assert_array_equal(got, want)
    check_reference_model(api.emit(static), static, lim, [got], tmp_path)
    for program, bindings in ((static, None), (graph, {name: 4})):
        with pytest.raises(ShapeError) as err:
            api.run(program, {"lim": np.array(6, np.int64)}, bindings)
        assert err.value.exit_code == 4 and err.value.diagnostics[0].message == (
            f"the assumption {name}=4 does not hold: Range 'rng' reads 6 from element 0 of 'lim'")
