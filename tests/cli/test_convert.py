"""``tosaconv convert``: success, outputs, report, determinism and atomic writes."""
from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest

from tosaconv.fileio import npz_bytes

from .conftest import SCHEMAS

BIND = ("--bind", "batch=2", "--bind", "seq=5")


def report_validator():
    return jsonschema.Draft202012Validator(json.loads((SCHEMAS / "report.schema.json").read_text()))


def test_convert_writes_tosa_and_summarizes(cli, symbolic_model, tmp_path):
    r = cli("convert", symbolic_model, *BIND, "-o", "build/sym.tosa")
    assert r.exit_code == 0, r
    data = (tmp_path / "build" / "sym.tosa").read_bytes()
    assert data[4:8] == b"TOSA"
    assert r.stdout.startswith("converted sym.onnx → build/sym.tosa:")
    assert "2 symbols bound (batch=2, seq=5)" in r.stdout and "1 file written" in r.stdout
    assert r.stdout.count("\n") == 1 and r.stderr == ""


def test_run_without_outputs_writes_npz_next_to_tosa(cli, symbolic_model, tmp_path):
    r = cli("convert", symbolic_model, *BIND, "-o", "out/sym.tosa", "--run")
    assert r.exit_code == 0, r
    arrays = np.load(tmp_path / "out" / "sym.npz")
    assert sorted(arrays.files) == ["x", "y"]
    x = arrays["x"]
    assert x.shape == (2, 5, 4) and x.dtype == np.float32
    bias = np.array([-0.2, -0.1, 0.0, 0.1], np.float32)
    np.testing.assert_allclose(arrays["y"], np.maximum(x + bias, 0), rtol=1e-6)


def test_seed_makes_random_inputs_repeatable(cli, symbolic_model, tmp_path):
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        assert cli("convert", symbolic_model, *BIND, "-o", f"{name}.tosa", "--outputs", f"{name}.npz",
                   "--seed", seed).exit_code == 0
    a, b, c = (np.load(tmp_path / f"{n}.npz")["x"] for n in "abc")
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()


def test_inputs_npz_binds_and_feeds_the_run(cli, symbolic_model, tmp_path):
    x = np.linspace(-1, 1, 3 * 7 * 4, dtype=np.float32).reshape(3, 7, 4)
    (tmp_path / "in.npz").write_bytes(npz_bytes({"x": x}))
    r = cli("convert", symbolic_model, "--inputs", "in.npz", "-o", "m.tosa", "--outputs", "o.npz", "--json")
    assert r.exit_code == 0, r
    doc = json.loads(r.stdout)
    assert [(b["name"], b["value"], b["source"]) for b in doc["bindings"]] == [
        ("batch", 3, "in.npz array 'x'"), ("seq", 7, "in.npz array 'x'")]
    out = np.load(tmp_path / "o.npz")
    assert np.array_equal(out["x"], x)
    assert doc["run"]["inputs"][0]["origin"] == "in.npz"


def test_tosa_is_byte_identical_across_runs(cli, symbolic_model, tmp_path):
    for name in ("one", "two"):
        assert cli("convert", symbolic_model, *BIND, "-o", f"{name}.tosa").exit_code == 0
    assert (tmp_path / "one.tosa").read_bytes() == (tmp_path / "two.tosa").read_bytes()


def test_report_validates_against_the_schema(cli, symbolic_model, tmp_path):
    (tmp_path / "b.json").write_text('{"batch": 2}')
    r = cli("convert", symbolic_model, "--bindings", "b.json", "--input-shape", "x=2,5,4", "-o", "m.tosa",
            "--ir", "m.tosair", "--run", "--report", "r.json")
    assert r.exit_code == 0, r
    report = json.loads((tmp_path / "r.json").read_text())
    report_validator().validate(report)
    assert [(b["name"], b["source"]) for b in report["bindings"]] == [("batch", "b.json"),
                                                                     ("seq", "--input-shape x=2,5,4")]
    written = {w["kind"]: w for w in report["outputs_written"]}
    assert set(written) == {"tosa", "tosair", "npz"}
    import hashlib
    assert written["tosa"]["sha256"] == hashlib.sha256((tmp_path / "m.tosa").read_bytes()).hexdigest()
    assert [s["stage"] for s in report["timings"]["stages"]][:4] == ["load", "bindings", "specialize", "emit"]
    assert report["op_histogram"]["Relu"] and report["run"]["outputs"][0]["name"] == "y"


def test_report_lists_checked_constraints(cli, broadcast_model, tmp_path):
    r = cli("convert", broadcast_model, "--bind", "n=4", "--bind", "m=1", "-o", "m.tosa", "--json")
    assert r.exit_code == 0, r
    doc = json.loads(r.stdout)
    report_validator().validate(doc)
    (c,) = doc["constraints"]
    assert c["text"] == "broadcastable(n, m)" and c["op_type"] == "Add" and c["node"] == "add0"
    assert (c["lhs_value"], c["rhs_value"], c["holds"]) == (4, 1, True)


def _listing(path):
    return sorted(p.name for p in path.iterdir())


def test_failed_convert_leaves_no_output(cli, symbolic_model, tmp_path):
    before = _listing(tmp_path)
    r = cli("convert", symbolic_model, "--bind", "batch=2", "-o", "out.tosa", "--ir", "out.tosair", "--run",
            "--report", "r.json")
    assert r.exit_code == 4, r
    assert _listing(tmp_path) == before


def test_failed_convert_does_not_clobber_an_existing_output(cli, symbolic_model, tmp_path):
    (tmp_path / "out.tosa").write_bytes(b"previous build")
    r = cli("convert", symbolic_model, "--bind", "batch=2", "-o", "out.tosa")
    assert r.exit_code == 4, r
    assert (tmp_path / "out.tosa").read_bytes() == b"previous build"


def test_failure_while_writing_leaves_nothing(cli, symbolic_model, tmp_path):
    (tmp_path / "blocker").write_text("a file where a directory is needed")
    r = cli("convert", symbolic_model, *BIND, "-o", "out.tosa", "--report", "blocker/r.json")
    assert r.exit_code == 2, r
    assert "cannot write report 'blocker/r.json'" in r.stderr
    assert not (tmp_path / "out.tosa").exists()
    assert _listing(tmp_path) == ["blocker", "sym.onnx"]


@pytest.mark.parametrize("extra", [("--ir", "m.tosa"), ("--outputs", "sym.onnx"), ("--report", "./m.tosa")])
def test_output_paths_must_not_clash(cli, symbolic_model, extra):
    r = cli("convert", symbolic_model, *BIND, "-o", "m.tosa", *extra)
    assert r.exit_code == 2, r
    assert "is the same file as" in r.stderr
