"""Regions (the graphs held by COND_IF, IF and LOOP) across the IR's tools.

The verifier checks a region like a graph of its own, isolated from above;
the parser rejects a region that uses an outer value; the pass manager runs
every pass inside regions (rank equalization there too) and their broadcast
checks go to the region's own ledger; the interpreter checks a region's
ledger when it runs it; and a static COND_IF survives writing a ``.tosa``,
reading it back and writing it again byte for byte.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.emit import read_tosa, write_tosa
from tosaconv.interpreter import KernelError, evaluate
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op
from tosaconv.ir.parser import ParseError, parse_graph
from tosaconv.ir.printer import print_graph
from tosaconv.ir.types import TensorType
from tosaconv.ir.verifier import verify
from tosaconv.passes import run_pipeline
from tosaconv.symbolic.constraints import Constraint, Kind, Provenance
from tosaconv.symbolic.scope import SymbolInfo

F32 = DType.FP32


def _cond_if(shape=(2, 3), then_op=Op.ADD, other=None):
    """``y = c ? x op x : x - x`` with x of ``shape`` (ints or symbol names)."""
    g = Graph()
    dims = tuple(g.scope.declare(SymbolInfo(d, f"input 'x' axis {i}", input_name="x", axis=i))
                 if isinstance(d, str) else d for i, d in enumerate(shape))
    x, c = g.add_input("x", TensorType(F32, dims)), g.add_input("c", TensorType(DType.BOOL, ()))
    regions = []
    for name, op in (("then", then_op), ("else", Op.SUB)):
        r = g.region_shell(name)
        a = r.add_input("a", TensorType(F32, dims))
        b = Builder(r)
        r.set_outputs([b.emit(op, a, other(b) if other else a)], ["out"])
        regions.append(r)
    y = Builder(g).create(Op.COND_IF, [c, x], A.CondIfAttrs(*regions)).result
    g.set_outputs([y], ["y"])
    return g


def test_verifier_checks_region_inputs_against_operands():
    g = _cond_if()
    g.ops[0].attrs.then_graph.inputs[0].type = TensorType(F32, (3, 2))
    problems = verify(g)
    assert any("then_graph input 0 has type tensor<3x2xf32>" in p for p in problems)


def test_verifier_rejects_a_region_that_uses_an_outer_value():
    g = _cond_if()
    region, outer = g.ops[0].attrs.else_graph, g.inputs[0]
    region.ops[0].operands[0] = outer
    assert any(p.startswith("op 0 COND_IF") and "in else_graph @else" in p and "not defined in the graph" in p
               for p in verify(g))


def test_parser_rejects_a_region_that_uses_an_outer_value():
    text = print_graph(_cond_if()).replace("SUB(%a, %a)", "SUB(%x, %a)")
    with pytest.raises(ParseError, match="value %x is used before it is defined"):
        parse_graph(text)


def test_passes_run_inside_regions():
    # The then-branch adds a rank-1 constant to a rank-2 value: rank equalization must fix it there.
    g = _cond_if(("n", 3), other=lambda b: b.const(np.ones((3,), np.float32)))
    run_pipeline(g)
    adds = [op for op in g.ops[0].attrs.then_graph.ops if op.op is Op.ADD]
    assert adds and all(op.operands[0].type.rank == op.operands[1].type.rank == 2 for op in adds)
    assert verify(g, require_equal_ranks=True) == []
    text = print_graph(g)
    assert print_graph(parse_graph(text)) == text


def test_interpreter_checks_the_taken_regions_ledger():
    g = _cond_if(("n", 3))
    g.ops[0].attrs.then_graph.ledger.entries.append(
        Constraint(Kind.GE, g.inputs[0].type.shape[0], 3, Provenance("If", "branch", "the then branch needs 3 rows")))
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(evaluate(g, {"x": x, "c": np.array(False)})["y"], np.zeros((2, 3)))
    with pytest.raises(KernelError, match="the then branch needs 3 rows"):
        evaluate(g, {"x": x, "c": np.array(True)})


def test_static_cond_if_survives_writing_and_reading():
    g = _cond_if()
    data = write_tosa(g)
    back = read_tosa(data)
    assert [op.op.name for op in back.ops] == ["COND_IF"]
    assert write_tosa(back) == data
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for c in (True, False):
        np.testing.assert_array_equal(evaluate(back, {"x": x, "c": np.array(c)})["y"],
                                      evaluate(g, {"x": x, "c": np.array(c)})["y"])
