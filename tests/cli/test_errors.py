"""Every error path of the command line: exit code and message, never a traceback."""
from __future__ import annotations

import json

import numpy as np
import pytest

from onnx import TensorProto, helper

from tosaconv.fileio import npz_bytes

from .conftest import save_model, tensor


def assert_clean_failure(r, code: int):
    assert r.exit_code == code, r
    assert "Traceback" not in r.stderr and r.exception is None, r


def test_unbound_symbol_names_it_with_origin_and_bind_hint(cli, symbolic_model):
    r = cli("convert", symbolic_model, "--bind", "batch=2", "-o", "m.tosa")
    assert_clean_failure(r, 4)
    assert "'seq'" in r.stderr and "input 'x' axis 1" in r.stderr and "--bind seq=" in r.stderr
    assert "'batch'" not in r.stderr


def test_every_unbound_symbol_is_listed(cli, symbolic_model):
    r = cli("convert", symbolic_model, "-o", "m.tosa", "--json")
    assert_clean_failure(r, 4)
    doc = json.loads(r.stdout)
    hints = [d["hint"] for d in doc["diagnostics"]]
    assert any("--bind batch=" in h for h in hints) and any("--bind seq=" in h for h in hints)


def test_violated_constraint_shows_constraint_values_and_op(cli, broadcast_model):
    r = cli("convert", broadcast_model, "--bind", "n=2", "--bind", "m=4", "-o", "m.tosa")
    assert_clean_failure(r, 4)
    assert "broadcastable(n, m)" in r.stderr
    assert "n = 2" in r.stderr and "m = 4" in r.stderr
    assert "Add 'add0'" in r.stderr


def test_static_broadcast_mismatch(cli, static_mismatch_model):
    r = cli("convert", static_mismatch_model, "-o", "m.tosa")
    assert_clean_failure(r, 4)
    assert "Add 'add0'" in r.stderr and "2" in r.stderr and "4" in r.stderr


def test_every_unsupported_op_is_listed_with_count_and_first_node(cli, unsupported_model):
    r = cli("convert", unsupported_model, "-o", "m.tosa")
    assert_clean_failure(r, 3)
    assert "Det" in r.stderr and "2 node" in r.stderr and "'det_a'" in r.stderr
    assert "Multinomial" in r.stderr and "1 node" in r.stderr and "'mn0'" in r.stderr
    assert "det_b" not in r.stderr
    doc = json.loads(cli("convert", unsupported_model, "-o", "m.tosa", "--json").stdout)
    assert [d["location"]["name"] for d in doc["diagnostics"]] == ["det_a", "mn0"]


def test_unsupported_ops_inside_subgraphs_are_counted_too(cli, tmp_path):
    branch = lambda name, out: helper.make_graph(  # noqa: E731
        [helper.make_node("Det", ["x"], [out], name=name)], name, [], [tensor(out, None)])
    nodes = [helper.make_node("If", ["c"], ["y"], name="if0", then_branch=branch("det_then", "d"),
                              else_branch=branch("det_else", "e")),
             helper.make_node("Multinomial", ["p"], ["s"], name="mn0")]
    model = save_model(tmp_path / "nested.onnx", nodes,
                       [tensor("c", [], TensorProto.BOOL), tensor("x", [3, 3]), tensor("p", [1, 3])],
                       [tensor("y", None), tensor("s", None, TensorProto.INT32)])
    r = cli("convert", model, "-o", "m.tosa")
    assert_clean_failure(r, 3)
    assert "Det" in r.stderr and "2 node" in r.stderr and "Multinomial" in r.stderr and "1 node" in r.stderr


@pytest.mark.parametrize("content", ["truncated", "garbage", "empty", "text"])
def test_unreadable_onnx_exits_3_without_traceback(run_module, symbolic_model, tmp_path, content):
    data = symbolic_model.read_bytes()
    bad = {"truncated": data[: len(data) // 2], "garbage": bytes(range(256)) * 8, "empty": b"",
           "text": b"this is not a model\n"}[content]
    (tmp_path / "bad.onnx").write_bytes(bad)
    r = run_module("convert", "bad.onnx", "-o", "m.tosa")
    assert_clean_failure(r, 3)
    assert "bad.onnx" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "m.tosa").exists()


def test_missing_input_in_inputs_npz(cli, broadcast_model, tmp_path):
    (tmp_path / "in.npz").write_bytes(npz_bytes({"a": np.zeros((2, 3), np.float32)}))
    r = cli("run", broadcast_model, "--inputs", "in.npz", "--bind", "m=2", "-o", "o.npz")
    assert_clean_failure(r, 4)
    assert "'in.npz' has no array for model input 'b'" in r.stderr
    assert "arrays in the file: a" in r.stderr
    assert not (tmp_path / "o.npz").exists()


def test_corrupt_inputs_npz_is_a_usage_error(cli, symbolic_model, tmp_path):
    (tmp_path / "in.npz").write_bytes(b"PK\x03\x04 broken")
    r = cli("convert", symbolic_model, "--inputs", "in.npz", "-o", "m.tosa", "--run")
    assert_clean_failure(r, 2)
    assert "cannot read 'in.npz' as an .npz file" in r.stderr


@pytest.mark.parametrize("first, second, needles", [
    (("--bind", "batch=2"), ("--input-shape", "x=3,5,4"), ("--bind batch=2", "--input-shape x=3,5,4")),
    (("--bindings", "b.json"), ("--bind", "batch=3"), ("b.json", "--bind batch=3")),
    (("--bind", "seq=4"), ("--inputs", "in.npz"), ("--bind seq=4", "in.npz array 'x'")),
])
def test_disagreeing_binding_sources_name_both(cli, symbolic_model, tmp_path, first, second, needles):
    (tmp_path / "b.json").write_text('{"batch": 2}')
    (tmp_path / "in.npz").write_bytes(npz_bytes({"x": np.zeros((2, 5, 4), np.float32)}))
    r = cli("convert", symbolic_model, *first, *second, "-o", "m.tosa")
    assert_clean_failure(r, 4)
    for needle in needles:
        assert needle in r.stderr


@pytest.mark.parametrize("bind", ["batch", "batch=two", "batch=0", "=2", "batch=-1"])
def test_malformed_bind_exits_2(cli, symbolic_model, bind):
    r = cli("convert", symbolic_model, "--bind", bind, "-o", "m.tosa")
    assert_clean_failure(r, 2)
    assert "--bind" in r.stderr


def test_unknown_symbol_lists_the_models_symbols(cli, symbolic_model):
    r = cli("convert", symbolic_model, "--bind", "bacth=2", "-o", "m.tosa")
    assert_clean_failure(r, 2)
    assert "'bacth' is not a symbol" in r.stderr and "batch, seq" in r.stderr and "did you mean 'batch'" in r.stderr


@pytest.mark.parametrize("content", ["[1, 2]", '{"batch": "2"}', "{not json"])
def test_bad_bindings_file_exits_2(cli, symbolic_model, tmp_path, content):
    (tmp_path / "b.json").write_text(content)
    r = cli("convert", symbolic_model, "--bindings", "b.json", "-o", "m.tosa")
    assert_clean_failure(r, 2)
    assert "b.json" in r.stderr


def test_input_shape_that_contradicts_a_static_dim(cli, symbolic_model):
    r = cli("convert", symbolic_model, "--input-shape", "x=2,5,3", "-o", "m.tosa")
    assert_clean_failure(r, 4)
    assert "axis 2" in r.stderr and "--input-shape x=2,5,3" in r.stderr


@pytest.mark.parametrize("args", [("convert", "nope.onnx", "-o", "m.tosa"), ("convert",), ("frobnicate",),
                                  ("convert", "{model}"), ("run", "{model}", "-o", "o.npz", "--seed", "-1")])
def test_click_usage_errors_exit_2(cli, symbolic_model, args):
    r = cli(*(a.format(model=symbolic_model) for a in args))
    assert_clean_failure(r, 2)
    assert "Usage:" in r.stderr or "Error" in r.stderr


def test_unknown_file_type_exits_3(cli, tmp_path):
    (tmp_path / "model.pb").write_bytes(b"x")
    r = cli("inspect", "model.pb")
    assert_clean_failure(r, 3)
    assert "model.pb" in r.stderr


_INDEX_IO = """tosair 1
func @main(%x: index<4>, %y: tensor<2xf32>) {
  %z = ABS(%y) : tensor<2xf32> loc(test Abs "z")
  %n = GET_DIM(%y) {dim_index = 0} : index<2> loc(test Shape "n")
  return %OUT
}
"""


@pytest.mark.parametrize("inputs, out, what", [("%x: index<4>, %y", "%z as out", "takes 'x'"),
                                               ("%y", "%n as n", "returns 'n'")])
@pytest.mark.parametrize("command", ["inspect", "run", "convert"])
def test_tosair_with_index_io_is_refused_at_load(cli, tmp_path, inputs, out, what, command):
    """A program's inputs and outputs are tensors: an index one (no TOSA form) is refused when the file is
    read, by every command, with the value named (an index input was an internal error in inspect and run)."""
    text = _INDEX_IO.replace("%x: index<4>, %y", inputs).replace("%OUT", out)
    (tmp_path / "p.tosair").write_text(text)
    extra = {"inspect": (), "run": ("-o", "o.npz"), "convert": ("-o", "o.tosa")}[command]
    r = cli(command, "p.tosair", *extra)
    assert_clean_failure(r, 3)
    assert "E-TOSAIR" in r.stderr and what in r.stderr and "index value" in r.stderr
    assert not (tmp_path / "o.npz").exists() and not (tmp_path / "o.tosa").exists()
