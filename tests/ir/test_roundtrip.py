"""Round trips of the ``.tosair`` text form: print, parse, print again, compare.

Table-driven over the hand-built graphs in :mod:`.graphs`; plus a golden text
that pins the syntax, a hand-written text with comments and free spacing, the
name-quoting rules, and a guard that the graphs cover every attribute field
type the op table uses.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import OPS
from tosaconv.ir.parser import parse_graph
from tosaconv.ir.printer import dense_text, field_types, print_graph, value_ref, word
from tosaconv.ir.verifier import verify

from . import graphs
from .graphs import ALL, assert_equivalent


@pytest.mark.parametrize("build", ALL, ids=lambda f: f.__name__)
def test_print_parse_print_is_identity(build):
    text = print_graph(build())
    assert print_graph(parse_graph(text)) == text


@pytest.mark.parametrize("build", ALL, ids=lambda f: f.__name__)
def test_parsed_graph_is_equivalent_and_verifies(build):
    g = build()
    parsed = parse_graph(print_graph(g))
    assert_equivalent(g, parsed)
    assert verify(g) == []
    assert verify(parsed) == []


@pytest.mark.parametrize("build", ALL, ids=lambda f: f.__name__)
def test_printing_is_deterministic(build):
    assert print_graph(build()) == print_graph(build())


def test_graphs_cover_every_attribute_field_type():
    in_table = {t for op in OPS.values() for _, t in field_types(op.attrs)}
    covered = {t for build in ALL for op in build().ops for _, t in field_types(op.op.attrs)}
    assert in_table == covered == {int, float, bool, str, DType, tuple, np.ndarray, Graph}


GOLDEN = '''\
tosair 1
source "tiny.onnx (opset 17)"
symbol batch : Exact input %x axis 0 origin "input 'x' axis 0"
symbol seq : Exact input %x axis 1 origin "input 'x' axis 1"
constraint broadcastable(batch, seq) at Add "add_1" reason "Add operands broadcast"
func @main(%x: tensor<[batch]x[seq]x64xf32>) {
  %r = GET_DIM(%x) {dim_index = 0} : index<batch> loc(onnx Reshape "r")
  %r_2 = RESHAPE(%x, %r) {new_shape = [-1, seq, 16, 4]} : tensor<[batch]x[seq]x16x4xf32> loc(onnx Reshape "r")
  return %r_2 as logits
}
'''


def test_golden_text():
    assert print_graph(graphs.build_tiny()) == GOLDEN


HAND_WRITTEN = '''
// written by hand: comments, blank lines and free spacing are fine
tosair 1   // format version
symbol "n" : UpperBound( 2 * m ) origin "hand"   symbol m : Exact origin "hand"
func @main( %x : tensor< [n] x 3 x i8 > ,%y:index<m>) {
  %0 = CAST( %x ) { dtype = f32 } : tensor<[n]x3xf32>
      loc( onnx Cast "c" )  // an op may span lines
  return %0 as out , %y as "m value"
}
'''


def test_hand_written_text_with_comments_and_spacing():
    g = parse_graph(HAND_WRITTEN)
    assert [v.name for v in g.inputs] == ["x", "y"] and g.output_names == ["out", "m value"]
    assert str(g.scope.symbols["n"].bound) == "2*m"
    assert print_graph(parse_graph(print_graph(g))) == print_graph(g)


@pytest.mark.parametrize("name, text", [
    ("x", "%x"), ("input_ids.1", "%input_ids.1"), ("123", "%123"), ("", '%""'),
    ("onnx::MatMul_12", '%"onnx::MatMul_12"'), ("/m/a b", '%"/m/a b"'), ('q"', '%"q\\""'),
    ("new\nline", '%"new\\nline"'),
])
def test_value_names_are_bare_when_simple(name, text):
    assert value_ref(name) == text


@pytest.mark.parametrize("name, text", [
    ("logits", "logits"), ("out.1", "out.1"), ("1st", '"1st"'), ("out:0", '"out:0"'), ("", '""'),
])
def test_output_names_are_bare_when_simple(name, text):
    assert word(name) == text


def test_dense_data_is_little_endian_whatever_the_byte_order():
    # 1 -> 01 00 00 00, -2 -> fe ff ff ff
    expected = 'dense<i32 [2] base64 "AQAAAP7///8=">'
    assert dense_text(np.array([1, -2], ">i4")) == dense_text(np.array([1, -2], "<i4")) == expected


def test_io_quantization_round_trips():
    """--int-io's edge record (and uint8 bits without it) survives print and parse, scales exactly."""
    from tosaconv.ir.io_quant import EdgeQuant
    from tosaconv.ir.types import TensorType
    g = Graph(int_io=True)
    x = g.add_input("in/put:0", TensorType(DType.INT8, (1, 4)))
    g.set_outputs([x], ["out"])
    g.input_quant["in/put:0"] = EdgeQuant(float(np.float32(0.007843137718737125)), -1, "float32")
    g.output_quant["out"] = EdgeQuant(3.0517578125e-05, 200, "uint8", unsigned=True)
    text = print_graph(g)
    assert 'io input "in/put:0" scale 0.007843137718737125 zero_point -1 from float32\n' in text
    parsed = parse_graph(text)
    assert (parsed.int_io, parsed.input_quant, parsed.output_quant) == (True, g.input_quant, g.output_quant)
    assert print_graph(parsed) == text
