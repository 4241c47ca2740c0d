"""Seed 003's extent contract: decay rules and passes state the guarantee they need, and it is enforced.

Every decay rule declares ``needs`` (Exact or any); a rule that turns dims into
a shape needs Exact ones. A program whose reshape size or broadcast operand is
only an UpperBound is refused with E-EXTENT (exit 4) naming the op, the dim,
its guarantee and the symbol's origin, never decayed with the bound as a size.
The labels: NonZero's count and EXTRACT_DIM's value are Exact and data-dependent.
"""
from __future__ import annotations

import pytest

from tosaconv.diagnostics import ShapeError
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import OPS, Op
from tosaconv.ir.types import TensorType
from tosaconv.passes import decay
from tosaconv.passes.manager import DEFAULT_PIPELINE, run_pipeline
from tosaconv.passes.specialize import specialize
from tosaconv.symbolic.expr import sym
from tosaconv.symbolic.scope import ExtentKind, SymbolInfo


def _graph(kind: ExtentKind) -> tuple:
    """x[m, n] where n has extent ``kind`` (bounded by m); returns (graph, builder, x)."""
    g = Graph()
    m = g.scope.declare(SymbolInfo("m", "input 'x' axis 0", ExtentKind.EXACT, None, "x", 0))
    n = g.scope.declare(SymbolInfo("n", "a hand-made bound", kind, m, "x", 1))
    x = g.add_input("x", TensorType(DType.FP32, (m, n)))
    return g, Builder(g), x


def _flatten(g, b, x):
    """RESHAPE x[m, n] -> [m*n] with a shape symbol computed from GET_DIMs (decays to a static RESHAPE)."""
    size = b.emit(Op.INDEX_MUL, b.get_dim(x, 0), b.get_dim(x, 1))
    y = b.emit(Op.RESHAPE, x, size, attrs=A.ReshapeAttrs((-1,)))
    g.set_outputs([y], ["y"])
    return g


def test_every_decay_rule_declares_the_extent_it_needs():
    rules = {name: decay.rule_for(op) for name, op in OPS.items() if op.decay}
    assert rules, "no decay rules in the op table"
    for name, rule in rules.items():
        assert isinstance(getattr(rule, "needs", None), ExtentKind), f"decay rule of {name} declares no needs"
    assert rules["RESHAPE"].needs is ExtentKind.EXACT
    assert rules["NONZERO"].needs is ExtentKind.UNKNOWN


def test_registering_a_rule_without_needs_is_a_type_error():
    with pytest.raises(TypeError):
        decay.decays(Op.RESHAPE)


def test_reshape_with_an_exact_symbol_decays():
    g, b, x = _graph(ExtentKind.EXACT)
    static = specialize(_flatten(g, b, x), {"m": 2, "n": 3})
    assert static.outputs[0].type.shape == (6,)


@pytest.mark.parametrize("kind", [ExtentKind.UPPER_BOUND, ExtentKind.UNKNOWN])
def test_reshape_sized_by_a_weaker_extent_is_refused(kind):
    g, b, x = _graph(kind)
    with pytest.raises(ShapeError) as err:
        specialize(_flatten(g, b, x), {"m": 2, "n": 3})
    (d,) = err.value.diagnostics
    assert d.code == "E-EXTENT" and err.value.exit_code == 4
    assert "the decay rule of RESHAPE needs Exact extents" in d.message
    assert f"'n' is {kind.value} (a hand-made bound)" in d.message


def test_broadcast_check_refuses_an_upper_bound_operand():
    g, b, x = _graph(ExtentKind.UPPER_BOUND)
    y = g.add_input("y", TensorType(DType.FP32, (sym("m"), sym("m"))))
    g.set_outputs([b.emit(Op.ADD, x, y)], ["z"])
    with pytest.raises(ShapeError) as err:
        run_pipeline(g)
    (d,) = err.value.diagnostics
    assert d.code == "E-EXTENT" and "pass 'broadcast-check' needs Exact extents at ADD" in d.message
    assert "dim n whose extent is only UpperBound" in d.message


def test_passes_state_what_they_need():
    needs = {p.name: p.needs for p in DEFAULT_PIPELINE}
    assert needs["broadcast-check"] is ExtentKind.EXACT
    assert needs["rank-equalization"] is ExtentKind.UNKNOWN    # it reads ranks only, which are always exact


def test_extract_dim_value_is_exact_and_data_dependent():
    g = Graph()
    b = Builder(g)
    t = g.add_input("t", TensorType(DType.INT32, (2,)))
    v = b.extract_dim(t, 1)
    (name,) = v.type.symbols()
    info = g.scope.symbols[name]
    assert info.kind is ExtentKind.EXACT and info.data_dependent


def test_an_op_after_fine_ops_of_other_types_is_still_checked():
    """The pass manager checks a contract once per type object; an op with a type not seen yet is checked."""
    g, b, x = _graph(ExtentKind.UPPER_BOUND)
    y = g.add_input("y", TensorType(DType.FP32, (sym("m"), sym("m"))))
    fine = [b.emit(Op.ADD, y, y) for _ in range(3)]
    g.set_outputs([*fine, b.emit(Op.ADD, x, y)], ["a", "b", "c", "z"])
    with pytest.raises(ShapeError) as err:
        run_pipeline(g)
    (d,) = err.value.diagnostics
    assert "pass 'broadcast-check' needs Exact extents at ADD" in d.message and "dim n" in d.message


def test_a_pass_asking_for_equal_ranks_is_checked_for_them_though_it_changed_nothing():
    """A pass that changes nothing but promises equal ranks after it: the manager checks the ranks alone."""
    from tosaconv.passes.manager import Pass, PassError
    g = Graph()
    x = g.add_input("x", TensorType(DType.FP32, (2, 3)))
    c = Builder(g).const([1.0, 2.0, 3.0], "float32")
    g.set_outputs([Builder(g).emit(Op.ADD, x, c)], ["y"])
    nothing = [Pass("nothing", lambda graph: False), Pass("claims-equal-ranks", lambda graph: False,
                                                          equal_ranks_after=True)]
    with pytest.raises(PassError, match=r"after pass 'claims-equal-ranks'.*op 1 ADD .*operand ranks \[2, 1\] differ"):
        run_pipeline(g, nothing)
    run_pipeline(g, nothing[:1])    # without the promise the same graph is fine
