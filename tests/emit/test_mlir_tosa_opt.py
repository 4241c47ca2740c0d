"""Our TOSA MLIR against the official ``tosa-opt`` (tosa-tools 2026.8.0), for every sample model.

For each sample at a static binding, ``tosa-opt`` must (a) parse our ``.mlir``
and pass ``--tosa-validate`` for the PRO-INT and PRO-FP profiles with every
1.0 extension, and (b) print it, in its own generic form, exactly as it prints
its own deserialization of our ``.tosa`` (``--tosa-deserialize``): the same
ops, operands, types, properties and constant values, so the two writers
agree op for op. The emitter's one-op cases (``tests/emit/cases*.py``: every
attribute kind, RESIZE modes, integer zero points) are checked the same way,
and so is control flow (COND_IF, WHILE_LOOP), on small TFLite models built in
the tests.
"""
from __future__ import annotations

import re
import subprocess

import pytest

from tests.emit import cases_misc, cases_nn  # noqa: F401 (they register their cases)
from tests.emit.cases import CASES
from tests.emit.mlir_samples import SAMPLES, static_sample
from tests.tosa_tools import run_tool
from tosaconv import api

EXTENSIONS = "int16,int4,bf16,fp8e4m3,fp8e5m2,fft,variable,controlflow,doubleround,inexactround"
TARGET_1_0 = f"--tosa-attach-target=profiles=pro_int,pro_fp extensions={EXTENSIONS}"


def validate(path, target: str = TARGET_1_0) -> subprocess.CompletedProcess:
    return run_tool("tosa-opt", [path, target, "--tosa-validate", "-o", "/dev/null"])


def normalized(text: str) -> list:
    """tosa-opt's generic print without the deserializer's module attributes, module-level variables sorted
    (their order is the deserializer's hash order)."""
    text = re.sub(r'\}\) \{tosa\.description = [^}]*\} : \(\) -> \(\)', "}) : () -> ()", text)
    lines = text.splitlines()
    variables = sorted(line for line in lines if line.startswith('  "tosa.variable"('))
    others = [line for line in lines if not line.startswith('  "tosa.variable"(')]
    return others[:1] + variables + others[1:]


def check_against_deserializer(static, tmp_path):
    mlir, tosa = tmp_path / "m.mlir", tmp_path / "m.tosa"
    mlir.write_bytes(api.emit_mlir(static))
    tosa.write_bytes(api.emit(static))
    proc = validate(mlir)
    assert proc.returncode == 0, proc.stderr
    assert_prints_as_deserialized(mlir, tosa, tmp_path)


def assert_prints_as_deserialized(mlir, tosa, tmp_path):
    """tosa-opt prints our ``.mlir`` exactly as it prints its own deserialization of our ``.tosa``."""
    ours = run_tool("tosa-opt", [mlir, "--mlir-print-op-generic", "-o", tmp_path / "ours.mlir"])
    theirs = run_tool("tosa-opt", [f"--tosa-deserialize=tosa-flatbuffer-filename={tosa}",
                                   "--mlir-print-op-generic", "/dev/null", "-o", tmp_path / "theirs.mlir"])
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr + theirs.stderr
    assert normalized((tmp_path / "ours.mlir").read_text()) == normalized((tmp_path / "theirs.mlir").read_text())


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_parses_validates_and_equals_the_deserialized_tosa(name, tmp_path):
    _, static, _ = static_sample(name)
    check_against_deserializer(static, tmp_path)


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_op_case_equals_the_deserialized_tosa(case, tmp_path):
    check_against_deserializer(CASES[case]().graph, tmp_path)


@pytest.mark.parametrize("kind", ["if", "while"])
def test_control_flow_regions(kind, tmp_path):
    from tests.importers.tflite.harness import convert
    from tests.importers.tflite.test_control_flow import if_model, while_model
    data = if_model([2, 3]) if kind == "if" else while_model([2, 3])
    static = api.specialize(convert(data), {})
    assert {"if": "COND_IF", "while": "WHILE_LOOP"}[kind] in {op.op.name for op in static.ops}
    check_against_deserializer(static, tmp_path)


def test_validation_can_fail(tmp_path):
    # The check above is not vacuous: an int16 program without the int16 extension is refused.
    _, static, _ = static_sample("tflite/int16x8.tflite")
    (tmp_path / "m.mlir").write_bytes(api.emit_mlir(static))
    proc = validate(tmp_path / "m.mlir", "--tosa-attach-target=profiles=pro_int")
    assert proc.returncode != 0 and "requires extension" in proc.stderr
