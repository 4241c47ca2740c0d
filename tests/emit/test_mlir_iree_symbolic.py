"""Which dynamic sample models IREE 3.13 takes symbolically (``convert --keep-symbols -o X.mlir``).

None of the 14 dynamic samples compiles today: each symbolic ``.mlir`` is
refused by ``iree-compile`` at a shape operand computed at run time (a DIM
that feeds an ASSERT_EQUAL_SHAPE or a size, a RESHAPE or SLICE whose shape is
computed). :data:`IREE_REJECTS` records IREE's first error per model, and the
test checks iree-compile still fails with it, so a release that lifts a
limit shows up here (and in the README's table, which
``scripts/iree_symbolic.py`` regenerates). :data:`IREE_SYMBOLIC` lists the
samples IREE takes: compiled once, run at the two input shapes of
``tests/emit/test_symbolic_tosa.py`` and compared with our numpy run of the
static conversion (1e-5 relative). The last test shows why the writer does not
turn a computed RESHAPE shape into a CONST_SHAPE with one −1 for IREE.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.emit.test_mlir_iree_dynamic import _block, _tensor
from tests.emit.test_mlir_symbolic import TARGET_1_1
from tests.iree_symbolic import IreeError, compile_symbolic, first_error, mismatches, sample_cases
from tests.iree_tools import compile_mlir, run_module
from tests.tosa_tools import run_tool
from tosaconv.emit.mlir import records_to_mlir
from tosaconv.emit.records import OpRecord, ShapeRecord

_LEGALIZE = "failed to legalize operation '{}'"
_ILLEGAL = "failed to legalize operation '{}' that was explicitly marked illegal"

IREE_SYMBOLIC: tuple = ()
IREE_REJECTS = {
    "broadcast/dyn2_2dyn.onnx": _LEGALIZE.format("tosa.dim"),
    "broadcast/dyn_dyn.onnx": _LEGALIZE.format("tosa.dim"),
    "broadcast/dyn_dyn_1d.onnx": _LEGALIZE.format("tosa.dim"),
    "broadcast/five_dyn.onnx": _LEGALIZE.format("tosa.dim"),
    "broadcast/one_dyn.onnx": _LEGALIZE.format("tosa.dim"),
    "broadcast/select_2xdyn.onnx": _LEGALIZE.format("tosa.dim"),
    "broadcast/static2x2_dyn.onnx": _LEGALIZE.format("tosa.dim"),
    "broadcast/two_dyn.onnx": _LEGALIZE.format("tosa.dim"),
    "small_cnn.onnx": _ILLEGAL.format("tosa.slice"),
    "tflite/dynamic_batch.tflite": _ILLEGAL.format("tosa.reshape"),
    "tflite/dynamic_hw.tflite": _LEGALIZE.format("tosa.dim"),
    "tflite/int8_dynamic_batch.tflite": _ILLEGAL.format("tosa.reshape"),
    "tflite/shape_reshape.tflite": _ILLEGAL.format("tosa.reshape"),
    "tiny_transformer.onnx": _ILLEGAL.format("tosa.reshape"),
}
_CASES = {c.name: c for c in sample_cases()}


def test_every_dynamic_sample_is_listed_once():
    assert sorted([*IREE_SYMBOLIC, *IREE_REJECTS]) == sorted(_CASES)
    assert not set(IREE_SYMBOLIC) & set(IREE_REJECTS)


@pytest.mark.parametrize("model", sorted(_CASES))
def test_iree_takes_the_listed_samples_and_rejects_the_others_with_the_recorded_error(model, tmp_path):
    if model in IREE_SYMBOLIC:
        graph, vmfb = compile_symbolic(_CASES[model], tmp_path)
        assert mismatches(_CASES[model], graph, vmfb, tmp_path) == []
        return
    with pytest.raises(IreeError) as e:
        compile_symbolic(_CASES[model], tmp_path)
    assert first_error(str(e.value).split("--- stderr ---", 1)[-1]) == IREE_REJECTS[model]


def test_a_minus_one_reshape_shape_runs_on_iree_but_fails_strict_validation(tmp_path):
    """Why the writer keeps computed RESHAPE shapes: IREE takes ``CONST_SHAPE [-1, 24]`` and runs it right,
    but tosa-opt's strict TOSA validation refuses the inferable −1 (the reference model too reads it as unknown)."""
    shape = ShapeRecord("s", 2, np.array([-1, 24], "<i8").view(np.uint8))
    block = _block(["x"], [OpRecord("RESHAPE", {}, ["x", "s"], ["y"])], [_tensor("x", (-1, 4, 6)),
                   _tensor("y", (-1, 24))], [shape])
    (tmp_path / "m.mlir").write_text(records_to_mlir(block))
    proc = run_tool("tosa-opt", [tmp_path / "m.mlir", TARGET_1_1, "--tosa-validate=strict-op-spec-alignment",
                                 "-o", "/dev/null"])
    assert proc.returncode != 0 and "shape input contains inferable dimension (-1)" in proc.stderr
    vmfb = compile_mlir(tmp_path / "m.mlir", tmp_path / "m.vmfb")
    for n in (1, 3):
        x = np.random.default_rng(n).standard_normal((n, 4, 6)).astype(np.float32)
        (tmp_path / str(n)).mkdir()
        (got,) = run_module(vmfb, [x], 1, tmp_path / str(n))
        np.testing.assert_array_equal(got, x.reshape(n, 24))
