"""The verifier's rules are total, and enforce the TOSA ERROR_IF rules.

Totality: every op of the table is checked against malformed operands (wrong
kinds and ranks, symbolic dims, missing operands) and junk attributes; the
verifier must answer with problems as text and never raise. The ERROR_IF
cases are hand-written ``.tosair`` programs that break one rule of the
specification each; the expected reasons come from the spec's pseudocode.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.error_if import error_if
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import OPS, Op
from tosaconv.ir.parser import ParseError, parse_graph
from tosaconv.ir.printer import field_types
from tosaconv.ir.types import IndexType, TensorType
from tosaconv.ir.verifier import type_problems
from tosaconv.symbolic.expr import sym

N = sym("n")
OPERAND_POOL = [
    TensorType(DType.INT8, ()), TensorType(DType.FP32, (2, 3)), TensorType(DType.INT32, (1, 2, 3, 4)),
    TensorType(DType.FP32, (N, 4, 4, 3)), TensorType(DType.BOOL, (1,)), TensorType(DType.INT16, (N, 2, N)),
    TensorType(DType.INT8, (1, 1, 1, 1, 1)), IndexType(3), IndexType(N),
]


def _junk(field_type, variant: int):
    """A badly chosen value of a field's declared type (empty, negative, wrong length...)."""
    table = {int: (-1, 0, 99), float: (0.0, -1.0, float("nan")), bool: (False, True, True),
             str: ("", "BOGUS", "NEAREST"), tuple: ((), (5,), (-1, N, 0, 2, 7, 1, 3, 9, 2, 2, 2, 2)),
             DType: (DType.INT8, DType.FP32, DType.INDEX)}
    if field_type in table:
        return table[field_type][variant]
    if field_type is np.ndarray:
        return (np.zeros(0), np.ones((2, 2), np.int8), np.array(3.0))[variant]
    if field_type is Graph:
        return Graph()
    return None


def _attrs(op, variant: int):
    values = {}
    for name, t in field_types(op.attrs):   # the printer's view: tuple[int, ...] stands as tuple
        values[name] = _junk(t, variant)
    try:
        return op.attrs(**values)
    except TypeError:
        return op.attrs()


def _operand_lists(op):
    fixed = sum(1 for o in op.operands if not o.variadic)
    for count in {max(fixed, 0), fixed + 1}:
        if count == 0:
            yield []
            continue
        for combo in itertools.islice(itertools.product(OPERAND_POOL, repeat=count), 0, None, 3):
            yield list(combo)


# EXTRACT_DIM is typed by the builder (its value is data); the verifier checks only its result kind.
@pytest.mark.parametrize("name", sorted(n for n in OPS if OPS[n] is not Op.EXTRACT_DIM))
def test_rules_answer_malformed_operands_without_raising(name):
    op = OPS[name]
    checked = 0
    for variant in range(3):
        attrs = _attrs(op, variant)
        for types in _operand_lists(op):
            problems = type_problems(op, types, attrs, [])
            assert isinstance(problems, list) and all(isinstance(p, str) for p in problems)
            reason = error_if(op.name, types, attrs)
            assert reason is None or isinstance(reason, str)
            checked += 1
    assert checked >= 3


def _program(args: str, body: str, result: str) -> str:
    return f"tosair 1\nfunc @main({args}) {{\n  %y = {body} : {result} loc(tosa OP \"y\")\n  return %y as y\n}}\n"


def _conv(x="1x6x6x3", w="5x3x3x3", pad="[0, 0, 0, 0]", stride="[1, 1]", out="1x4x4x5", zp=0, t="f32"):
    args = f"%x: tensor<{x}x{t}>, %w: tensor<{w}x{t}>, %b: tensor<5x{t}>"
    acc = "i32" if t == "i8" else t
    outt = "i32" if t == "i8" else t
    body = (f"CONV2D(%x, %w, %b) {{pad = {pad}, stride = {stride}, dilation = [1, 1], acc_type = {acc}, "
            f"input_zp = {zp}, weight_zp = 0, local_bound = false}}")
    return _program(args, body, f"tensor<{out}x{outt}>")


def _resize(scale="[2, 1, 2, 1]", offset="[0, 0]", border="[0, 0]", x="1x4x4x1", out="1x7x7x1"):
    body = f'RESIZE(%x) {{scale = {scale}, offset = {offset}, border = {border}, mode = "NEAREST"}}'
    return _program(f"%x: tensor<{x}xf32>", body, f"tensor<{out}xf32>")


def _pool(kernel="[2, 2]", stride="[2, 2]", pad="[0, 0, 0, 0]", x="1x4x4x1", out="1x2x2x1"):
    body = f'MAX_POOL2D(%x) {{kernel = {kernel}, stride = {stride}, pad = {pad}, nan_mode = "PROPAGATE"}}'
    return _program(f"%x: tensor<{x}xf32>", body, f"tensor<{out}xf32>")


VALID = {"conv": _conv(), "conv_i8_zp": _conv(t="i8", zp=-3), "resize": _resize(), "pool": _pool()}

# name -> (program, words the reason must hold); each breaks one ERROR_IF rule of the spec's pseudocode.
BROKEN = {
    "matmul_inner_dims": (_program("%a: tensor<1x2x7xf32>, %b: tensor<1x3x5xf32>",
                                   "MATMUL(%a, %b) {a_zp = 0, b_zp = 0}", "tensor<1x2x5xf32>"), "same C"),
    "conv_channels": (_conv(w="5x3x3x5"), "input channels 3 differ from the weight's 5"),
    "conv_inexact_output": (_conv(x="1x6x6x3", stride="[2, 2]", out="1x2x2x5"), "not a multiple of the stride 2"),
    "conv_negative_pad": (_conv(pad="[-1, 1, 0, 0]"), "negative entry"),
    "conv_float_zero_point": (_conv(zp=1), "input_zp is 1"),
    "pool_inexact_output": (_pool(x="1x5x4x1"), "not a multiple of the stride 2"),
    "pool_pad_not_below_kernel": (_pool(pad="[2, 0, 0, 0]", out="1x3x2x1"), "smaller than the kernel"),
    "resize_scale_n": (_resize(scale="[4096, 1, 2, 1]", out="1x12289x7x1"), "above 2048"),
    "resize_downscale": (_resize(scale="[1, 16, 2, 1]", out="1x1x7x1"), "1/16"),
    "resize_offset": (_resize(offset="[-3, 0]", out="1x8x7x1"), "offset_y = -3"),
    "resize_border": (_resize(border="[2, 0]", out="1x8x7x1"), "border_y = 2"),
    "resize_inexact_output": (_resize(scale="[3, 2, 2, 1]", out="1x5x7x1"), "not a multiple"),
    "transpose_negative_perms": (_program("%x: tensor<2x3xf32>", "TRANSPOSE(%x) {perms = [-1, 0]}",
                                          "tensor<3x2xf32>"), "not a permutation"),
    "mul_shift_on_int8": (_program("%x: tensor<2x3xi8>", "MUL(%x, %x) {shift = 3}", "tensor<2x3xi32>"),
                          "needs int32"),
    "negate_float_zero_point": (_program("%x: tensor<2x3xf32>", "NEGATE(%x) {input_zp = 2, output_zp = 0}",
                                         "tensor<2x3xf32>"), "input_zp is 2"),
    "reduce_axis": (_program("%x: tensor<2x3xf32>", "REDUCE_SUM(%x) {axis = 2}", "tensor<2x3xf32>"),
                    "outside [0, 2)"),
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_forms_parse(name):
    """The valid neighbours of the broken programs parse, so each failure below is the rule, not the syntax."""
    parse_graph(VALID[name])


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_broken_rule_is_refused_with_its_reason(name):
    text, words = BROKEN[name]
    with pytest.raises(ParseError) as e:
        parse_graph(text)
    assert "ERROR_IF" in str(e.value) and words in str(e.value)


def test_symbolic_dims_defer_the_rule():
    """With a symbolic height the exact-division rule is unknown: it does not reject before binding."""
    assert error_if("CONV2D", [TensorType(DType.FP32, (1, N, 7, 3)), TensorType(DType.FP32, (5, 3, 3, 3)),
                               TensorType(DType.FP32, (5,))],
                    A.Conv2dAttrs((0, 0, 0, 0), (2, 2), (1, 1), DType.FP32)) is None
    assert "stride 2" in error_if("CONV2D", [TensorType(DType.FP32, (1, 6, 6, 3)), TensorType(DType.FP32, (5, 3, 3, 3)),
                                             TensorType(DType.FP32, (5,))],
                                  A.Conv2dAttrs((0, 0, 0, 0), (2, 2), (1, 1), DType.FP32))
