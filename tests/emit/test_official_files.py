"""Files written by the official tools read back into the same graphs.

Each case's ``.tosa`` goes through ``tosa-opt``: deserialized to MLIR, then
serialized again (as the 1.1.0 draft, with the official library's naming,
padding and sharing). ``read_tosa`` must give the same op histogram, the same
attributes and types, and the reference model must give identical outputs on
both files. A hand-written MLIR program covers the official tools' own tensor
names (``TosaInput_0``...) and location texts.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.tosa_tools import run_reference_model, run_tool
from tosaconv.emit import read_tosa, write_tosa
from tosaconv.ir import attrs as A
from tosaconv.ir.attrs import attr_items

from . import cases_misc, cases_nn  # noqa: F401  (register more cases)
from .cases import CASES
from .test_roundtrip import _same_value


def official_round_trip(data: bytes, tmp_path) -> bytes:
    """``data`` after tosa-opt --tosa-deserialize and --tosa-serialize."""
    src, mlir, out = tmp_path / "in.tosa", tmp_path / "model.mlir", tmp_path / "official.tosa"
    src.write_bytes(data)
    proc = run_tool("tosa-opt", [f"--tosa-deserialize=tosa-flatbuffer-filename={src}", "/dev/null", "-o", mlir])
    assert proc.returncode == 0, proc.stderr
    proc = run_tool("tosa-opt", [f"--tosa-serialize=tosa-flatbuffer-filename={out} "
                                 "retain-graph-input-output-names", mlir, "-o", "/dev/null"])
    assert proc.returncode == 0, proc.stderr
    return out.read_bytes()


@pytest.mark.parametrize("name", sorted(CASES))
def test_official_serialization_reads_back(name, tmp_path):
    c = CASES[name]()
    ours = write_tosa(c.graph)
    theirs = official_round_trip(ours, tmp_path)
    assert theirs != ours  # really a different writer (version 1.1.0 draft, other names)
    back = read_tosa(theirs)
    assert back.histogram() == c.graph.histogram()
    assert [v.name for v in back.inputs] == [v.name for v in c.graph.inputs]
    assert back.output_names == c.graph.output_names
    for op, other in zip(c.graph.ops, back.ops):
        assert other.op is op.op and other.result.type == op.result.type
        for (field, x), (_, y) in zip(attr_items(op.attrs), attr_items(other.attrs)):
            assert _same_value(x, y), f"{op.op.name}.{field}"
    ref_ours = run_reference_model(ours, c.inputs, ["y"], tmp_path / "ours")
    ref_theirs = run_reference_model(theirs, c.inputs, ["y"], tmp_path / "theirs")
    np.testing.assert_array_equal(ref_theirs["y"], ref_ours["y"])


HAND_WRITTEN = """
func.func @main(%arg0: tensor<2x16xf32>, %arg1: tensor<2x16xi32>) -> (tensor<4x8xf32>, tensor<2x16xi32>) {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.mul %arg0, %arg0, %s : (tensor<2x16xf32>, tensor<2x16xf32>, tensor<1xi8>) -> tensor<2x16xf32>
  %1 = tosa.clamp %0 {min_val = -5.0 : f32, max_val = 100.0 : f32} : (tensor<2x16xf32>) -> tensor<2x16xf32>
  %sh = tosa.const_shape {values = dense<[4, 8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.reshape %1, %sh : (tensor<2x16xf32>, !tosa.shape<2>) -> tensor<4x8xf32>
  %3 = tosa.clamp %arg1 {min_val = -5 : i32, max_val = 100 : i32} : (tensor<2x16xi32>) -> tensor<2x16xi32>
  return %2, %3 : tensor<4x8xf32>, tensor<2x16xi32>
}
"""


def test_reads_a_program_written_by_tosa_opt(tmp_path):
    (tmp_path / "hand.mlir").write_text(HAND_WRITTEN)
    out = tmp_path / "hand.tosa"
    proc = run_tool("tosa-opt", [f"--tosa-serialize=tosa-flatbuffer-filename={out}", tmp_path / "hand.mlir",
                                 "-o", "/dev/null"])
    assert proc.returncode == 0, proc.stderr
    g = read_tosa(out.read_bytes())
    assert [v.name for v in g.inputs] == ["TosaInput_0", "TosaInput_1"]
    assert g.histogram() == {"MUL": 1, "CLAMP": 2, "RESHAPE": 1}
    mul, clamp_f, reshape, clamp_i = g.ops
    assert mul.attrs == A.MulAttrs(0) and reshape.attrs == A.ReshapeAttrs((4, 8))
    assert clamp_f.attrs == A.ClampAttrs(-5.0, 100.0) and clamp_i.attrs == A.ClampAttrs(-5, 100)
    assert isinstance(clamp_i.attrs.min_val, int) and isinstance(clamp_f.attrs.min_val, float)
    assert mul.location.op_type == "MUL" and "hand.mlir" in mul.location.name
    assert write_tosa(read_tosa(write_tosa(g))) == write_tosa(g)
