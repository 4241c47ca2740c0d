"""``-o OUT.mlir`` on the command line, and the refusal of output suffixes tosaconv does not write.

``convert``, ``specialize`` and ``convert --bind-grid`` write TOSA MLIR text
when the output ends in ``.mlir`` (checked by parsing it with the official
``tosa-opt``, and against the flatbuffer the same command writes for
``.tosa``, through tosa-opt's deserializer); the report lists it as kind
``mlir``. Any other suffix is a usage error (exit 2) whose message lists the
known ones, and nothing is written.
"""
from __future__ import annotations

import json

import pytest

from tests.emit.test_mlir_tosa_opt import normalized
from tests.tosa_tools import run_tool

from .conftest import REPO
from .test_convert import report_validator

CNN = REPO / "sample_models" / "small_cnn.onnx"
BIND = ("--bind", "N=1", "--bind", "H=8", "--bind", "W=8")


def parses(path) -> bool:
    proc = run_tool("tosa-opt", [path, "-o", "/dev/null"])
    return proc.returncode == 0


def test_convert_writes_mlir_and_reports_it(cli, tmp_path):
    r = cli("convert", CNN, *BIND, "-o", "out/cnn.mlir", "--run", "--report", "r.json", "--json")
    assert r.exit_code == 0, r
    doc = json.loads(r.stdout)
    report_validator().validate(doc)
    assert [w["kind"] for w in doc["outputs_written"]][:2] == ["mlir", "npz"]
    text = (tmp_path / "out" / "cnn.mlir").read_text()
    assert text.startswith('"builtin.module"() ({') and '"tosa.conv2d"(' in text
    assert parses(tmp_path / "out" / "cnn.mlir") and (tmp_path / "out" / "cnn.npz").exists()


def test_mlir_and_tosa_outputs_hold_the_same_program(cli, tmp_path):
    assert cli("convert", CNN, *BIND, "-o", "cnn.mlir").exit_code == 0
    assert cli("convert", CNN, *BIND, "-o", "cnn.TOSA").exit_code == 0   # suffixes are case-insensitive
    assert (tmp_path / "cnn.TOSA").read_bytes()[4:8] == b"TOSA"
    ours = run_tool("tosa-opt", [tmp_path / "cnn.mlir", "--mlir-print-op-generic", "-o", tmp_path / "a.mlir"])
    theirs = run_tool("tosa-opt", [f"--tosa-deserialize=tosa-flatbuffer-filename={tmp_path / 'cnn.TOSA'}",
                                   "--mlir-print-op-generic", "/dev/null", "-o", tmp_path / "b.mlir"])
    assert ours.returncode == 0 and theirs.returncode == 0
    assert normalized((tmp_path / "a.mlir").read_text()) == normalized((tmp_path / "b.mlir").read_text())


def test_specialize_writes_mlir(cli, tmp_path):
    assert cli("import", CNN, "-o", "cnn.tosair").exit_code == 0
    r = cli("specialize", "cnn.tosair", *BIND, "-o", "cnn.mlir")
    assert r.exit_code == 0, r
    assert parses(tmp_path / "cnn.mlir")


def test_grid_writes_mlir_variants(cli, tmp_path):
    r = cli("convert", CNN, "--bind-grid", "H=8,12", "--bind", "N=1", "--bind", "W=8", "-o", "out/cnn_{H}.mlir")
    assert r.exit_code == 0, r
    for h in (8, 12):
        path = tmp_path / "out" / f"cnn_{h}.mlir"
        assert parses(path) and f"tensor<1x3x{h}x8xf32>" in path.read_text()


@pytest.mark.parametrize("command", [
    ("convert", str(CNN), *BIND, "-o", "out/cnn.bin"),
    ("convert", str(CNN), *BIND, "-o", "out/cnn.tosair"),
    ("convert", str(CNN), *BIND, "-o", "out/cnn"),
    ("specialize", str(CNN), *BIND, "-o", "out/cnn.onnx"),
    ("convert", str(CNN), "--bind-grid", "H=8,12", "--bind", "N=1", "--bind", "W=8", "-o", "out/cnn_{H}.bin"),
], ids=["bin", "tosair", "none", "specialize", "grid"])
def test_unknown_output_suffix_is_a_usage_error(cli, tmp_path, command):
    r = cli(*command, "--run" if "--bind-grid" not in command and command[0] == "convert" else "-q")
    assert r.exit_code == 2, r
    assert "E-OUTPUT-FORMAT" in r.stderr and ".tosa (TOSA 1.0 flatbuffer), .mlir (TOSA MLIR text)" in r.stderr
    assert "--ir OUT.tosair" in r.stderr
    assert not (tmp_path / "out").exists()
