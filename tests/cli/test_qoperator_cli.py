"""The command line on onnxruntime's com.microsoft ops: ``ops`` lists them with their domain,
``convert`` takes a QOperator model, and an unknown contrib op is listed with the other unsupported
ops (exit 3), its domain named."""
from __future__ import annotations

import json

import onnx
from onnx import helper

from tests.importers.onnx.qoperator_models import I8, qop_model

from .test_convert import report_validator
from .test_errors import assert_clean_failure


def test_ops_lists_the_com_microsoft_ops_with_their_domain(cli):
    doc = json.loads(cli("ops", "--json").stdout)
    report_validator().validate(doc)
    ms = {r["op_type"]: r for r in doc["ops"] if r["domain"] == "com.microsoft"}
    assert {"QLinearAdd", "QLinearConcat", "QGemm", "QuantizeLinear", "DequantizeLinear"} <= set(ms)
    assert all(r["opsets"] == [1, 1] and r["versions"] == [1] for r in ms.values())
    text = cli("ops").stdout
    assert f"{len(ms)} com.microsoft" in " ".join(text.split()) and "com.microsoft" in text


def test_convert_a_qoperator_model(cli, tmp_path):
    path = tmp_path / "qadd.onnx"
    onnx.save(qop_model("QLinearAdd", I8, [["N", 3], [1, 3]], 0.03, (1, 129)), str(path))
    r = cli("convert", path, "-o", "q.tosa", "--bind", "N=2", "--run", "--json")
    assert r.exit_code == 0, r
    doc = json.loads(r.stdout)
    report_validator().validate(doc)
    assert "QLinearAdd" in doc["op_histogram"]


def test_unknown_contrib_op_is_listed_with_its_domain(cli, tmp_path):
    model = qop_model("QLinearSigmoid", I8, [["N", 4]], 1 / 256, (-128, 0))
    model.graph.node[-1].op_type = "QLinearGelu"
    model.graph.node.append(helper.make_node("Det", ["x0"], ["d"], name="det0"))
    path = tmp_path / "unknown.onnx"
    onnx.save(model, str(path))
    r = cli("convert", path, "-o", "m.tosa")
    assert_clean_failure(r, 3)
    text = " ".join(r.stderr.split())
    assert "unsupported op QLinearGelu (com.microsoft, no converter" in text
    assert "unsupported op Det (ai.onnx" in text
