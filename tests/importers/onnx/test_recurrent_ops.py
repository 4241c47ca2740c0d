"""ONNX LSTM, GRU and RNN against onnxruntime, on a symbolic sequence length and batch.

Each model is converted once and run at several (seq, batch) sizes, seq=1
among them, two ways: the symbolic program (RECURRENT's kernel unrolls it for
the concrete shapes) and the program specialized to static TOSA (the decay
rule unrolls it). Covered: LSTM forward/reverse/bidirectional with and without
initial states, peepholes, sequence_lens, layout=1, clip, input_forget and
requested-output subsets; GRU with linear_before_reset 0 and 1; RNN with Tanh
and Relu; every activation function with explicit alpha/beta. onnxruntime
refuses layout=1, so those models are compared with the layout-0 node between
Transposes (the same computation, ONNX-defined). Specialized LSTM and GRU
programs also go through emission to the official TOSA reference model, which
must agree with our numpy run.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tosaconv import api

from .harness import (F32, I32, assert_close, check_reference_model, const, convert, info, make_model, rand,
                      run_graph, run_onnxruntime)

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
SIZES = [(1, 1), (4, 3), (7, 2)]          # (seq, batch)
HIDDEN, FEATURES = 5, 4
OUTPUTS = {"LSTM": ("Y", "Y_h", "Y_c"), "GRU": ("Y", "Y_h"), "RNN": ("Y", "Y_h")}


def recurrent_model(cell, direction="forward", *, bias=True, lens=False, initial=False, peepholes=False,
                    layout=0, outputs=None, reference=False, opset=14, **attrs):
    """A one-node recurrent model on x[seq, batch, 4] (layout 0) or x[batch, seq, 4] (layout 1).

    ``reference`` builds the same computation as a layout-0 node between Transposes (for onnxruntime).
    """
    dirs = 2 if direction == "bidirectional" else 1
    width = GATES[cell] * HIDDEN
    inits = [const("W", rand(dirs, width, FEATURES, low=-1, high=1, seed=1)),
             const("R", rand(dirs, width, HIDDEN, low=-1, high=1, seed=2))]
    if bias:
        inits.append(const("B", rand(dirs, 2 * width, low=-1, high=1, seed=3)))
    if peepholes:
        inits.append(const("P", rand(dirs, 3 * HIDDEN, low=-1, high=1, seed=4)))
    x_dims = ["batch", "seq", FEATURES] if layout else ["seq", "batch", FEATURES]
    state_dims = ["batch", dirs, HIDDEN] if layout else [dirs, "batch", HIDDEN]
    inputs = [info("x", F32, x_dims)]
    inputs += [info("lens", I32, ["batch"])] if lens else []
    states = ["h0", "c0"] if cell == "LSTM" else ["h0"]
    inputs += [info(s, F32, state_dims) for s in states] if initial else []
    operands = ["x", "W", "R", "B" if bias else "", "lens" if lens else ""]
    operands += states if initial else ["", ""][:len(states)]
    operands += ["P"] if peepholes else []
    wanted = outputs or OUTPUTS[cell]
    results = [n if n in wanted else "" for n in OUTPUTS[cell]]
    node_attrs = dict(hidden_size=HIDDEN, direction=direction, **attrs)
    if reference and layout:
        nodes = _layout0_between_transposes(cell, _trim(operands), results, node_attrs)
    else:
        layout_attr = {"layout": layout} if layout else {}
        nodes = [helper.make_node(cell, _trim(operands), _trim(results), **layout_attr, **node_attrs)]
    return make_model(nodes, inputs, [info(n, F32, None) for n in wanted], inits, opset=opset)


def _trim(names: list) -> list:
    while names and not names[-1]:
        names = names[:-1]
    return list(names)


def _layout0_between_transposes(cell, operands, results, attrs) -> list:
    nodes, renamed = [], []
    for i, name in enumerate(operands):
        if name and (i == 0 or i >= 5) and name != "P":
            nodes.append(helper.make_node("Transpose", [name], [name + "_t"], perm=[1, 0, 2]))
            name += "_t"
        renamed.append(name)
    outs = [n + "_t" if n else "" for n in results]
    nodes.append(helper.make_node(cell, renamed, _trim(outs), **attrs))
    for n in (n for n in results if n):
        perm = [2, 0, 1, 3] if n == "Y" else [1, 0, 2]
        nodes.append(helper.make_node("Transpose", [n + "_t"], [n], perm=perm))
    return nodes


def feeds_for(model, sizes=SIZES) -> list:
    """Random feeds per (seq, batch); sequence_lens has one full-length entry, the others random."""
    out = []
    for k, (seq, batch) in enumerate(sizes):
        feeds = {}
        for vi in model.graph.input:
            dims = [{"seq": seq, "batch": batch}.get(d.dim_param, d.dim_value) for d in vi.type.tensor_type.shape.dim]
            if vi.name == "lens":
                lens = np.random.default_rng(k).integers(1, seq + 1, dims).astype(np.int32)
                lens[0] = seq
                feeds[vi.name] = lens
            else:
                feeds[vi.name] = rand(*dims, seed=10 * k + len(feeds))
        out.append(feeds)
    return out


def check(model, reference=None, sizes=SIZES):
    """Symbolic and specialized runs both match onnxruntime at every size."""
    graph = convert(model)
    assert graph.histogram().get("RECURRENT") == 1
    for feeds in feeds_for(model, sizes):
        want = run_onnxruntime(reference or model, feeds)
        static = api.specialize(graph, api.solve_bindings(graph, {k: v.shape for k, v in feeds.items()}))
        assert "RECURRENT" not in static.histogram()
        for how, g in (("symbolic", graph), ("specialized", static)):
            got = run_graph(g, feeds)
            assert len(got) == len(want)
            for name, a, b in zip(graph.output_names, got, want):
                assert_close(a, b, 1e-4, 1e-5, f"{how} {name} at x{feeds['x'].shape}")


def check_layout1(cell, **kw):
    check(recurrent_model(cell, layout=1, **kw), recurrent_model(cell, layout=1, reference=True, **kw))


# -- LSTM ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("initial", [False, True])
def test_lstm_directions_and_initial_states(direction, initial):
    check(recurrent_model("LSTM", direction, initial=initial))


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_lstm_peepholes(direction):
    check(recurrent_model("LSTM", direction, peepholes=True, initial=True))


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_sequence_lens(direction):
    check(recurrent_model("LSTM", direction, lens=True, initial=True, peepholes=True))


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_lstm_layout1(direction):
    check_layout1("LSTM", direction=direction, initial=True, lens=True)


@pytest.mark.parametrize("direction", ["forward", "reverse"])
def test_lstm_clip(direction):
    check(recurrent_model("LSTM", direction, clip=0.5, initial=True))


def test_lstm_input_forget_and_no_bias():
    check(recurrent_model("LSTM", "bidirectional", bias=False, input_forget=1))


def test_lstm_activations_with_alpha_beta():
    acts = ["HardSigmoid", "LeakyRelu", "Softsign", "Sigmoid", "Elu", "ScaledTanh"]
    check(recurrent_model("LSTM", "bidirectional", activations=acts,
                          activation_alpha=[0.3, 0.05, 0.8, 1.2], activation_beta=[0.4, 0.7]))


@pytest.mark.parametrize("outputs", [("Y_h",), ("Y_c",), ("Y",), ("Y", "Y_c")], ids=str)
def test_lstm_output_subsets(outputs):
    check(recurrent_model("LSTM", "reverse", outputs=outputs, lens=True))


@pytest.mark.parametrize("opset", [7, 11])
def test_lstm_before_opset14(opset):
    check(recurrent_model("LSTM", "forward", initial=True, opset=opset))


# -- GRU ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lbr", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_gru(direction, lbr):
    check(recurrent_model("GRU", direction, initial=True, linear_before_reset=lbr))


@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_sequence_lens_clip_no_bias(lbr):
    check(recurrent_model("GRU", "bidirectional", lens=True, clip=0.7, linear_before_reset=lbr))
    check(recurrent_model("GRU", "forward", bias=False, linear_before_reset=lbr))


@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_layout1(lbr):
    check_layout1("GRU", direction="bidirectional", initial=True, lens=True, linear_before_reset=lbr)


def test_gru_activations():
    check(recurrent_model("GRU", "forward", activations=["HardSigmoid", "Relu"], activation_alpha=[0.25],
                          activation_beta=[0.45]))


# -- RNN --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("act", ["Tanh", "Relu"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_rnn(direction, act):
    dirs = 2 if direction == "bidirectional" else 1
    check(recurrent_model("RNN", direction, initial=True, activations=[act] * dirs))


def test_rnn_defaults_sequence_lens_and_layout1():
    check(recurrent_model("RNN", "bidirectional", lens=True))
    check_layout1("RNN", direction="reverse", lens=True, initial=True)


# onnxruntime's RNN takes alpha/beta by direction index; one function per direction makes that the ONNX order.
@pytest.mark.parametrize("act,alpha,beta", [
    ("Sigmoid", 0.0, 0.0), ("Affine", 0.7, -0.2), ("LeakyRelu", 0.1, 0.0), ("ThresholdedRelu", 0.3, 0.0),
    ("ScaledTanh", 1.5, 0.6), ("HardSigmoid", 0.3, 0.4), ("Elu", 0.8, 0.0), ("Softsign", 0.0, 0.0),
    ("Softplus", 0.0, 0.0)])
def test_rnn_activation_functions(act, alpha, beta):
    check(recurrent_model("RNN", "forward", activations=[act], activation_alpha=[alpha], activation_beta=[beta],
                          clip=3.0))


# -- through emission: the official reference model --------------------------------------------

@pytest.mark.parametrize("model", [
    recurrent_model("LSTM", "bidirectional", lens=True, initial=True, peepholes=True, clip=1.5),
    recurrent_model("GRU", "reverse", lens=True, initial=True, linear_before_reset=1),
], ids=["lstm", "gru"])
def test_reference_model_runs_the_unrolled_program(model, tmp_path):
    graph = convert(model)
    for i, feeds in enumerate(feeds_for(model, [(1, 2), (5, 3)])):
        static = api.specialize(graph, api.solve_bindings(graph, {k: v.shape for k, v in feeds.items()}))
        got = run_graph(static, feeds)
        for name, a, b in zip(graph.output_names, got, run_onnxruntime(model, feeds)):
            assert_close(a, b, 1e-4, 1e-5, name)
        check_reference_model(api.emit(static), static, feeds, got, tmp_path / str(i))
