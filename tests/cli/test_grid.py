"""``convert --bind-grid``, ``--jobs`` and ``--depfile``: many variants from one import, for build systems.

Each grid variant is compared byte for byte with a separate single
``convert --bind`` of the same bindings (the existing, independently tested
path); a failing variant's exit code and diagnostics come from the ledger
constraint the sample CNN records; the depfile is checked against the files
the test itself created.
"""
from __future__ import annotations

import hashlib
import os
import json
import shutil
import time

import pytest

from .conftest import REPO
from .test_convert import report_validator

TRANSFORMER = REPO / "sample_models" / "tiny_transformer.onnx"   # symbols batch, seq
CNN = REPO / "sample_models" / "small_cnn.onnx"                  # symbols N, H, W; ledger needs H >= 2


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_grid_variants_equal_separate_converts(cli, tmp_path):
    r = cli("convert", TRANSFORMER, "--bind-grid", "seq=4,8", "--bind-grid", "batch=1,2",
            "-o", "out/tt_s{seq}_b{batch}.tosa", "--ir", "tt.tosair", "--json")
    assert r.exit_code == 0, r
    doc = json.loads(r.stdout)
    report_validator().validate(doc)
    assert doc["ok"] and doc["outputs_written"][-1]["kind"] == "tosair" and len(doc["outputs_written"]) == 5
    assert cli("import", TRANSFORMER, "-o", "alone.tosair").exit_code == 0
    assert sha(tmp_path / "tt.tosair") == sha(tmp_path / "alone.tosair")
    assert [v["grid"] for v in doc["variants"]] == [{"seq": s, "batch": b} for s in (4, 8) for b in (1, 2)]
    for seq in (4, 8):
        for batch in (1, 2):
            one = cli("convert", TRANSFORMER, "--bind", f"seq={seq}", "--bind", f"batch={batch}",
                      "-o", f"single_{seq}_{batch}.tosa")
            assert one.exit_code == 0, one
            grid_file = tmp_path / "out" / f"tt_s{seq}_b{batch}.tosa"
            assert sha(grid_file) == sha(tmp_path / f"single_{seq}_{batch}.tosa")
    sources = {b["name"]: b["source"] for b in doc["variants"][0]["bindings"]}
    assert sources == {"seq": "--bind-grid seq=4", "batch": "--bind-grid batch=1"}
    assert doc["variants"][0]["outputs_written"][0]["sha256"] == sha(tmp_path / "out" / "tt_s4_b1.tosa")


def test_fixed_bind_combines_and_jobs_2_gives_the_same_files(cli, tmp_path):
    base = ("convert", CNN, "--bind", "N=1", "--bind-grid", "H=8,16", "--bind-grid", "W=8,12")
    assert cli(*base, "-o", "a/c_{H}_{W}.tosa").exit_code == 0
    r = cli(*base, "-o", "b/c_{H}_{W}.tosa", "--jobs", "2")
    assert r.exit_code == 0, r
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == ["c_16_12.tosa", "c_16_8.tosa", "c_8_12.tosa", "c_8_8.tosa"]
    assert [sha(tmp_path / "a" / n) for n in names] == [sha(tmp_path / "b" / n) for n in names]


def test_a_failing_variant_does_not_stop_the_others(cli, tmp_path):
    r = cli("convert", CNN, "--bind", "N=1", "--bind", "W=8", "--bind-grid", "H=1,8,16", "-o", "c_{H}.tosa",
            "--report", "r.json", "--json")
    assert r.exit_code == 4, r
    doc = json.loads(r.stdout)
    report_validator().validate(doc)
    assert doc == json.loads((tmp_path / "r.json").read_text())
    assert not doc["ok"] and doc["exit_code"] == 4 and doc["failed_variants"] == ["c_1.tosa"]
    bad = doc["variants"][0]
    assert bad["status"] == "failed" and bad["exit_code"] == 4 and bad["outputs_written"] == []
    assert bad["diagnostics"][0]["code"] == "E-CONSTRAINT" and "H >= 2" in bad["diagnostics"][0]["message"]
    assert [v["status"] for v in doc["variants"][1:]] == ["ok", "ok"]
    assert not (tmp_path / "c_1.tosa").exists()
    assert (tmp_path / "c_8.tosa").is_file() and (tmp_path / "c_16.tosa").is_file()


def test_terminal_names_the_failed_variant(cli):
    r = cli("convert", CNN, "--bind", "N=1", "--bind", "W=8", "--bind-grid", "H=1,8", "-o", "c_{H}.tosa")
    assert r.exit_code == 4, r
    assert "variant H=1 (c_1.tosa) failed, exit 4" in r.stderr and "H >= 2" in r.stderr
    assert "1 of 2 variants" in r.stdout and "1 failed: H=1" in r.stdout


@pytest.mark.parametrize("args, message", [
    (("--bind-grid", "seq=4,8", "--bind-grid", "batch=1,2", "-o", "tt_{seq}.tosa"), "does not mention {batch}"),
    (("--bind-grid", "seq=4,8", "--bind", "seq=4", "--bind", "batch=1", "-o", "t{seq}.tosa"),
     "bound by both --bind and --bind-grid"),
    (("--bind-grid", "seq=4,4", "--bind", "batch=1", "-o", "t{seq}.tosa"), "given twice"),
    (("--bind-grid", "seq", "--bind", "batch=1", "-o", "t{seq}.tosa"), "expects NAME=V1,V2"),
    (("--bind-grid", "seq=4,0", "--bind", "batch=1", "-o", "t{seq}.tosa"), "not a positive integer"),
    (("--bind-grid", "seq=4", "--bind", "batch=1", "-o", "t{seq}.tosa", "--run"), "do not combine"),
    (("--bind-grid", "sequ=4,8", "--bind", "batch=1", "-o", "t{sequ}.tosa"),
     "--bind-grid sequ: 'sequ' is not a symbol of this model"),
])
def test_grid_usage_errors_exit_2_and_write_nothing(cli, tmp_path, args, message):
    r = cli("convert", TRANSFORMER, *args)
    assert r.exit_code == 2, r
    assert message in r.stderr
    assert not list(tmp_path.glob("*.tosa"))


def test_depfile_names_outputs_and_inputs_with_make_escapes(cli, tmp_path):
    model = tmp_path / "my models" / "cnn.onnx"
    model.parent.mkdir()
    shutil.copy(CNN, model)
    (tmp_path / "b.json").write_text('{"N": 1}')
    r = cli("convert", "my models/cnn.onnx", "--bindings", "b.json", "--bind-grid", "H=8,16", "--bind", "W=8",
            "-o", "out dir/c$_{H}.tosa", "--report", "r.json", "--depfile", "deps/c.d")
    assert r.exit_code == 0, r
    text = (tmp_path / "deps" / "c.d").read_text()
    assert text == ("out\\ dir/c$$_8.tosa \\\n  out\\ dir/c$$_16.tosa \\\n  r.json \\\n  deps/c.d: \\\n"
                    "  my\\ models/cnn.onnx \\\n  b.json\n")


def test_single_convert_depfile_lists_external_data(cli, tmp_path):
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper
    from .conftest import save_model, tensor
    w = numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "w")
    path = save_model(tmp_path / "ext.onnx", [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                      [tensor("x", ["n", 64])], [tensor("y", None)], [w])
    model = onnx.load(str(path))
    onnx.save(model, str(path), save_as_external_data=True, location="ext.bin", size_threshold=0)
    (tmp_path / "in.npz").write_bytes(b"")
    np.savez(tmp_path / "in.npz", x=np.ones((3, 64), np.float32))
    r = cli("convert", "ext.onnx", "--inputs", "in.npz", "-o", "e.tosa", "--depfile", "e.d", "--json")
    assert r.exit_code == 0, r
    assert "variants" not in json.loads(r.stdout)   # without --bind-grid the report is the single one
    assert (tmp_path / "e.d").read_text() == "e.tosa \\\n  e.d: \\\n  ext.onnx \\\n  ext.bin \\\n  in.npz\n"


def readme_makefile() -> str:
    """The first ```make block of the README, exactly as users copy it."""
    text = (REPO / "README.md").read_text()
    start = text.index("```make\n") + len("```make\n")
    return text[start:text.index("```", start)]


def make(tmp_path, *args):
    import subprocess
    import sys
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(["make", *args, f"TOSACONV={sys.executable} -m tosaconv"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)


def test_readme_makefile_builds_in_parallel_and_rebuilds_only_what_changed(tmp_path, cli):
    assert shutil.which("make"), "GNU make is needed to run the README's Makefile example; install make"
    (tmp_path / "models").mkdir()
    for model in (TRANSFORMER, CNN):
        shutil.copy(model, tmp_path / "models" / model.name)
    (tmp_path / "models" / "small_cnn.json").write_text('{"N": 1, "W": 16}')
    (tmp_path / "Makefile").write_text(readme_makefile())
    first = make(tmp_path, "-j2")
    assert first.returncode == 0, first.stderr
    out = tmp_path / "out"
    expected = {f"tiny_transformer_s{s}_b{b}.tosa" for s in (8, 16) for b in (1, 2)}
    expected |= {"small_cnn_h16.tosa", "small_cnn_h32.tosa", "tiny_transformer.d", "small_cnn.d"}
    assert {p.name for p in out.iterdir()} == expected
    assert cli("convert", CNN, "--bind", "N=1", "--bind", "W=16", "--bind", "H=32", "-o", "one.tosa").exit_code == 0
    assert sha(out / "small_cnn_h32.tosa") == sha(tmp_path / "one.tosa")
    past = time.time_ns() - 100_000_000_000   # everything 100 s old: no clock skew between the steps
    for p in [*out.iterdir(), *(tmp_path / "models").iterdir()]:
        os.utime(p, ns=(past, past))
    stamps = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    again = make(tmp_path, "-j2")
    assert again.returncode == 0 and "tosaconv" not in again.stdout, again.stdout
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == stamps
    rebuilt_by_touching(tmp_path, "models/tiny_transformer.onnx", stamps, past + 50_000_000_000,
                        {n for n in expected if n.startswith("tiny_transformer")})
    # the bindings file is a prerequisite only through the depfile
    rebuilt_by_touching(tmp_path, "models/small_cnn.json", stamps, past + 50_000_000_000,
                        {"small_cnn_h16.tosa", "small_cnn_h32.tosa", "small_cnn.d"})


def rebuilt_by_touching(tmp_path, name: str, stamps: dict, when: int, expected: set):
    os.utime(tmp_path / name, ns=(when, when))
    run = make(tmp_path, "-j2")
    assert run.returncode == 0, run.stderr
    out = tmp_path / "out"
    changed = {n for n, t in stamps.items() if (out / n).stat().st_mtime_ns != t}
    assert changed == expected
    stamps.update({n: (out / n).stat().st_mtime_ns for n in stamps})
