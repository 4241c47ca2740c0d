"""TFLite resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE) as TOSA VARIABLEs.

Each model is run for several steps on one LiteRT interpreter (reference
kernels), so its variables carry over like a streaming model's state, and
tosaconv must give the same outputs at every step: the symbolic program and
the emitted ``.tosa`` read back, each on one state. The official reference
model runs one step per process, so it is checked on two steps (the state
goes from step 1 to step 2 through a ``.npy`` file; see ``variable_steps``).
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.onnx.harness import specialize_and_emit
from tests.importers.tflite.harness import ModelBuilder, convert
from tests.importers.tflite.test_control_flow import refused, same_branch_if
from tests.importers.tflite.variable_steps import litert_steps, reference_two_steps, tosaconv_steps
from tosaconv.emit import read_tosa
from tosaconv.ir.ops import Op

Q = ([0.05], [3], 0)   # int8 quantization of the delay line


def _handle(m, name: str, shared: str) -> int:
    h = m.tensor(name, [], "RESOURCE")
    m.op("VAR_HANDLE", [], [h], "VarHandleOptions", SharedName=shared)
    return h


def _init(m, shared: str, value) -> None:
    """A CALL_ONCE whose init subgraph assigns the constant ``value`` to variable ``shared``."""
    init = m.subgraph(f"init_{shared}")
    init.op("ASSIGN_VARIABLE", [_handle(init, "ih", shared), init.const("iv", value)], [])
    m.op("CALL_ONCE", [], [], "CallOnceOptions", InitSubgraphIndex=init.index)


def accumulator(initial=None) -> bytes:
    """y = acc + x; acc = y (float), with acc initialised to ``initial`` by CALL_ONCE."""
    m = ModelBuilder()
    x, y, r = m.input("x", [1, 4]), m.tensor("y", [1, 4]), m.tensor("r", [1, 4])
    if initial is not None:
        _init(m, "acc", initial)
    h = _handle(m, "h", "acc")
    m.op("READ_VARIABLE", [h], [r])
    m.op("ADD", [r, x], [y], "AddOptions")
    m.op("ASSIGN_VARIABLE", [h, y], [])
    m.output(y)
    return m.finish()


def delay_and_count() -> bytes:
    """An int8 delay line (y = previous x, quantized) and an int32 step counter, two variables."""
    m = ModelBuilder()
    x = m.input("x", [1, 4], "INT8", quant=Q)
    y, n, n1 = m.tensor("y", [1, 4], "INT8", quant=Q), m.tensor("n", [1], "INT32"), m.tensor("n1", [1], "INT32")
    _init(m, "line", np.full((1, 4), -7, np.int8))
    _init(m, "count", np.array([10], np.int32))
    line, count = _handle(m, "hl", "line"), _handle(m, "hc", "count")
    m.op("READ_VARIABLE", [line], [y])
    m.op("ASSIGN_VARIABLE", [line, x], [])
    m.op("READ_VARIABLE", [count], [n])
    m.op("ADD", [n, m.const("one", np.array([1], np.int32))], [n1], "AddOptions")
    m.op("ASSIGN_VARIABLE", [count, n1], [])
    m.output(y, n1)
    return m.finish()


def _float_steps(k: int) -> list:
    rng = np.random.default_rng(k)
    return [{"x": rng.uniform(-3, 3, (1, 4)).astype(np.float32)} for _ in range(k)]


def _int8_steps(k: int) -> list:
    rng = np.random.default_rng(7)
    steps = [{"x": rng.integers(-128, 128, (1, 4)).astype(np.int8)} for _ in range(k)]
    steps[0]["x"][0, :3] = [-128, 127, 3]   # the extremes and the zero point
    return steps


def _assert_steps(got: list, want: list):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        for i, (a, b) in enumerate(zip(g, w)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=f"step {k + 1} output {i}")


@pytest.mark.parametrize("model, steps", [(lambda: accumulator(np.full((1, 4), 2.5, np.float32)), _float_steps),
                                          (delay_and_count, _int8_steps)], ids=["float-accumulator", "int8-delay"])
def test_state_carries_over_like_litert(model, steps):
    data, feeds = model(), steps(4)
    want = litert_steps(data, feeds)
    assert not np.array_equal(want[0][0], want[1][0])   # the state makes the steps differ
    graph = convert(data)
    assert sum(op.op is Op.VARIABLE for op in graph.ops) == len([o for o in want[0]])
    _assert_steps(tosaconv_steps(graph, feeds), want)
    static, tosa = specialize_and_emit(graph, {"x": (1, 4)})
    _assert_steps(tosaconv_steps(read_tosa(tosa), feeds), want)


def test_reference_model_carries_the_state_over_two_steps(tmp_path):
    data, feeds = accumulator(np.full((1, 4), -1.25, np.float32)), _float_steps(2)
    want = litert_steps(data, feeds)
    static, tosa = specialize_and_emit(convert(data), {"x": (1, 4)})
    got = reference_two_steps(tosa, feeds, static.output_names, tmp_path)
    for k in range(2):
        np.testing.assert_allclose(got[k][0], want[k][0], rtol=1e-6, atol=1e-6, err_msg=f"step {k + 1}")


def test_a_variable_written_before_it_is_read_needs_no_init():
    """Without CALL_ONCE, a variable the program assigns first starts at zeros (the value is never seen)."""
    m = ModelBuilder()
    x, y = m.input("x", [2]), m.tensor("y", [2])
    h = _handle(m, "h", "v")
    m.op("ASSIGN_VARIABLE", [h, x], [])
    m.op("READ_VARIABLE", [h], [y])
    m.output(y)
    data, feeds = m.finish(), _float_steps(2)
    for f in feeds:
        f["x"] = f["x"][0, :2]
    _assert_steps(tosaconv_steps(convert(data), feeds), litert_steps(data, feeds))


def test_reading_a_variable_nothing_initialised_is_refused():
    refused(accumulator(None), "variable 'acc' is read before anything assigns it")


def test_an_init_value_computed_by_ops_is_refused():
    m = ModelBuilder()
    m.input("x", [2])
    y = m.tensor("y", [2])
    init = m.subgraph("init")
    v = init.tensor("v", [2])
    init.op("ADD", [init.const("a", np.ones(2, np.float32)), init.const("b", np.ones(2, np.float32))], [v],
            "AddOptions")
    init.op("ASSIGN_VARIABLE", [_handle(init, "ih", "s"), v], [])
    m.op("CALL_ONCE", [], [], "CallOnceOptions", InitSubgraphIndex=init.index)
    m.op("READ_VARIABLE", [_handle(m, "h", "s")], [y])
    m.output(y)
    refused(m.finish(), "CALL_ONCE init subgraph assigns variable 's' a value computed by ops")


def test_a_variable_of_dynamic_shape_is_refused():
    m = ModelBuilder()
    x, y = m.input("x", [1, 2], signature=[-1, 2]), m.tensor("y", [1, 2], signature=[-1, 2])
    h = _handle(m, "h", "s")
    m.op("ASSIGN_VARIABLE", [h, x], [])
    m.op("READ_VARIABLE", [h], [y])
    m.output(y)
    refused(m.finish(), "TOSA variables need a static shape")


def test_a_variable_inside_an_if_branch_is_refused():
    def fill(sub, tx):
        sub.op("ASSIGN_VARIABLE", [_handle(sub, "th", "s"), tx], [])
        return tx
    refused(same_branch_if(fill), "resource variables inside IF/WHILE bodies are not supported")


def test_cli_run_with_two_input_steps_shows_the_state_carried_over(tmp_path):
    from click.testing import CliRunner

    from tosaconv.cli import cli
    model = tmp_path / "acc.tflite"
    model.write_bytes(accumulator(np.zeros((1, 4), np.float32)))
    ones = np.ones((1, 4), np.float32)
    for k in (1, 2):
        np.savez(tmp_path / f"s{k}.npz", x=ones * k)
    r = CliRunner().invoke(cli, ["run", str(model), "--inputs", str(tmp_path / "s1.npz"), "--inputs",
                                 str(tmp_path / "s2.npz"), "-o", str(tmp_path / "out.npz")])
    assert r.exit_code == 0, r.output
    out = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(out["step1/y"], ones)
    np.testing.assert_array_equal(out["step2/y"], ones * 3)   # 1 (step 1's state) + 2
    np.testing.assert_array_equal(out["step2/x"], ones * 2)
