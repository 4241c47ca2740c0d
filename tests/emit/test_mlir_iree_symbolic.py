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
static conversion (1e-5 relative).
"""
from __future__ import annotations

import pytest

from tests.iree_symbolic import IreeError, compile_symbolic, first_error, mismatches, sample_cases

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
