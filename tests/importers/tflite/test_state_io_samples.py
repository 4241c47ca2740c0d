"""The stateful samples with their state carried as I/O (``--state-as-io``), against LiteRT and Vela.

``int8_stream`` (two int8 variables: a delay line and a saturating
accumulator) must equal LiteRT's reference kernels bit for bit at every step
of a chained run, with variables and with state I/O, and so must the official
reference model running the state-as-io ``.tosa`` one step per process with
the state passed from each step's outputs to the next step's inputs. The
frames drive the accumulator into both saturation limits. ``running_sum``
(float) run step by step through the CLI must give the same numbers in both
forms, and LiteRT's. Vela 5.2 compiles the state-as-io ``int8_stream`` with
every operator on the NPU and the state tensors as the compiled model's
inputs and outputs; it compiles the form with variables too, but then the
state is no input or output at all (which is why reports warn).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import tflite
from click.testing import CliRunner

from tests.importers.tflite.variable_steps import litert_steps, tosaconv_steps
from tests.tosa_tools import run_reference_model
from tosaconv import api
from tosaconv.cli import cli
from tosaconv.emit import read_tosa

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "sample_models", "tflite")
STREAM = os.path.join(HERE, "int8_stream.tflite")
RUNNING_SUM = os.path.join(HERE, "running_sum.tflite")


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _frames() -> list:
    """Random frames (with both extremes and the zero point), then runs that saturate the accumulator."""
    rng = np.random.default_rng(5)
    steps = [{"x": rng.integers(-128, 128, (1, 4)).astype(np.int8)} for _ in range(3)]
    steps[0]["x"][0, :3] = [-128, 127, -1]
    return steps + [{"x": np.full((1, 4), v, np.int8)} for v in [127] * 7 + [-128] * 2]


def test_int8_stream_is_bit_exact_with_litert_with_variables_and_with_state_io():
    feeds = _frames()
    want = [w[0] for w in litert_steps(_read(STREAM), feeds)]
    fresh = litert_steps(_read(STREAM), feeds[1:2])[0][0]
    assert not np.array_equal(fresh, want[1])   # the state matters
    seen = np.concatenate(want)
    assert seen.max() == 127 and seen.min() == -128   # the accumulator saturated both ways
    for k, got in enumerate(tosaconv_steps(api.load(STREAM), feeds)):
        np.testing.assert_array_equal(got[0], want[k], err_msg=f"variables, step {k + 1}")
    graph = api.load(STREAM)
    state = api.state_as_io(graph)
    back = read_tosa(api.emit(api.specialize(graph, {})))
    for k, f in enumerate(feeds):
        np.testing.assert_array_equal(api.run(back, f, state=state)["y"], want[k], err_msg=f"state I/O, step {k + 1}")


def test_reference_model_runs_the_state_io_file_step_by_step(tmp_path):
    feeds = _frames()
    want = [w[0] for w in litert_steps(_read(STREAM), feeds)]
    graph = api.load(STREAM)
    initial = api.state_as_io(graph)
    static = api.specialize(graph, {})
    tosa = api.emit(static)
    state = {f"state_in:{name}": value for name, value in initial.items()}
    ours_state = dict(initial)
    for k, f in enumerate(feeds):
        ref = run_reference_model(tosa, {**f, **state}, static.output_names, tmp_path / f"step{k}")
        ours = api.run(static, f, state=ours_state)
        for name in static.output_names:
            np.testing.assert_array_equal(ref[name], ours[name], err_msg=f"step {k + 1} {name}")
        np.testing.assert_array_equal(ref["y"], want[k], err_msg=f"step {k + 1}")
        state = {"state_in:previous": ref["state_out:previous"], "state_in:total": ref["state_out:total"]}
    np.testing.assert_array_equal(state["state_in:previous"], feeds[-1]["x"])   # the delay line holds the last frame


def _cli(*args):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r


def test_running_sum_chained_through_the_cli_equals_the_variables_and_litert(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(3)
    steps = [{"x": rng.standard_normal((1, 4)).astype(np.float32)} for _ in range(3)]
    for k, f in enumerate(steps):
        np.savez(tmp_path / f"s{k}.npz", **f)
    inputs = [a for k in range(3) for a in ("--inputs", f"s{k}.npz")]
    _cli("run", RUNNING_SUM, *inputs, "-o", "var.npz")
    _cli("run", RUNNING_SUM, "--state-as-io", *inputs, "-o", "io.npz")
    var, io = np.load("var.npz"), np.load("io.npz")
    want = litert_steps(_read(RUNNING_SUM), steps)
    np.testing.assert_array_equal(io["step1/state_in:total"], np.zeros((1, 4), np.float32))   # the initial value
    for k in range(1, 4):
        np.testing.assert_array_equal(io[f"step{k}/y"], var[f"step{k}/y"])
        np.testing.assert_array_equal(io[f"step{k}/y"], want[k - 1][0])
        np.testing.assert_array_equal(io[f"step{k}/state_out:total"], io[f"step{k}/y"])
        if k > 1:
            np.testing.assert_array_equal(io[f"step{k}/state_in:total"], io[f"step{k - 1}/state_out:total"])


def test_a_state_io_tosa_chains_from_the_initial_state_convert_wrote(tmp_path, monkeypatch):
    """`convert --state-as-io --run` saves the initial state in its .npz; `run OUT.tosa` chains from it."""
    monkeypatch.chdir(tmp_path)
    _cli("convert", STREAM, "--state-as-io", "-o", "s.tosa", "--run")
    first = np.load("s.npz")
    np.testing.assert_array_equal(first["state_in:total"], np.full((1, 8), -1, np.int8))   # the zero point
    frames = _frames()
    np.savez("f1.npz", **frames[1])
    _cli("run", "s.tosa", "--inputs", "s.npz", "--inputs", "f1.npz", "-o", "o.npz")
    out = np.load("o.npz")
    want = litert_steps(_read(STREAM), [{"x": first["x"]}, frames[1]])
    np.testing.assert_array_equal(out["step1/y"], want[0][0])
    np.testing.assert_array_equal(out["step2/y"], want[1][0])
    np.testing.assert_array_equal(out["step2/state_in:previous"], first["x"])


def _vela(tosa: str, out_dir) -> tuple:
    """Compile ``tosa`` for the Ethos-U85-256; returns (NPU operator percentage, compiled model path)."""
    proc = subprocess.run([sys.executable, "-m", "ethosu.vela", tosa, "--accelerator-config", "ethos-u85-256",
                           "--output-dir", str(out_dir)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    match = re.search(r"NPU operators = (\d+) \(([\d.]+)%\)", proc.stdout)
    assert match, proc.stdout
    name = os.path.splitext(os.path.basename(tosa))[0]
    return float(match.group(2)), os.path.join(str(out_dir), f"{name}_vela.tflite")


def _io_names(compiled: str) -> tuple:
    """The compiled model's input and output tensor names."""
    sub = tflite.Model.GetRootAsModel(_read(compiled), 0).Subgraphs(0)
    return ([sub.Tensors(sub.Inputs(i)).Name().decode() for i in range(sub.InputsLength())],
            [sub.Tensors(sub.Outputs(i)).Name().decode() for i in range(sub.OutputsLength())])


def test_vela_compiles_the_state_io_form_with_the_state_as_inputs_and_outputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _cli("convert", STREAM, "--state-as-io", "-o", "stream_io.tosa")
    npu, compiled = _vela("stream_io.tosa", tmp_path / "io")
    assert npu == 100.0
    assert _io_names(compiled) == (["x", "state_in:previous", "state_in:total"],
                                   ["y", "state_out:previous", "state_out:total"])
    _cli("convert", STREAM, "-o", "stream_var.tosa")
    npu, compiled = _vela("stream_var.tosa", tmp_path / "var")
    assert npu == 100.0 and _io_names(compiled) == (["x"], ["y"])   # compiled, but the state is gone
