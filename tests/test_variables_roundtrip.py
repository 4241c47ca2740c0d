"""The state ops VARIABLE, VARIABLE_READ and VARIABLE_WRITE through every layer of tosaconv.

Text IR round trip, verifier, passes (which must neither drop nor fold state
ops), the interpreter's state across runs, the flatbuffer written the way
the official serializer writes it (checked by reading a file ``tosa-opt
--tosa-serialize`` made) and read back, and the official reference model
running our file for two steps (one step per process; the state passes
through a ``.npy`` file, see ``tests/importers/tflite/variable_steps.py``).
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.variable_steps import reference_two_steps
from tests.tosa_tools import run_tool
from tosaconv import api
from tosaconv.emit import read_tosa, write_tosa
from tosaconv.emit.deserialize import deserialize
from tosaconv.interpreter import evaluate
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op
from tosaconv.ir.parser import parse_graph
from tosaconv.ir.printer import print_graph
from tosaconv.ir.types import TensorType
from tosaconv.ir.verifier import verify
from tosaconv.passes import run_pipeline

T = TensorType(DType.INT32, (1, 3))
REF = A.VariableRefAttrs("acc", DType.INT32, (1, 3))


def accumulator(declare: bool = True, unused_write: bool = False) -> Graph:
    """y = acc + x; acc = y, with acc starting at [5, -2, 7] (and optionally a write nobody reads)."""
    g = Graph()
    b = Builder(g)
    x = g.add_input("x", T)
    if declare:
        b.create(Op.VARIABLE, [], A.VariableAttrs("acc", DType.INT32, (1, 3), np.array([[5, -2, 7]], np.int32)))
    r = b.emit(Op.VARIABLE_READ, attrs=REF, name="r")
    y = b.emit(Op.ADD, r, x, name="y")
    b.create(Op.VARIABLE_WRITE, [y if not unused_write else x], REF)
    g.set_outputs([y], ["y"])
    return g


def _steps(graph, xs, state=None) -> list:
    state = {} if state is None else state
    return [evaluate(graph, {"x": x}, state=state)["y"] for x in xs]


XS = [np.array([[1, 2, 3]], np.int32), np.array([[10, 20, 30]], np.int32), np.array([[-4, 0, 4]], np.int32)]
WANT = [np.array([[6, 0, 10]]), np.array([[16, 20, 40]]), np.array([[12, 20, 44]])]


def test_state_carries_over_runs_and_a_fresh_run_starts_from_the_initial_value():
    g = accumulator()
    for got, want in zip(_steps(g, XS), WANT):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(evaluate(g, {"x": XS[1]})["y"], [[15, 18, 37]])


def test_text_ir_round_trip():
    text = print_graph(accumulator())
    assert 'VARIABLE() {name = "acc", dtype = i32, shape = [1, 3]' in text
    again = parse_graph(text)
    assert print_graph(again) == text
    for got, want in zip(_steps(again, XS), WANT):
        np.testing.assert_array_equal(got, want)


def test_the_verifier_checks_declarations_and_types():
    assert verify(accumulator()) == []
    assert any("'acc' is not declared" in p for p in verify(accumulator(declare=False)))
    g = accumulator()
    g.ops.insert(1, g.ops[0])
    assert any("declared twice" in p for p in verify(g))
    wrong = accumulator()
    wrong.ops[-1].attrs = A.VariableRefAttrs("acc", DType.INT32, (3,))
    assert verify(wrong)


def test_passes_keep_state_ops_that_no_output_uses():
    g = run_pipeline(accumulator(unused_write=True))
    ops = [op.op for op in g.ops]
    assert ops.count(Op.VARIABLE) == 1 and ops.count(Op.VARIABLE_READ) == 1 and ops.count(Op.VARIABLE_WRITE) == 1
    np.testing.assert_array_equal(_steps(g, XS[:2])[1], XS[0] + XS[1])   # acc = x after step 1


def test_flatbuffer_round_trip_in_the_official_form():
    data = write_tosa(accumulator())
    block = deserialize(data)
    (var,) = [t for t in block.tensors if t.variable_name is not None]
    assert var.variable_name == "acc" and np.array_equal(var.data.view("<i4"), [5, -2, 7])
    assert [op.op for op in block.ops] == ["VARIABLE_READ", "ADD", "VARIABLE_WRITE"]
    back = read_tosa(data)
    assert write_tosa(back) == data
    for got, want in zip(_steps(back, XS), WANT):
        np.testing.assert_array_equal(got, want)


MLIR = """module {
  tosa.variable @var_x = dense<[[5, -2, 7]]> : tensor<1x3xi32>
  func.func @main(%arg0: tensor<1x3xi32>) -> tensor<1x3xi32> {
    %0 = tosa.variable_read @var_x : tensor<1x3xi32>
    %1 = tosa.add %0, %arg0 : (tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<1x3xi32>
    tosa.variable_write @var_x, %1 : tensor<1x3xi32>
    return %1 : tensor<1x3xi32>
  }
}
"""


def test_reads_the_file_the_official_serializer_writes(tmp_path):
    (tmp_path / "v.mlir").write_text(MLIR)
    proc = run_tool("tosa-opt", ["--tosa-serialize=tosa-flatbuffer-filename=v.tosa", "v.mlir"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    g = read_tosa((tmp_path / "v.tosa").read_bytes())
    assert [op.op for op in g.ops] == [Op.VARIABLE, Op.VARIABLE_READ, Op.ADD, Op.VARIABLE_WRITE]
    assert g.ops[0].attrs.name == "var_x"
    state = {}
    got = [evaluate(g, {g.inputs[0].name: x}, state=state)[g.output_names[0]] for x in XS]
    for a, want in zip(got, WANT):
        np.testing.assert_array_equal(a, want)


def test_reference_model_runs_two_steps_on_our_file(tmp_path):
    got = reference_two_steps(api.emit(accumulator()), [{"x": XS[0]}, {"x": XS[1]}], ["y"], tmp_path)
    np.testing.assert_array_equal(got[0][0], WANT[0])
    np.testing.assert_array_equal(got[1][0], WANT[1])


@pytest.mark.parametrize("initial", [np.zeros((3,), np.int32), np.zeros((1, 3), np.float32)])
def test_a_declaration_whose_initial_value_does_not_fit_is_rejected(initial):
    g = Graph()
    with pytest.raises(ValueError, match="initial value"):
        Builder(g).create(Op.VARIABLE, [], A.VariableAttrs("v", DType.INT32, (1, 3), initial))
