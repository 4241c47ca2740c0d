"""The state-as-io pass: TOSA variables become graph inputs and outputs the caller carries.

The program below has the three cases a step can have: a variable read,
written, then read again (``acc``: the second read must see the value just
written), one only read (``seen``: its state output is its input unchanged)
and one only written (``last``). Its rewritten text is checked against text
written by hand, and the rewritten program chained over steps must equal the
program with variables run on one state -- here, after emitting and reading the
``.tosa`` back, and in the official reference model, one process per step.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.tosa_tools import run_reference_model
from tosaconv import api
from tosaconv.diagnostics import ConversionError, Severity
from tosaconv.emit import read_tosa
from tosaconv.emit.deserialize import deserialize
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op
from tosaconv.ir.printer import print_graph
from tosaconv.ir.types import TensorType
from tosaconv.passes.state_as_io import state_pairs, variable_warnings

T = TensorType(DType.INT32, (1, 3))
INITIAL = {"acc": np.array([[5, -2, 7]], np.int32), "seen": np.array([[100, 200, 300]], np.int32),
           "last": np.zeros((1, 3), np.int32)}


def _ref(name: str) -> A.VariableRefAttrs:
    return A.VariableRefAttrs(name, DType.INT32, (1, 3))


def stateful(input_name: str = "x") -> Graph:
    """acc += x, then y = acc + seen (read after the write); last = x."""
    g = Graph()
    b = Builder(g)
    x = g.add_input(input_name, T)
    for name, initial in INITIAL.items():
        b.create(Op.VARIABLE, [], A.VariableAttrs(name, DType.INT32, (1, 3), initial))
    s = b.emit(Op.ADD, b.emit(Op.VARIABLE_READ, attrs=_ref("acc"), name="r1"), x, name="s")
    b.create(Op.VARIABLE_WRITE, [s], _ref("acc"))
    r2 = b.emit(Op.VARIABLE_READ, attrs=_ref("acc"), name="r2")
    t = b.emit(Op.ADD, r2, b.emit(Op.VARIABLE_READ, attrs=_ref("seen"), name="r3"), name="t")
    b.create(Op.VARIABLE_WRITE, [x], _ref("last"))
    g.set_outputs([t], ["y"])
    return g


EXPECTED = """tosair 1
func @main(%x: tensor<1x3xi32>, %"state_in:acc": tensor<1x3xi32>, %"state_in:seen": tensor<1x3xi32>, \
%"state_in:last": tensor<1x3xi32>) {
  %s = ADD(%"state_in:acc", %x) : tensor<1x3xi32> loc(internal "?" "?")
  %t = ADD(%s, %"state_in:seen") : tensor<1x3xi32> loc(internal "?" "?")
  return %t as y, %s as "state_out:acc", %"state_in:seen" as "state_out:seen", %x as "state_out:last"
}
"""

XS = [np.array([[1, 2, 3]], np.int32), np.array([[10, -20, 30]], np.int32), np.array([[-4, 0, 4]], np.int32)]


def test_the_rewritten_program_reads_as_written_by_hand():
    g = stateful()
    initial = api.state_as_io(g)
    assert print_graph(g) == EXPECTED
    assert set(initial) == set(INITIAL)
    for name, value in INITIAL.items():
        np.testing.assert_array_equal(initial[name], value)
    assert [(p.variable, p.input, p.output) for p in state_pairs(g)] == [
        ("acc", "state_in:acc", "state_out:acc"), ("seen", "state_in:seen", "state_out:seen"),
        ("last", "state_in:last", "state_out:last")]


def _variable_steps(xs) -> list:
    g, state, out = stateful(), {}, []
    for x in xs:
        out.append(api.run(g, {"x": x}, state=state)["y"])
    return out


def test_chained_steps_equal_the_program_with_variables():
    want = _variable_steps(XS)
    # acc after step 3 is [5, -2, 7] + [7, -18, 37] = [12, -20, 44]; y adds seen's [100, 200, 300]
    np.testing.assert_array_equal(want[2], [[112, 180, 344]])
    g = stateful()
    state = api.state_as_io(g)
    for k, x in enumerate(XS):
        got = api.run(g, {"x": x}, state=state)
        np.testing.assert_array_equal(got["y"], want[k], err_msg=f"step {k + 1}")
        np.testing.assert_array_equal(got["state_out:last"], x)
        np.testing.assert_array_equal(got["state_out:seen"], INITIAL["seen"])
    np.testing.assert_array_equal(state["acc"], INITIAL["acc"] + sum(XS))


def test_a_state_input_given_explicitly_wins_over_the_carried_state():
    g = stateful()
    state = api.state_as_io(g)
    got = api.run(g, {"x": XS[0], "state_in:acc": np.zeros((1, 3), np.int32)}, state=state)
    np.testing.assert_array_equal(got["y"], XS[0] + INITIAL["seen"])
    np.testing.assert_array_equal(state["acc"], XS[0])


def test_the_emitted_file_has_no_variables_and_keeps_the_pairs(tmp_path):
    g = stateful()
    state = api.state_as_io(g)
    tosa = api.emit(api.specialize(g, {}))
    block = deserialize(tosa)
    assert not [t for t in block.tensors if t.variable_name is not None]
    assert block.inputs == ["x", "state_in:acc", "state_in:seen", "state_in:last"]
    assert block.outputs == ["y", "state_out:acc", "state_out:seen", "state_out:last"]
    back = read_tosa(tosa)
    assert [p.variable for p in state_pairs(back)] == ["acc", "seen", "last"]
    want = _variable_steps(XS)
    ref_state = {f"state_in:{n}": v for n, v in state.items()}
    for k, x in enumerate(XS):
        ours = api.run(back, {"x": x}, state=state)
        ref = run_reference_model(tosa, {"x": x, **ref_state}, back.output_names, tmp_path / f"step{k}")
        for name in back.output_names:
            np.testing.assert_array_equal(ref[name], ours[name], err_msg=f"step {k + 1} {name}")
        np.testing.assert_array_equal(ref["y"], want[k])
        ref_state = {f"state_in:{p.variable}": ref[p.output] for p in state_pairs(back)}


def test_names_the_model_already_uses_are_refused():
    with pytest.raises(ConversionError) as e:
        api.state_as_io(stateful(input_name="state_in:seen"))
    (d,) = e.value.diagnostics
    assert d.code == "E-STATE-NAME" and "'state_in:seen'" in d.message and "already uses" in d.message


def test_a_program_without_variables_is_unchanged():
    g = Graph()
    x = g.add_input("x", T)
    g.set_outputs([Builder(g).emit(Op.ABS, x)], ["y"])
    before = print_graph(g)
    assert api.state_as_io(g) == {}
    assert print_graph(g) == before and state_pairs(g) == []


def test_pairs_are_found_only_with_a_matching_output():
    g = Graph()
    a = g.add_input("state_in:a", T)
    c = g.add_input("state_in:c", T)
    narrow = Builder(g).emit(Op.CAST, a, attrs=A.CastAttrs(DType.INT8))
    g.set_outputs([a, c, narrow], ["state_out:b", "state_out:c", "state_out:a"])
    assert [p.variable for p in state_pairs(g)] == ["c"]   # no output for b; a's output has another type


def test_the_warning_names_every_variable_and_goes_after_the_pass():
    g = stateful()
    (w,) = variable_warnings(g)
    assert w.severity is Severity.WARNING and w.code == "W-STATE-VARIABLES"
    assert "3 TOSA variables ('acc', 'seen', 'last')" in w.message and "--state-as-io" in w.hint
    api.state_as_io(g)
    assert variable_warnings(g) == []
