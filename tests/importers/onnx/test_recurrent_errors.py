"""LSTM/GRU/RNN: what the symbolic program looks like, and every refusal.

The importer keeps a recurrent node as one RECURRENT op with symbolic result
shapes (and the .tosair text round-trips it); refusals are tosaconv errors
that name the node and say what to change; a RECURRENT whose sequence length
is still unknown when it must be unrolled raises the data-dependent error
naming the node.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tosaconv import api
from tosaconv.diagnostics import ConversionError, ShapeError
from tosaconv.ir.builder import Builder
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op
from tosaconv.ir.parser import parse_graph
from tosaconv.passes.decay import DataDependentDim, rule_for
from tosaconv.symbolic.expr import same, sym

from .harness import F32, I32, const, convert, info, make_model, rand


def _model(cell="LSTM", x_elem=F32, x_dims=("seq", "batch", 4), w_size=4, hidden=3, dirs=1, **attrs):
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[cell]
    inits = [const("W", rand(dirs, gates * hidden, w_size, seed=1)), const("R", rand(dirs, gates * hidden, hidden))]
    node = helper.make_node(cell, ["x", "W", "R"], ["Y", "Y_h"], name="rec", hidden_size=hidden, **attrs)
    return make_model([node], [info("x", x_elem, list(x_dims))], [info("Y", F32, None), info("Y_h", F32, None)],
                      inits)


def test_one_recurrent_op_with_symbolic_shapes_round_trips():
    graph = convert(_model("LSTM", x_dims=("batch", "seq", 4), dirs=2, direction="bidirectional", layout=1))
    (op,) = [o for o in graph.ops if o.op is Op.RECURRENT]
    seq, batch = sym("seq"), sym("batch")
    for value, want in zip(op.results, [(batch, seq, 2, 3), (batch, 2, 3), (batch, 2, 3)]):
        assert all(same(a, b) for a, b in zip(value.type.shape, want)), value.type
    text = api.print_ir(graph)
    assert api.print_ir(parse_graph(text)) == text


@pytest.mark.parametrize("cell,attrs,message", [
    ("LSTM", dict(activations=["Sigmoid", "Gelu", "Tanh"]), "activation 'Gelu' is not supported"),
    ("LSTM", dict(dirs=2, direction="bidirectional", activations=["Sigmoid", "Tanh", "Tanh"]),
     "LSTM with 2 direction.s. takes 6 activations"),
    ("GRU", dict(direction="sideways"), "direction 'sideways' is not one of forward, reverse, bidirectional"),
    ("RNN", dict(clip=-1.0), "clip must be > 0"),
    ("LSTM", dict(layout=2), "layout 2 is not 0"),
])
def test_unsupported_attributes_are_refused(cell, attrs, message):
    with pytest.raises(ConversionError, match=message) as e:
        convert(_model(cell, **attrs))
    assert "'rec'" in str(e.value)


def test_integer_input_is_refused():
    with pytest.raises(ConversionError, match="X is i32; recurrent cells are converted for float data only"):
        convert(_model("RNN", x_elem=I32))


def test_weight_shape_mismatch_is_a_shape_error():
    with pytest.raises(ShapeError, match="rec"):
        convert(_model("GRU", w_size=5))


def test_batch_of_initial_state_is_recorded_and_checked():
    inits = [const("W", rand(1, 3, 4, seed=1)), const("R", rand(1, 3, 3, seed=2))]
    node = helper.make_node("RNN", ["x", "W", "R", "", "", "h0"], ["Y"], name="rec", hidden_size=3)
    model = make_model([node], [info("x", F32, ["seq", "batch", 4]), info("h0", F32, [1, "n", 3])],
                       [info("Y", F32, None)], inits)
    graph = convert(model)
    with pytest.raises(ShapeError, match="n == batch does not hold") as e:
        api.specialize(graph, {"seq": 2, "batch": 2, "n": 3})
    assert "RNN initial_h axis 1" in e.value.diagnostics[0].notes[0]
    assert api.specialize(graph, {"seq": 2, "batch": 3, "n": 3}).histogram().get("RECURRENT") is None


def test_unknown_sequence_length_raises_the_data_dependent_error():
    graph = convert(_model("LSTM"))
    (op,) = [o for o in graph.ops if o.op is Op.RECURRENT]
    with pytest.raises(DataDependentDim, match=r"RECURRENT \(LSTM\) at .*'rec'.*sequence length is only known"):
        rule_for(Op.RECURRENT)(op, op.operands, Builder(Graph()), {})


def test_symbolic_program_runs_without_binding_first():
    graph = convert(_model("RNN"))
    for seq, batch in ((1, 1), (5, 2)):
        x = np.random.default_rng(seq).uniform(-1, 1, (seq, batch, 4)).astype(np.float32)
        out = api.run(graph, {"x": x})
        assert out["Y"].shape == (seq, 1, batch, 3) and out["Y_h"].shape == (1, batch, 3)
        np.testing.assert_array_equal(out["Y"][-1], out["Y_h"])
