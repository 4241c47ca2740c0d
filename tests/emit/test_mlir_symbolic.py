"""Symbolic TOSA MLIR (``convert --keep-symbols -o OUT.mlir``) against the official ``tosa-opt``.

For every dynamic sample, the MLIR printed from the symbolic records (``?``
dims, ``!tosa.shape`` values, DIM and the EXT-SHAPE ops) must parse and pass
``--tosa-validate=strict-op-spec-alignment`` at TOSA 1.1.draft with the shape
and dynamic extensions, and tosa-opt must print it exactly as it prints its
own deserialization of the symbolic ``.tosa`` written from the same program:
the two writers agree op for op.
"""
from __future__ import annotations

import pytest

import tosaconv.api as api
from tests.emit.test_mlir_tosa_opt import assert_prints_as_deserialized
from tests.emit.test_symbolic_tosa import ROOT, SHAPES
from tests.tosa_tools import run_tool

TARGET_1_1 = ("--tosa-attach-target=profiles=pro_int,pro_fp extensions=int16,int4,bf16,doubleround,controlflow,"
              "shape,dynamic specification_version=1.1.draft")


@pytest.mark.parametrize("model", sorted(SHAPES))
def test_symbolic_mlir_validates_and_equals_the_deserialized_symbolic_tosa(model, tmp_path):
    program = api.keep_symbols(api.load(str(ROOT / model)), {})
    mlir, tosa = tmp_path / "m.mlir", tmp_path / "m.tosa"
    mlir.write_bytes(api.emit_symbolic(program, {}, "mlir").data)
    tosa.write_bytes(api.emit_symbolic(program, {}).data)
    text = mlir.read_text()
    assert "?x" in text or "<?" in text, "an open symbol must print as a ? dim"
    assert '"tosa.dim"' in text
    proc = run_tool("tosa-opt", [mlir, TARGET_1_1, "--tosa-validate=strict-op-spec-alignment", "-o", "/dev/null"])
    assert proc.returncode == 0, proc.stderr
    assert_prints_as_deserialized(mlir, tosa, tmp_path)


def test_cli_keep_symbols_writes_symbolic_mlir(tmp_path):
    from tests.emit.test_symbolic_tosa import run_module
    out = tmp_path / "tt.mlir"
    proc = run_module("convert", str(ROOT / "tiny_transformer.onnx"), "-o", str(out), "--keep-symbols")
    assert proc.returncode == 0, proc.stderr
    assert "tensor<?x?x32xf32>" in out.read_text()


@pytest.mark.parametrize("which", ["gru", "loop", "map_fn", "if_on_dims"])
def test_symbolic_mlir_with_control_flow_over_open_dims_validates(which, tmp_path):
    """A GRU over an open length and a Loop over an open dim (WHILE_LOOP regions computing their sizes with
    DIM), an If on a comparison of dims (COND_IF): the symbolic MLIR validates and prints as tosa-opt's
    own deserialization of the symbolic .tosa."""
    from onnx import helper
    from tests.emit import test_symbolic_tosa as t
    path = tmp_path / f"{which}.onnx"
    if which == "gru":
        t._recurrent_model(path, "GRU", "bidirectional", "B")
    elif which == "loop":
        t._loop_model(path)
    elif which == "map_fn":
        t._map_fn_model(path)
    else:
        t._if_on_dims_model(path, helper.make_node("Add", ["x", "two"], ["e"]))
    program = api.keep_symbols(api.load(str(path)), {})
    mlir, tosa = tmp_path / "m.mlir", tmp_path / "m.tosa"
    mlir.write_bytes(api.emit_symbolic(program, {}, "mlir").data)
    tosa.write_bytes(api.emit_symbolic(program, {}).data)
    assert ('"tosa.while_loop"' if which != "if_on_dims" else '"tosa.cond_if"') in mlir.read_text()
    proc = run_tool("tosa-opt", [mlir, TARGET_1_1, "--tosa-validate=strict-op-spec-alignment", "-o", "/dev/null"])
    assert proc.returncode == 0, proc.stderr
    assert_prints_as_deserialized(mlir, tosa, tmp_path)
