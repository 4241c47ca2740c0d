"""Seeds 003 and 004 at the command line: one symbol after a recorded equality, one entry per fact,
each constraint's status and provenance in ``inspect`` and the report, and data-dependent symbols.

The MatMul model's run is compared with onnxruntime after binding only the
symbol the user knows (``j``), which binds ``k`` through the recorded ``k == j``.
Every JSON document validates against ``schemas/report.schema.json``.
"""
from __future__ import annotations

import json

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from .conftest import save_model, tensor
from .test_convert import report_validator


def _matmul_model(tmp_path):
    """y = a @ b, z = a + a2 with a: [2, k], b: [j, 3], a2: [2, j] (MatMul records k == j)."""
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm"),
             helper.make_node("Add", ["a", "a2"], ["z"], name="add")]
    return save_model(tmp_path / "mm.onnx", nodes, [tensor("a", [2, "k"]), tensor("b", ["j", 3]),
                                                    tensor("a2", [2, "j"])], [tensor("y", None), tensor("z", None)])


def _inspect(cli, path) -> dict:
    r = cli("inspect", path, "--json")
    assert r.exit_code == 0, r
    doc = json.loads(r.stdout)
    report_validator().validate(doc)
    return doc


def test_recorded_equality_gives_one_symbol_and_one_entry(cli, tmp_path):
    doc = _inspect(cli, _matmul_model(tmp_path))
    assert [v["shape"] for v in doc["inputs"]] == [[2, "k"], ["k", 3], [2, "k"]]
    assert doc["needed_symbols"] == ["k"]
    (c,) = doc["constraints"]           # no broadcastable(k, j) for the Add: k == j proves it
    assert (c["text"], c["status"], c["location"], c["reason"]) == (
        "k == j", "checked_at_binding", "MatMul 'mm'", "MatMul inner dims")
    assert c["constraint"] == c["text"] and c["kind"] == "eq"


def test_binding_the_alias_binds_the_symbol_and_matches_onnxruntime(cli, tmp_path):
    model = _matmul_model(tmp_path)
    rng = np.random.default_rng(0)
    feeds = {"a": rng.standard_normal((2, 4)).astype(np.float32), "b": rng.standard_normal((4, 3)).astype(np.float32),
             "a2": rng.standard_normal((2, 4)).astype(np.float32)}
    np.savez(tmp_path / "in.npz", **feeds)
    r = cli("convert", model, "--bind", "j=4", "-o", "mm.tosa", "--inputs", "in.npz", "--outputs", "out.npz",
            "--report", "r.json")
    assert r.exit_code == 0, r
    doc = json.loads((tmp_path / "r.json").read_text())
    report_validator().validate(doc)
    assert {b["name"]: b["value"] for b in doc["bindings"]} == {"j": 4, "k": 4}
    assert doc["constraints"][0]["holds"] is True and doc["constraints"][0]["status"] == "checked_at_binding"
    want = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = np.load(tmp_path / "out.npz")
    np.testing.assert_allclose(got["y"], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["z"], want[1], rtol=1e-6)


def test_binding_both_symbols_differently_reports_the_constraint(cli, tmp_path):
    r = cli("convert", _matmul_model(tmp_path), "--bind", "j=4", "--bind", "k=5", "-o", "mm.tosa")
    assert r.exit_code == 4 and "constraint k == j does not hold" in r.stderr and "MatMul 'mm'" in r.stderr


def test_reshape_gives_one_entry(cli, tmp_path):
    shape = numpy_helper.from_array(np.array([-1, 4], np.int64), "s")
    path = save_model(tmp_path / "rs.onnx", [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
                      [tensor("x", ["n"])], [tensor("y", None)], [shape])
    doc = _inspect(cli, path)
    assert [(c["text"], c["status"], c["location"]) for c in doc["constraints"]] == [
        ("n % 4 == 0", "checked_at_binding", "Reshape 'rs'")]


def test_a_later_fact_marks_an_entry_proven(cli, tmp_path):
    # Compress records n >= m (the condition is no longer than the axis); the Concat then records n == m,
    # which proves it: the entry stays, with its provenance, as proven
    nodes = [helper.make_node("Compress", ["x", "cond"], ["y"], axis=0, name="cmp"),
             helper.make_node("Concat", ["p", "q"], ["c"], axis=0, name="cat")]
    path = save_model(tmp_path / "p.onnx", nodes, [tensor("x", ["n"]), tensor("cond", ["m"], TensorProto.BOOL),
                                                   tensor("p", [1, "n"]), tensor("q", [1, "m"])],
                      [tensor("y", None), tensor("c", None)])
    doc = _inspect(cli, path)
    assert [(c["text"], c["status"], c["location"]) for c in doc["constraints"]] == [
        ("n >= m", "proven", "Compress 'cmp'"), ("n == m", "checked_at_binding", "Concat 'cat'")]
    assert "proven" in cli("inspect", path).stdout


def test_nonzero_count_is_exact_and_data_dependent(cli, tmp_path):
    path = save_model(tmp_path / "nz.onnx", [helper.make_node("NonZero", ["x"], ["y"], name="nz")],
                      [tensor("x", [3, 4])], [tensor("y", None, TensorProto.INT64)])
    (s,) = _inspect(cli, path)["symbols"]
    assert (s["name"], s["kind"], s["extent"], s["data_dependent"], s["bound"]) == ("y.1", "Exact", "Exact", True, "12")
    from tosaconv.diagnostics.render import inspect_tables
    (row,) = inspect_tables({"symbols": [{**s, "origin": "hand-written"}]})[1].columns[2].cells
    assert str(row) == "hand-written [data-dependent]"     # said once, also when the origin does not say it


def test_disagreeing_arrays_name_the_recorded_equality(tmp_path):
    from tosaconv import api
    from tosaconv.diagnostics import ShapeError
    graph = api.load(str(_matmul_model(tmp_path)))
    feeds = {"a": np.ones((2, 3), np.float32), "b": np.ones((4, 3), np.float32), "a2": np.ones((2, 4), np.float32)}
    try:
        api.run(graph, feeds)
    except ShapeError as e:
        (d,) = e.diagnostics
        assert e.exit_code == 4
        assert "input 'b' axis 0 binds symbol 'k' = 4, but input 'a' axis 1 bound it to 3" in d.message
        assert "the model calls this dim 'j', which must equal 'k' (k == j, recorded by MatMul 'mm'" in d.message
    else:
        raise AssertionError("arrays of disagreeing inner dims ran")
