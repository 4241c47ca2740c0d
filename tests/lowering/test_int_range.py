"""lowering.int_range: the interval it proves holds every value the program computes, checked by running
the program on all 256 values of its int8 input with the interpreter, and is tight where the ops allow."""
from __future__ import annotations

import numpy as np

from tosaconv.interpreter.evaluator import evaluate
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType
from tosaconv.lowering.int_range import value_range

ALL = np.arange(-128, 128, dtype=np.int8)


def _program(build):
    g = Graph()
    x = g.add_input("x", TensorType(DType.INT8, (256,)))
    b = Builder(g, Location("test", "range", "test"))
    y = build(b, x)
    g.set_outputs([y], ["y"])
    return g, y


def _rescale(b, x, scale_multiplier: int, shift: int, dtype=DType.INT8, input_zp=0, output_zp=0):
    attrs = A.RescaleAttrs((scale_multiplier,), (shift,), input_zp, output_zp, True, "SINGLE_ROUND", False,
                           output_dtype=dtype)
    return b.emit(Op.RESCALE, x, attrs=attrs, result_type=x.type.with_dtype(dtype))


def _check(build, tight: bool = True):
    g, y = _program(build)
    lo, hi = value_range(y)
    values = np.asarray(evaluate(g, {"x": ALL})["y"])
    assert lo <= values.min() and values.max() <= hi, ((lo, hi), (values.min(), values.max()))
    if tight:
        assert (lo, hi) == (values.min(), values.max())
    return lo, hi


def test_a_sum_of_two_squares_tables_is_never_below_the_zero_point():
    """silero's spectrum: Pow(x, 2) as a TABLE (entries >= 0), two of them rescaled and added, rescaled to
    int8 at zero point 0: the proven interval starts at 0, so sqrt's NaN half is unreachable."""
    square = np.clip(np.rint((ALL.astype(np.float64) * 0.03) ** 2 / 0.04), -128, 127).astype(np.int8)

    def build(b, x):
        t1 = b.emit(Op.TABLE, x, attrs=A.TableAttrs(square))
        t2 = b.emit(Op.TABLE, b.emit(Op.REVERSE, x, attrs=A.AxisAttrs(0)), attrs=A.TableAttrs(square))
        a1, a2 = (_rescale(b, t, 1 << 30, 20, DType.INT32) for t in (t1, t2))
        return _rescale(b, b.emit(Op.ADD, a1, a2), 1 << 30, 40)
    lo, _ = _check(build)
    assert lo == 0


def test_a_table_over_a_clamped_input_sees_only_the_reachable_entries():
    table = np.arange(-128, 128, dtype=np.int64)[::-1].astype(np.int8)     # decreasing
    lo, hi = _check(lambda b, x: b.emit(Op.TABLE, b.emit(Op.CLAMP, x, attrs=A.ClampAttrs(-10, 20)),
                                        attrs=A.TableAttrs(table)))
    assert (lo, hi) == (-21, 9)


def test_sub_pad_concat_maximum_and_slices():
    def build(b, x):
        low = b.emit(Op.CLAMP, x, attrs=A.ClampAttrs(-5, 5))
        diff = b.emit(Op.SUB, _rescale(b, low, 1 << 30, 30, DType.INT32), b.const(np.full((256,), 7, np.int32)))
        small = _rescale(b, diff, 1 << 30, 30)
        padded = b.emit(Op.PAD, small, attrs=A.PadAttrs((2, 2), 50.0))
        part = b.emit(Op.SLICE, padded, attrs=A.SliceAttrs((0,), (256,)))
        return b.emit(Op.MAXIMUM, part, b.emit(Op.CLAMP, x, attrs=A.ClampAttrs(-128, -100)))
    _check(build, tight=False)


def test_an_add_that_could_wrap_and_unknown_ops_give_the_whole_range():
    def wraps(b, x):
        big = _rescale(b, x, 1 << 30, 6, DType.INT32)          # x * 2**24
        total = b.emit(Op.ADD, big, big)
        total = b.emit(Op.ADD, total, total)
        return b.emit(Op.ADD, total, total)                       # up to 2**31: may wrap
    g, y = _program(wraps)
    assert value_range(y) == (-(1 << 31), (1 << 31) - 1)
    g, y = _program(lambda b, x: b.emit(Op.BITWISE_NOT, x))
    assert value_range(y) == (-128, 127)


def test_a_cast_that_would_wrap_gives_the_whole_range():
    g, y = _program(lambda b, x: b.emit(Op.CAST, _rescale(b, x, 1 << 30, 26, DType.INT32),
                                        attrs=A.CastAttrs(DType.INT8)))
    assert value_range(y) == (-128, 127)


def _doublings(count: int):
    def build(b, x):
        v = b.emit(Op.CLAMP, _rescale(b, x, 1 << 30, 30, DType.INT32), attrs=A.ClampAttrs(0, 1))
        for _ in range(count):
            v = b.emit(Op.ADD, v, v)
        return v
    return build


def test_shared_operands_are_analysed_once():
    """A chain of 60 ADD(v, v) would take 2**60 steps without memoization; the interval doubles each time."""
    assert value_range(_program(_doublings(20))[1]) == (0, 1 << 20)
    assert value_range(_program(_doublings(60))[1]) == (-(1 << 31), (1 << 31) - 1)   # could wrap: whole range
