"""``--profile``, ``--level`` and the ``tosa`` section of reports and ``inspect``, end to end.

``--profile int`` on a float model exits 3 and lists every source node that stays float, each with
its location and reason, in one JSON failure document; on an int8 model it converts. ``--profile fp``
refuses integer-only ops. ``--level 8k`` refuses an op past a limit of level 8K and names it, while
the default only reports the violation. ``inspect`` states the requirements of a model and of a
``.tosa``. Every document validates against ``schemas/report.schema.json``.
"""
from __future__ import annotations

import json
from pathlib import Path

import onnx
from onnx import helper

from .conftest import SCHEMAS, save_model, tensor

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
INT8 = SAMPLES / "tflite" / "int8_cnn.tflite"
FLOAT_CNN = SAMPLES / "small_cnn.onnx"
BINDS = ("--bind", "N=1", "--bind", "H=8", "--bind", "W=8")


def _validate(doc: dict):
    import jsonschema
    jsonschema.Draft202012Validator(json.loads((SCHEMAS / "report.schema.json").read_text())).validate(doc)


def test_profile_int_on_a_float_model_lists_every_float_node_with_location_and_reason(run_module, tmp_path):
    r = run_module("convert", FLOAT_CNN, *BINDS, "-o", "m.tosa", "--profile", "int", "--json")
    assert r.exit_code == 3, r
    doc = json.loads(r.stdout)
    _validate(doc)
    head, *islands = doc["diagnostics"]
    assert head["code"] == "E-PROFILE" and "PRO-FP" in head["message"] and "quantize" in head["hint"]
    assert {d["code"] for d in islands} == {"E-PROFILE-FLOAT"}
    nodes = {n.name for n in onnx.load(str(FLOAT_CNN)).graph.node}
    listed = {d["location"]["name"] for d in islands}
    assert listed <= nodes and {"stem/Conv", "block/residual", "head/Gemm"} <= listed
    assert all(d["notes"] == [f"why: the model is a float model: {d['location']['op_type']} computes in float "
                              "like the rest of it"] for d in islands)
    assert not (tmp_path / "m.tosa").exists()


def test_profile_int_human_output_names_each_node(run_module):
    r = run_module("convert", FLOAT_CNN, *BINDS, "-o", "m.tosa", "--profile", "int")
    assert r.exit_code == 3 and "error[E-PROFILE-FLOAT]: stays float: Conv 'stem/Conv'" in r.stderr, r


def test_profile_int_converts_an_int8_model_and_fp_refuses_it(cli, tmp_path):
    ok = cli("convert", INT8, "-o", "m.tosa", "--profile", "int", "--level", "8k", "--json")
    assert ok.exit_code == 0, ok
    doc = json.loads(ok.stdout)
    _validate(doc)
    assert doc["tosa"]["profiles"] == ["PRO-INT"] and doc["tosa"]["level"]["fits"]
    refused = cli("convert", INT8, "-o", "f.tosa", "--profile", "fp", "--json")
    assert refused.exit_code == 3, refused
    ops = json.loads(refused.stdout)["diagnostics"][1:]
    assert ops and {d["code"] for d in ops} == {"E-PROFILE-OP"}
    assert any(d["message"].startswith("CONV2D (signed 8x8 with int32 accumulate) is outside PRO-FP") for d in ops)


def test_level_8k_refuses_a_rank_7_op_and_the_default_reports_it(cli, tmp_path):
    model = save_model(tmp_path / "r7.onnx", [helper.make_node("Add", ["x", "x"], ["y"], name="add7")],
                       [tensor("x", [1] * 7)], [tensor("y", None)])
    refused = cli("specialize", model, "-o", "a.tosa", "--level", "8k", "--json")
    assert refused.exit_code == 3, refused
    [d] = json.loads(refused.stdout)["diagnostics"]
    assert d["code"] == "E-LEVEL" and d["location"]["text"] == "Add 'add7'"
    assert "rank(shape) = 7 > MAX_RANK 6" in d["message"]
    reported = cli("convert", model, "-o", "b.tosa", "--json")
    assert reported.exit_code == 0, reported
    level = json.loads(reported.stdout)["tosa"]["level"]
    assert not level["fits"] and [(v["op"], v["limit"], v["value"]) for v in level["violations"]] == [
        ("ADD", "MAX_RANK", 7)]


def test_inspect_states_the_requirements_of_a_model_and_of_its_tosa(cli, tmp_path):
    running_sum = SAMPLES / "tflite" / "running_sum.tflite"
    doc = json.loads(cli("inspect", running_sum, "--json").stdout)
    _validate(doc)
    assert doc["tosa"]["exact"] and doc["tosa"]["extensions"] == ["EXT-VARIABLE"]
    assert cli("convert", INT8, "-o", "m.tosa").exit_code == 0
    doc = json.loads(cli("inspect", tmp_path / "m.tosa", "--json").stdout)
    _validate(doc)
    assert doc["tosa"]["profiles"] == ["PRO-INT"] and doc["tosa"]["float_islands"] == []
    human = cli("inspect", running_sum)
    assert "TOSA 1.0.1 needs: PRO-FP, EXT-VARIABLE" in human.stdout and "level 8K: fits" in human.stdout


def test_inspect_of_a_symbolic_model_says_the_answer_is_not_exact(cli):
    doc = json.loads(cli("inspect", SAMPLES / "tiny_transformer.onnx", "--json").stdout)
    assert doc["tosa"]["profiles"] == ["PRO-FP"] and doc["tosa"]["exact"] is False


def test_bad_profile_is_a_usage_error(cli):
    r = cli("convert", INT8, "-o", "m.tosa", "--profile", "int4", "--json")
    assert r.exit_code == 2 and json.loads(r.stdout)["diagnostics"][0]["code"] == "E-USAGE"
