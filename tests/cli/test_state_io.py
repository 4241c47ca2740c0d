"""``--state-as-io`` on the command line, and the warning every report carries for a program with variables.

The stateful model is the shipped ``running_sum.tflite`` (one float variable,
``total``). Every JSON document is validated against the report schema.
"""
from __future__ import annotations

import json

import numpy as np

from tosaconv.emit.deserialize import deserialize
from tosaconv.importers.tflite.builder import ModelBuilder

from .conftest import REPO
from .test_convert import report_validator

RUNNING_SUM = REPO / "sample_models" / "tflite" / "running_sum.tflite"


def _doc(r) -> dict:
    assert r.exit_code == 0, r
    doc = json.loads(r.stdout)
    report_validator().validate(doc)
    return doc


def test_a_program_with_variables_warns_in_the_report_and_on_stderr(cli):
    doc = _doc(cli("convert", RUNNING_SUM, "-o", "v.tosa", "--json"))
    (w,) = doc["warnings"]
    assert w["severity"] == "warning" and w["code"] == "W-STATE-VARIABLES"
    assert "'total'" in w["message"] and "Vela" in w["notes"][0] and "--state-as-io" in w["hint"]
    assert doc["state_io"] == []
    r = cli("convert", RUNNING_SUM, "-o", "v2.tosa")
    assert r.exit_code == 0 and r.stdout.startswith("converted running_sum.tflite")
    assert "warning[W-STATE-VARIABLES]" in r.stderr and "--state-as-io" in r.stderr
    for command in (("import", RUNNING_SUM, "-o", "v.tosair"), ("specialize", RUNNING_SUM, "-o", "s.tosa"),
                    ("run", RUNNING_SUM, "-o", "r.npz")):
        assert [w["code"] for w in _doc(cli(*command, "--json"))["warnings"]] == ["W-STATE-VARIABLES"]


def test_convert_with_state_as_io_reports_the_pairs_and_no_warning(cli, tmp_path):
    r = cli("convert", RUNNING_SUM, "--state-as-io", "-o", "io.tosa", "--report", "r.json")
    assert r.exit_code == 0 and r.stderr == ""
    doc = json.loads((tmp_path / "r.json").read_text())
    report_validator().validate(doc)
    assert doc["warnings"] == []
    assert doc["state_io"] == [{"variable": "total", "input": "state_in:total", "output": "state_out:total",
                                "dtype": "f32", "shape": [1, 4]}]
    block = deserialize((tmp_path / "io.tosa").read_bytes())
    assert block.inputs == ["x", "state_in:total"] and block.outputs == ["y", "state_out:total"]
    assert not [t for t in block.tensors if t.variable_name is not None]


def test_specialize_with_state_as_io_writes_the_same_file_as_convert(cli, tmp_path):
    assert cli("convert", RUNNING_SUM, "--state-as-io", "-o", "c.tosa").exit_code == 0
    assert cli("import", RUNNING_SUM, "-o", "p.tosair").exit_code == 0
    doc = _doc(cli("specialize", "p.tosair", "--state-as-io", "-o", "s.tosa", "--json"))
    assert doc["warnings"] == [] and [p["variable"] for p in doc["state_io"]] == ["total"]
    assert (tmp_path / "s.tosa").read_bytes() == (tmp_path / "c.tosa").read_bytes()
    # the state-as-io program as text (names with ':' are quoted) reads back to the same file
    assert cli("convert", RUNNING_SUM, "--state-as-io", "-o", "c2.tosa", "--ir", "io.tosair").exit_code == 0
    assert '%"state_in:total"' in (tmp_path / "io.tosair").read_text()
    assert cli("specialize", "io.tosair", "-o", "t.tosa").exit_code == 0
    assert (tmp_path / "t.tosa").read_bytes() == (tmp_path / "c.tosa").read_bytes()


def test_running_a_state_io_file_without_its_initial_state_is_refused(cli, tmp_path):
    assert cli("convert", RUNNING_SUM, "--state-as-io", "-o", "io.tosa").exit_code == 0
    np.savez(tmp_path / "x.npz", x=np.ones((1, 4), np.float32))
    r = cli("run", "io.tosa", "--inputs", "x.npz", "-o", "o.npz", "--json")
    assert r.exit_code == 4
    (d,) = json.loads(r.stdout)["diagnostics"]
    assert d["code"] == "E-INPUT-MISSING" and "'state_in:total'" in d["message"]
    assert "carries its state as I/O" in d["hint"] and "--state-as-io --run" in d["hint"]
    assert not (tmp_path / "o.npz").exists()


def test_running_a_state_io_file_chains_steps_from_a_given_state(cli, tmp_path):
    assert cli("convert", RUNNING_SUM, "--state-as-io", "-o", "io.tosa").exit_code == 0
    np.savez(tmp_path / "a.npz", x=np.ones((1, 4), np.float32), **{"state_in:total": np.full((1, 4), 10, np.float32)})
    np.savez(tmp_path / "b.npz", x=np.full((1, 4), 2, np.float32))
    doc = _doc(cli("run", "io.tosa", "--inputs", "a.npz", "--inputs", "b.npz", "-o", "o.npz", "--json"))
    assert doc["warnings"] == [] and doc["state_io"][0]["input"] == "state_in:total"
    out = np.load(tmp_path / "o.npz")
    np.testing.assert_array_equal(out["step1/y"], np.full((1, 4), 11, np.float32))
    np.testing.assert_array_equal(out["step2/state_in:total"], np.full((1, 4), 11, np.float32))
    np.testing.assert_array_equal(out["step2/y"], np.full((1, 4), 13, np.float32))


def test_state_as_io_leaves_a_model_without_variables_as_it_is(cli, symbolic_model, tmp_path):
    args = (symbolic_model, "--bind", "batch=1", "--bind", "seq=2")
    assert cli("convert", *args, "-o", "a.tosa").exit_code == 0
    doc = _doc(cli("convert", *args, "--state-as-io", "-o", "b.tosa", "--json"))
    assert doc["warnings"] == [] and doc["state_io"] == []
    assert (tmp_path / "a.tosa").read_bytes() == (tmp_path / "b.tosa").read_bytes()


def test_a_model_that_already_uses_a_state_name_is_refused(cli, tmp_path):
    m = ModelBuilder()
    x, y = m.input("state_out:v", [2]), m.tensor("y", [2])
    h = m.tensor("h", [], "RESOURCE")
    m.op("VAR_HANDLE", [], [h], "VarHandleOptions", SharedName="v")
    m.op("ASSIGN_VARIABLE", [h, x], [])
    m.op("READ_VARIABLE", [h], [y])
    m.output(y)
    (tmp_path / "clash.tflite").write_bytes(m.finish())
    r = cli("convert", "clash.tflite", "--state-as-io", "-o", "c.tosa", "--json")
    assert r.exit_code == 3
    (d,) = json.loads(r.stdout)["diagnostics"]
    assert d["code"] == "E-STATE-NAME" and "'state_out:v'" in d["message"] and d["hint"]
