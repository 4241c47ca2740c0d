"""``import``, ``specialize``, ``run``, ``inspect`` and ``ops``, and ``--json`` on each."""
from __future__ import annotations

import json

import numpy as np
import onnx
import onnx.defs
import pytest

from .test_convert import BIND, report_validator


def test_import_writes_parsable_ir(cli, symbolic_model, tmp_path):
    r = cli("import", symbolic_model, "-o", "sym.tosair")
    assert r.exit_code == 0, r
    assert r.stdout.startswith("imported sym.onnx → sym.tosair:") and "2 symbols" in r.stdout
    text = (tmp_path / "sym.tosair").read_text()
    assert "batch" in text and "seq" in text


def test_specialize_from_tosair_matches_convert(cli, symbolic_model, tmp_path):
    assert cli("import", symbolic_model, "-o", "sym.tosair").exit_code == 0
    r = cli("specialize", "sym.tosair", *BIND, "-o", "from_ir.tosa")
    assert r.exit_code == 0, r
    assert r.stdout.startswith("specialized sym.tosair → from_ir.tosa:")
    assert cli("convert", symbolic_model, *BIND, "-o", "direct.tosa").exit_code == 0
    assert (tmp_path / "from_ir.tosa").read_bytes() == (tmp_path / "direct.tosa").read_bytes()


def test_specialize_a_model_directly(cli, broadcast_model, tmp_path):
    r = cli("specialize", broadcast_model, "--bind", "n=3", "--bind", "m=3", "-o", "b.tosa", "--json")
    assert r.exit_code == 0, r
    doc = json.loads(r.stdout)
    report_validator().validate(doc)
    assert doc["command"] == "specialize" and doc["static_ops"] == {"ADD": 1}


@pytest.mark.parametrize("kind", ["onnx", "tosair", "tosa"])
def test_run_every_file_kind_gives_the_same_outputs(cli, symbolic_model, tmp_path, kind):
    assert cli("convert", symbolic_model, *BIND, "-o", "sym.tosa", "--ir", "sym.tosair", "--run").exit_code == 0
    expected = np.load(tmp_path / "sym.npz")
    target = {"onnx": symbolic_model, "tosair": "sym.tosair", "tosa": "sym.tosa"}[kind]
    r = cli("run", target, "--inputs", "sym.npz", "-o", "again.npz")
    assert r.exit_code == 0, r
    assert "1 output (y)" in r.stdout and "inputs sym.npz" in r.stdout
    got = np.load(tmp_path / "again.npz")
    assert sorted(got.files) == ["x", "y"]
    np.testing.assert_array_equal(got["y"], expected["y"])


def test_run_with_bindings_and_random_inputs(cli, broadcast_model, tmp_path):
    r = cli("run", broadcast_model, "--bind", "n=1", "--bind", "m=5", "--seed", "3", "-o", "o.npz",
            "--report", "r.json")
    assert r.exit_code == 0, r
    out = np.load(tmp_path / "o.npz")
    assert out["c"].shape == (5, 3)
    np.testing.assert_allclose(out["c"], out["a"] + out["b"], rtol=1e-6)
    report = json.loads((tmp_path / "r.json").read_text())
    report_validator().validate(report)
    assert report["run"]["inputs"][0]["origin"] == "random (seed 3)"


def test_run_symbolic_without_bindings_or_inputs_asks_for_bindings(cli, symbolic_model):
    r = cli("run", symbolic_model, "-o", "o.npz")
    assert r.exit_code == 4, r
    assert "batch" in r.stderr and "Traceback" not in r.stderr


def test_inspect_tables(cli, broadcast_model):
    r = cli("inspect", broadcast_model)
    assert r.exit_code == 0, r
    for needle in ("Inputs and outputs", "Symbols", "Constraint ledger", "Op histogram",
                   "[n, 3]", "input 'a' axis 0", "broadcastable(n, m)", "add0", "ADD ×1"):
        assert needle in r.stdout, needle


def test_inspect_json_is_the_describe_data(cli, broadcast_model):
    r = cli("inspect", broadcast_model, "--json")
    assert r.exit_code == 0 and r.stderr == "", r
    doc = json.loads(r.stdout)
    report_validator().validate(doc)
    assert [s["name"] for s in doc["symbols"]] == ["n", "m"]
    assert doc["inputs"][0]["shape"] == ["n", 3]
    assert doc["constraints"][0]["op_type"] == "Add" and doc["histogram"] == {"Add": {"ADD": 1}}


def test_ops_lists_supported_ops(cli):
    r = cli("ops")
    assert r.exit_code == 0, r
    assert "Add" in r.stdout and "Relu" in r.stdout
    doc = json.loads(cli("ops", "--json").stdout)
    report_validator().validate(doc)
    names = {o["op_type"] for o in doc["ops"]}
    assert {"Add", "Relu", "Reshape"} <= names and "Det" not in names
    add = next(o for o in doc["ops"] if o["op_type"] == "Add")
    schema_versions = {onnx.defs.get_schema("Add", opset).since_version for opset in range(11, 22)}
    assert add["opsets"] == [11, 21] and add["versions"] == sorted(schema_versions)
    assert "11-21" in r.stdout


def test_ops_publishes_the_limits_each_refusal_names(cli, tmp_path):
    """``ops`` shows each op's limits (a "limits" column; structured in --json), and a model that hits one
    is refused with a note naming a key that op publishes, the message quoting its text."""
    from onnx import helper
    from .conftest import save_model, tensor
    doc = json.loads(cli("ops", "--json").stdout)
    report_validator().validate(doc)
    limits = {o["op_type"]: {lim["key"]: lim for lim in o["limits"]} for o in doc["ops"]}
    assert set(limits["Dropout"]) == {"training-mode-from-data", "training-mode"}
    assert limits["Einsum"]["diagonal"]["kind"] == "attribute" and limits["Einsum"]["diagonal"]["subject"] == "equation"
    assert limits["ReduceSum"]["axes-from-data"]["text"] == "input axes computed from tensor data at run time"
    assert limits["Relu"] == {}
    text = cli("ops", env={"COLUMNS": "200"}).stdout
    assert "limits" in text and "[diagonal]" in text
    node = helper.make_node("Einsum", ["x"], ["y"], name="diag", equation="ii->i")
    save_model(tmp_path / "diag.onnx", [node], [tensor("x", [3, 3])], [tensor("y", None)])
    r = cli("convert", "diag.onnx", "-o", "d.tosa", "--json")
    d = json.loads(r.stdout)["diagnostics"][0]
    assert r.exit_code == 3 and d["code"] == "E-CONVERT"
    assert d["notes"] == ["published limit: diagonal (see `tosaconv ops`)"]
    assert limits["Einsum"]["diagonal"]["text"] in d["message"]


def test_ops_lists_tflite_ops_with_their_forms(cli):
    from tosaconv.importers.tflite.registry import resolve
    doc = json.loads(cli("ops", "--json").stdout)
    rows = {o["op_type"]: o["forms"] for o in doc["tflite_ops"]}
    assert {"CONV_2D", "STRIDED_SLICE", "SOFTMAX"} <= set(rows) and "CUSTOM" not in rows
    for op, forms in rows.items():
        assert forms == [f for f, q in (("float", False), ("quantized", True)) if resolve(op, q)], op
    assert "Supported TFLite builtin ops" in cli("ops").stdout


def test_ops_lists_the_tflite_custom_ops_it_converts(cli):
    doc = json.loads(cli("ops", "--json").stdout)
    assert doc["tflite_custom_ops"] == ["Convolution2DTransposeBias"]
    assert "Convolution2DTransposeBias" in cli("ops").stdout


@pytest.mark.parametrize("args", [
    ("convert", "{model}", "--bind", "batch=2", "--bind", "seq=5", "-o", "m.tosa", "--run", "--ir", "m.tosair"),
    ("import", "{model}", "-o", "m.tosair"),
    ("inspect", "{model}"),
    ("ops",),
    ("convert", "{model}", "-o", "m.tosa"),                     # a shape error
    ("convert", "{model}", "--bind", "oops", "-o", "m.tosa"),   # a usage error of ours
    ("convert", "{model}", "--frobnicate"),                     # a usage error of click's
    ("convert", "missing.onnx", "-o", "m.tosa"),
])
def test_json_mode_prints_exactly_one_document(cli, symbolic_model, args):
    r = cli(*(a.format(model=symbolic_model) for a in args), "--json")
    doc = json.loads(r.stdout)                 # fails on anything but exactly one document
    report_validator().validate(doc)
    assert doc["ok"] is (r.exit_code == 0) and doc["exit_code"] == r.exit_code
    assert r.stderr == ""


def test_python_m_tosaconv_exit_codes(run_module, symbolic_model, tmp_path):
    ok = run_module("convert", symbolic_model.name, *BIND, "-o", "m.tosa", "--json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["ok"] is True, ok
    unbound = run_module("convert", symbolic_model.name, "-o", "m.tosa", "--json")
    assert unbound.exit_code == 4 and json.loads(unbound.stdout)["exit_code"] == 4, unbound
    usage = run_module("convert", symbolic_model.name, "--bind", "x", "-o", "m.tosa")
    assert usage.exit_code == 2 and "--bind expects NAME=INT" in usage.stderr, usage
