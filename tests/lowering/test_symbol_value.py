"""Where a symbol gets its Index value (issue 11, class 4).

An input dim's symbol is GET_DIM of that input. A symbol an op makes (a
NonZero count, a Loop's data-dependent iteration count) has no input to read
it from; any computed value that has it as a dim defines it, so sizes
computed from it still have a value, which folds once specialization makes
that value static. With no such value, the error names the symbol and its
origin.
"""
from __future__ import annotations

import pytest

from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType
from tosaconv.lowering.context import LoweringContext
from tosaconv.lowering.dims import index_for, symbol_value
from tosaconv.lowering.errors import ConvertError
from tosaconv.symbolic.expr import add, sym
from tosaconv.symbolic.scope import ExtentKind, SymbolInfo


def _context():
    ctx = LoweringContext(Graph())
    x = ctx.graph.add_input("x", TensorType(DType.FP32, (2, 5)))
    return ctx, x


def test_a_symbol_an_op_makes_is_read_from_a_value_that_carries_it():
    ctx, x = _context()
    ctx.graph.scope.declare(SymbolInfo("k", "NonZero 'nz' output axis 1", ExtentKind.UPPER_BOUND, 10))
    nz = ctx.b.emit(Op.NONZERO, x, attrs=A.NonZeroAttrs("k"))
    k = symbol_value(ctx, "k")
    assert k.producer.op is Op.GET_DIM and k.producer.operands[0] is nz and k.producer.attrs.dim_index == 1
    assert index_for(ctx, add(sym("k"), 1)).producer.operands[0] is k     # sizes computed from it use it
    assert symbol_value(ctx, "k") is k                                    # and it is computed once


def test_a_symbol_nothing_carries_is_an_error_naming_its_origin():
    ctx, _ = _context()
    ctx.graph.scope.declare(SymbolInfo("it", "the number of iterations Loop 'l' runs", ExtentKind.UNKNOWN))
    with pytest.raises(ConvertError, match="symbol 'it' \\(the number of iterations Loop 'l' runs\\) has no value"):
        symbol_value(ctx, "it")
