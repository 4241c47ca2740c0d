"""Bad inputs (truncated and foreign files, custom and unsupported ops, listed
with counts, exit 3 without a traceback), signature names, and one run of the
official TOSA reference model on a specialized generated model."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tosaconv.diagnostics import ConversionError, TosaconvError
from tests.importers.onnx.harness import check_reference_model, run_graph, specialize_and_emit
from tests.importers.tflite.harness import ModelBuilder, convert, rand, run_litert
from tests.importers.tflite.test_sample_models import GEN
from tosaconv.emit import read_tosa


def _write(tmp_path, data: bytes, name="m.tflite") -> str:
    path = os.path.join(tmp_path, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "tosaconv", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("cut", [12, 100, 600])
def test_truncated_file_is_a_clear_error(cut):
    with pytest.raises(ConversionError, match="cannot read .* as a TFLite model"):
        convert(GEN.small_cnn(batch=1)[:cut])


def test_garbage_file_exits_3_without_traceback(tmp_path):
    path = _write(tmp_path, b"\x00" * 4 + b"TFL3" + bytes(range(256)) * 4)
    proc = _cli("inspect", path)
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "TFLite" in proc.stderr + proc.stdout


def _custom_and_unsupported() -> bytes:
    m = ModelBuilder()
    x = m.input("x", [1, 4])
    a, b, c, d = (m.tensor(n, [1, 4]) for n in "abcd")
    m.custom_op("MyFancyOp", [x], [a])
    m.custom_op("MyFancyOp", [a], [b])
    m.op("HASHTABLE_LOOKUP", [b], [c])
    m.op("ADD", [c, x], [d], "AddOptions")
    m.output(d)
    return m.finish()


def test_custom_and_unsupported_ops_are_all_listed_with_counts():
    with pytest.raises(TosaconvError) as err:
        convert(_custom_and_unsupported())
    messages = [diag.message for diag in err.value.diagnostics]
    assert any("custom op 'MyFancyOp'" in m and "2 op(s)" in m for m in messages), messages
    assert any("unsupported op HASHTABLE_LOOKUP" in m and "1 op(s)" in m for m in messages), messages
    assert err.value.exit_code == 3
    custom = next(d for d in err.value.diagnostics if "MyFancyOp" in d.message)
    assert "Convolution2DTransposeBias" in custom.hint and "builtin ops" in custom.hint


def test_cli_lists_custom_op_exit_3(tmp_path):
    proc = _cli("convert", _write(tmp_path, _custom_and_unsupported()), "-o", os.path.join(tmp_path, "o.tosa"))
    assert proc.returncode == 3
    assert "MyFancyOp" in proc.stderr + proc.stdout and "Traceback" not in proc.stderr


def test_quantized_form_of_a_float_only_op_is_listed_as_such():
    """SIN has a float converter only; an int8 SIN is listed as 'quantized SIN', exit 3."""
    m = ModelBuilder()
    x = m.input("x", [1, 4], "INT8", quant=([0.5], [0], 0))
    y = m.tensor("y", [1, 4], "INT8", quant=([0.5], [0], 0))
    m.op("SIN", [x], [y])
    m.output(y)
    with pytest.raises(ConversionError, match="unsupported op quantized SIN .*1 op") as e:
        convert(m.finish())
    assert e.value.exit_code == 3
    assert "TFLite itself has no quantized SIN kernel (elementwise.cc)" in e.value.diagnostics[0].hint


def test_a_quantized_form_tflite_has_but_tosaconv_lacks_says_so():
    from tosaconv.importers.tflite.driver import _unsupported
    diag = _unsupported(False, "quantized ", "SOME_FUTURE_OP", ["y", "z"])
    assert diag.message == "unsupported op quantized SOME_FUTURE_OP (TFLite): 2 op(s)"
    assert "converts the float form of SOME_FUTURE_OP but not its quantized form yet" in diag.hint


def test_signature_names_name_inputs_and_outputs():
    m = ModelBuilder()
    x = m.input("serving_default_x:0", [1, 4], signature=[-1, 4])
    y = m.tensor("StatefulPartitionedCall:0", [1, 4], signature=[-1, 4])
    m.op("RELU", [x], [y])
    m.output(y)
    m.sign(["pixels"], ["scores"])
    data = m.finish()
    graph = convert(data)
    assert [v.name for v in graph.inputs] == ["pixels"] and graph.output_names == ["scores"]
    assert "pixels.0" in graph.scope.symbols
    feeds = rand(3, 4)
    np.testing.assert_allclose(run_graph(graph, {"pixels": feeds})[0],
                               run_litert(data, {"serving_default_x:0": feeds})[0])


def _densify_model(dense, **layout) -> bytes:
    """x + DENSIFY(sparse constant): LiteRT's DENSIFY kernel reads the same sparse encoding we do."""
    m = ModelBuilder()
    x = m.input("x", list(dense.shape))
    w, y = m.tensor("w", list(dense.shape)), m.tensor("y", list(dense.shape))
    m.op("DENSIFY", [m.sparse_const("w_sparse", dense, **layout)], [w])
    m.op("ADD", [x, w], [y], "AddOptions")
    m.output(y)
    return m.finish()


def _sparse_matrix(shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dense = rng.standard_normal(shape).astype(np.float32)
    dense[rng.random(shape) < 0.7] = 0.0
    return dense


@pytest.mark.parametrize("shape, layout", [
    ((4, 6), dict(formats=["DENSE", "CSR"])),                                   # CSR rows
    ((4, 6), dict(formats=["DENSE", "CSR"], order=[1, 0])),                     # CSC (column-major traversal)
    ((4, 8), dict(formats=["DENSE", "CSR", "DENSE"], blocks=[(1, 4)])),          # 1x4 blocks, as TFLite's pruning writes
    ((4, 6, 4), dict(formats=["DENSE", "CSR", "CSR"])),
    ((2, 3, 1, 8), dict(formats=["DENSE", "DENSE", "DENSE", "CSR"])),   # CSR rows under dense dims, as the
    ((9,), dict(formats=["CSR"])),                                      # mediapipe models store weights
])
def test_densify_sparse_constant_matches_litert(shape, layout, tmp_path):
    dense = _sparse_matrix(shape, seed=len(shape) + len(layout["formats"]))
    data = _densify_model(dense, **layout)
    feeds = {"x": rand(*shape)}
    got = run_graph(convert(data), feeds)[0]
    np.testing.assert_array_equal(got, run_litert(data, feeds)[0])
    np.testing.assert_array_equal(got, feeds["x"] + dense)


def test_corrupt_sparse_constant_is_a_clear_error():
    m = ModelBuilder()
    x = m.input("x", [4, 6])
    w, y = m.tensor("w", [4, 6]), m.tensor("y", [4, 6])
    c = m.sparse_const("w_sparse", _sparse_matrix((4, 6), seed=1), formats=["DENSE", "CSR"])
    levels, order, block_map = m.tensors[c].sparsity
    levels[1] = ("CSR", levels[1][1], [9] * len(levels[1][2]))          # column 9 of 6
    m.op("DENSIFY", [c], [w])
    m.op("ADD", [x, w], [y], "AddOptions")
    m.output(y)
    with pytest.raises(TosaconvError, match="w_sparse.*indices outside its shape") as e:
        convert(m.finish())
    assert e.value.exit_code == 3


def test_densify_int8_sparse_constant_is_bit_exact(tmp_path):
    """An int8 sparse constant (1x4 blocks) behind DENSIFY, added to an int8 input with other scales."""
    from tests.importers.tflite.harness import check_exact_with_litert
    rng = np.random.default_rng(7)
    dense = rng.integers(-128, 128, (4, 8)).astype(np.int8)
    dense[:, 4:][rng.random((4, 4)) < 0.5] = 0
    dense[1] = 0
    m = ModelBuilder()
    x = m.input("x", [4, 8], "INT8", quant=([0.05], [3], 0))
    w = m.tensor("w", [4, 8], "INT8", quant=([0.02], [0], 0))
    y = m.tensor("y", [4, 8], "INT8", quant=([0.08], [-5], 0))
    m.op("DENSIFY", [m.sparse_const("w_sparse", dense, formats=["DENSE", "CSR", "DENSE"], blocks=[(1, 4)],
                                           quant=([0.02], [0], 0))], [w])
    m.op("ADD", [x, w], [y], "AddOptions")
    m.output(y)
    feeds = [{"x": rng.integers(-128, 128, (4, 8)).astype(np.int8)} for _ in range(2)]
    check_exact_with_litert(m.finish(), feeds, tmp_path)


def test_reference_model_runs_specialized_sample(tmp_path):
    graph = convert(GEN.small_cnn())
    feeds = {"image": rand(2, 16, 16, 3)}
    static, tosa = specialize_and_emit(graph, {"image": (2, 16, 16, 3)})
    got = run_graph(read_tosa(tosa), feeds)
    np.testing.assert_allclose(got[0], run_litert(GEN.small_cnn(), feeds)[0], rtol=1e-4, atol=1e-5)
    check_reference_model(tosa, static, feeds, got, tmp_path / "ref")
