"""A model of ai.onnx.ml ops only (a scikit-learn pipeline exported by skl2onnx imports no default
op set) gets the usual E-UNSUPPORTED-OP list naming every op and its domain, exit 3; so does one
that mixes ai.onnx.ml ops into an ONNX graph."""
from __future__ import annotations

import json

from onnx import helper

from .conftest import tensor
from .test_errors import assert_clean_failure


def _save(path, nodes, opsets):
    graph = helper.make_graph(nodes, "ml", [tensor("x", [1, 3])], [tensor("y", None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 10
    path.write_bytes(model.SerializeToString())
    return path


def _ml_nodes():
    return [helper.make_node("Scaler", ["x"], ["s"], name="scale0", domain="ai.onnx.ml", offset=[0.0] * 3,
                             scale=[2.0] * 3),
            helper.make_node("Normalizer", ["s"], ["n"], name="norm0", domain="ai.onnx.ml", norm="L2"),
            helper.make_node("Scaler", ["n"], ["y"], name="scale1", domain="ai.onnx.ml", offset=[1.0] * 3,
                             scale=[1.0] * 3)]


def test_ml_only_model_lists_its_ops_with_their_domain(cli, tmp_path):
    path = _save(tmp_path / "ml.onnx", _ml_nodes(), [("ai.onnx.ml", 3)])
    r = cli("convert", path, "-o", "m.tosa", "--json")
    assert_clean_failure(r, 3)
    diags = json.loads(r.stdout)["diagnostics"]
    assert [d["code"] for d in diags] == ["E-UNSUPPORTED-OP", "E-UNSUPPORTED-OP"]
    assert "unsupported op Scaler (ai.onnx.ml, no converter for this op of ai.onnx.ml version 3): 2 node(s)" \
        in diags[0]["message"]
    assert diags[0]["location"]["name"] == "scale0"
    assert "Normalizer (ai.onnx.ml" in diags[1]["message"] and diags[1]["location"]["name"] == "norm0"
    assert "imports no version of the default ONNX op set" not in r.stdout
    r = cli("convert", path, "-o", "m.tosa")
    assert_clean_failure(r, 3)
    assert "Scaler" in r.stderr and "Normalizer" in r.stderr and "ai.onnx.ml" in r.stderr


def test_ml_ops_inside_an_onnx_graph_are_listed_with_the_onnx_ones(cli, tmp_path):
    nodes = [helper.make_node("Det", ["x"], ["d"], name="det0")] + _ml_nodes()
    path = _save(tmp_path / "mixed.onnx", nodes, [("", 17), ("ai.onnx.ml", 3)])
    r = cli("convert", path, "-o", "m.tosa", "--json")
    assert_clean_failure(r, 3)
    messages = [d["message"] for d in json.loads(r.stdout)["diagnostics"]]
    assert len(messages) == 3 and "Det (ai.onnx" in messages[0] and "Scaler (ai.onnx.ml" in messages[1]


def test_default_domain_ops_in_a_model_without_the_default_op_set_say_so(cli, tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu0")]
    path = _save(tmp_path / "noimport.onnx", nodes, [("ai.onnx.ml", 3)])
    r = cli("convert", path, "-o", "m.tosa", "--json")
    assert_clean_failure(r, 3)
    (diag,) = json.loads(r.stdout)["diagnostics"]
    assert "unsupported op Relu (ai.onnx, the model does not import the default ONNX op set)" in diag["message"]

