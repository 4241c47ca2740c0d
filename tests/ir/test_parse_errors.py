"""Malformed ``.tosair`` text: every error is a ParseError with a line, a column and what was expected.

Table-driven: each row edits a valid text and gives the expected position and
a fragment of the message. Then two small fuzzers: every truncation of a valid
file, and seeded random one-character edits, must give a ParseError (or a
graph), never a raw exception.
"""
from __future__ import annotations

import random
import re

import pytest

from tosaconv.ir.graph import Graph
from tosaconv.ir.parser import ParseError, parse_graph
from tosaconv.ir.printer import print_graph

from .graphs import ALL

BASE = '''\
tosair 1
symbol s : Exact origin "input 'x' axis 0"
func @main(%x: tensor<[s]x2xf32>) {
  %y = ABS(%x) : tensor<[s]x2xf32> loc(onnx Abs "a")
  return %y as y
}
'''
OP_LINE = '''  %y = ABS(%x) : tensor<[s]x2xf32> loc(onnx Abs "a")'''


def _op(line: str) -> str:
    return BASE.replace(OP_LINE, "  " + line)


def _edit(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new, 1)


CASES = [
    # (text, line, column, message fragment)
    (_edit("tosair 1", "tosir 1"), 1, 1, "expected 'tosair' at the start of the text"),
    (_edit("tosair 1", "tosair 2"), 1, 8, "unsupported tosair version"),
    (_edit("Exact", "Exactly"), 2, 12, "expected an extent kind (Exact, UpperBound or Unknown), found 'Exactly'"),
    (_edit("origin", "source"), 2, 18, "expected 'origin'"),
    (_edit("func", 'symbol s : Unknown origin "again"\nfunc'), 3, 8, "symbol 's' is declared twice"),
    (_edit("func", 'constraint same(s, 1) at Add "a" reason "r"\nfunc'), 3, 12, "expected a constraint kind"),
    (_edit("func", 'constraint eq(s, ) at Add "a" reason "r"\nfunc'), 3, 18, "expected the right-hand dim"),
    (_edit("func", 'constraint eq(s, 1) at Add "a"\nfunc'), 4, 1, "expected 'reason'"),
    (_edit("func", 'io sideways "x" scale 0.5 zero_point 0 from float32\nfunc'), 3, 4,
     "expected 'input' or 'output', found 'sideways'"),
    (_edit("func", 'io input "x" scale zero_point 0 from float32\nfunc'), 3, 20, "expected a scale"),
    (_edit("func", 'io output "y" scale 0.5 zero_point 0 float32\nfunc'), 3, 38, "expected 'from'"),
    (_edit("[s]x2xf32>) {", "[s +]x2xf32>) {"), 3, 24, "invalid a dim 's +'"),
    (_edit("xf32>) {", "xf33>) {"), 3, 29, "expected an element type such as f32, found 'f33'"),
    (_edit("%x: tensor", "%x tensor"), 3, 15, "expected ':' after the input name"),
    (_edit("ABS(", "ABZ("), 4, 8, "unknown op 'ABZ'"),
    (_edit("ABS(%x)", "ABS(%z)"), 4, 12, "value %z is used before it is defined"),
    (_edit("ABS(%x)", "ADD(%x)"), 4, 3, "ADD takes 2 operands, got 1"),
    (_edit("ABS(%x)", "ABS(%x) {foo = 1}"), 4, 17, "ABS has no attribute 'foo'"),
    (_edit(": tensor<[s]x2xf32> loc", ": tensor<[s]x3xf32> loc"), 4, 3,
     "result 0 has type tensor<[s]x3xf32>, but the shape rule of ABS gives tensor<[s]x2xf32>"),
    (_edit(' loc(onnx Abs "a")', ""), 5, 3, "expected 'loc(' (the op's source location), found 'return'"),
    (_edit('"a")', '"a)'), 4, 49, "unterminated string"),
    (_edit("Abs", "Abs 'a'"), 4, 49, "expected the source node name"),
    (_edit("  return", OP_LINE + "\n  return"), 5, 3, "value %y is defined twice"),
    (_edit("%y as y", "%q as y"), 5, 10, "value %q is used before it is defined"),
    (_edit("%y as y", "%y y"), 5, 13, "expected 'as' after the returned value"),
    (_edit("  return %y as y\n", ""), 5, 1, "expected an op name, found '}'"),
    (BASE + "junk", 7, 1, "unexpected text after the end of the func, found 'junk'"),
    (BASE[:-3], 5, 17, "expected '}' to close the func body, found the end of the text"),
    (_op('%y = RESHAPE(%x) : tensor<2xf32> loc(onnx R "r")'), 4, 8, "RESHAPE needs attribute(s) new_shape"),
    (_op('%y = CLAMP(%x) {min_val = x, max_val = 1.0} : tensor<2xf32> loc(onnx C "c")'), 4, 29, "expected a number"),
    (_op('%y = CAST(%x) {dtype = f64} : tensor<2xf32> loc(onnx C "c")'), 4, 26, "found 'f64'"),
    (_op('%y = CAST(%x) {dtype = f32, dtype = f32} : tensor<2xf32> loc(onnx C "c")'), 4, 31, "given twice"),
    (_op('%y = ARITHMETIC_RIGHT_SHIFT(%x, %x) {round = yes} : t loc(onnx A "a")'), 4, 48, "expected true or false"),
    (_op('%y = TRANSPOSE(%x) {perms = [0 1]} : tensor<2x[s]xf32> loc(onnx T "t")'), 4, 32, "invalid a dim '0 1'"),
    (_op('%y = CONST() {values = dense<f7 [2] base64 "AAAA">} : t loc(onnx C "c")'), 4, 32, "expected an element type: bool"),
    (_op('%y = CONST() {values = dense<f32 [2] base64 "!!">} : t loc(onnx C "c")'), 4, 47, "not valid base64"),
    (_op('%y = CONST() {values = dense<f32 [2] base64 "AAAA">} : t loc(onnx C "c")'), 4, 47,
     "the constant data has 3 bytes; shape [2] of float32 needs 8"),
    (_op('%y = CONST() {values = dense<f32 [s] base64 "">} : t loc(onnx C "c")'), 4, 36, "shape must be non-negative"),
    (_op('%y = CONST() {values = dense<f32 [2] "AAAA">} : t loc(onnx C "c")'), 4, 40, "expected 'base64'"),
    (_op('%y = GET_DIM(%x) {dim_index = 5} : index<s> loc(onnx S "s")'), 4, 3, "rejects the operands: axis 5"),
    (_op('%y = GET_DIM(%x) {dim_index = 0} : index<floordiv(s, 0)> loc(onnx S "s")'), 4, 44, "by zero"),
    (_op('%y = ABS(%x) : tensor<[s]x2xf32> loc(onnx Abs "a" fused[])'), 4, 59, "expected the location's source"),
    (_op('%"y\\q" = ABS(%x) : tensor<[s]x2xf32> loc(onnx Abs "a")'), 4, 4, "invalid escape in string"),
]


@pytest.mark.parametrize("text, line, column, fragment", CASES, ids=[c[3][:40] for c in CASES])
def test_parse_error_position_and_message(text, line, column, fragment):
    with pytest.raises(ParseError) as info:
        parse_graph(text)
    err = info.value
    assert fragment in err.message
    assert (err.line, err.column) == (line, column), err.message
    assert str(err).startswith(f"line {line}, column {column}: ")


def test_base_text_is_valid():
    assert isinstance(parse_graph(BASE), Graph)


TEXTS = [print_graph(build()) for build in ALL]


@pytest.mark.parametrize("text", TEXTS, ids=[b.__name__ for b in ALL])
def test_every_truncation_is_a_parse_error(text):
    end = text.rindex("}")
    step = 1 if len(text) < 3000 else 3
    for cut in range(0, end, step):
        with pytest.raises(ParseError):
            parse_graph(text[:cut])


MUTATION_CHARS = '%"[](){}<>,:=x-0123456789abfsi@ \n\\/'


def _mutate(text: str, rng: random.Random) -> str:
    i = rng.randrange(len(text))
    edit = rng.choice(["delete", "insert", "replace"])
    c = rng.choice(MUTATION_CHARS)
    if edit == "delete":
        return text[:i] + text[i + 1:]
    return text[:i] + c + text[i + (edit == "replace"):]


@pytest.mark.parametrize("seed", range(len(TEXTS)))
def test_random_edits_give_a_graph_or_a_parse_error(seed):
    rng, text = random.Random(seed), TEXTS[seed]
    for _ in range(400):
        mutated = _mutate(text, rng)
        try:
            parse_graph(mutated)
        except ParseError:
            pass


_CONST = 'c = CONST() {{values = dense<{body}>, int48 = false, element_type = ""}} : tensor<{t}> loc(onnx Const "c")'


@pytest.mark.parametrize("body, t, fragment", [
    ("f32 [2] [1.5]", "2xf32", "the constant lists 1 values; shape [2] needs 2"),
    ("i8 [2] [1, 2.5]", "2xi8", "a int8 constant lists a value that is not an integer"),
    ("i8 [2] [1, 300]", "2xi8", "a value is outside the range of int8"),
    ("bool [1] [1]", "1xbool", "expected true or false"),
])
def test_a_readable_dense_constant_that_does_not_fit_is_a_parse_error(body, t, fragment):
    text = BASE.replace(OP_LINE, "  %" + _CONST.format(body=body, t=t) + "\n" + OP_LINE)
    with pytest.raises(ParseError, match=re.escape(fragment)):
        parse_graph(text)


def test_a_readable_dense_constant_reads_the_values_in_c_order():
    text = BASE.replace(OP_LINE, "  %" + _CONST.format(body="i16 [2, 2] [1, -2, 3, 4]", t="2x2xi16") + "\n" + OP_LINE)
    const = next(op for op in parse_graph(text).ops if op.op.name == "CONST")
    assert const.attrs.values.dtype.name == "int16"
    assert const.attrs.values.tolist() == [[1, -2], [3, 4]]
