"""Seed 004: the ledger is a constraint system (facts inform later proofs), not a flat list.

A recorded ``a == b`` between two input symbols makes one an alias of the
other (the meet): later proofs see them as one symbol, so ``prove(a == b)``
is YES and implied facts get no entry. A divisibility fact lets proofs write
the symbol as a multiple, so the reshape's ``n == 4*floordiv(n, 4)`` follows
from ``n % 4 == 0``. Provable facts are never recorded; an earlier entry that
a later fact proves is marked PROVEN; ASSERTED survives the text IR.
"""
from __future__ import annotations

import pytest

from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op
from tosaconv.ir.parser import parse_graph
from tosaconv.ir.printer import print_graph
from tosaconv.ir.types import TensorType
from tosaconv.symbolic.constraints import Kind, Ledger, Provenance, Status
from tosaconv.symbolic.expr import floordiv, same, sym
from tosaconv.symbolic.scope import Decision, ExtentKind, Rel, Scope, SymbolInfo

WHY = Provenance("MatMul", "mm", "MatMul inner dims")
a, b, c, n, x0 = sym("a"), sym("b"), sym("c"), sym("n"), sym("x.0")


def _scope(*names, data_dependent=()) -> Scope:
    scope = Scope()
    for name in names:
        scope.declare(SymbolInfo(name, f"input '{name}'", ExtentKind.EXACT, data_dependent=name in data_dependent))
    return scope


def test_recorded_equality_informs_later_proofs():
    scope, ledger = _scope("a", "b"), Ledger()
    assert ledger.prove(a, Rel.EQ, b) is Decision.UNKNOWN
    assert ledger.require(Kind.EQ, a, b, WHY, scope) is Decision.UNKNOWN
    assert ledger.prove(a, Rel.EQ, b) is Decision.YES
    assert same(ledger.refine(b), a) and same(ledger.refine(2 * b + 1), 2 * a + 1)   # types use one symbol
    assert ledger.require(Kind.BROADCASTABLE, b, a, WHY, scope) is Decision.YES
    assert ledger.require(Kind.EQ, a + 3, b + 3, WHY, scope) is Decision.YES
    assert [e.text() for e in ledger.entries] == ["a == b"]


def test_equalities_chain_to_the_first_declared_symbol():
    scope, ledger = _scope("a", "b", "c"), Ledger()
    ledger.require(Kind.EQ, c, b, WHY, scope)
    ledger.require(Kind.EQ, b, a, WHY, scope)
    assert same(ledger.refine(c), a) and same(ledger.refine(b), a)
    assert ledger.prove(c, Rel.EQ, a) is Decision.YES
    assert len(ledger.entries) == 2


def test_a_data_dependent_symbol_is_never_an_alias():
    scope, ledger = _scope("n", "k", data_dependent=("k",)), Ledger()
    ledger.require(Kind.EQ, n, sym("k"), WHY, scope)
    assert ledger.aliases == {} and len(ledger.entries) == 1     # checked when the model runs


def test_binding_an_alias_binds_its_representative():
    scope, ledger = _scope("a", "b"), Ledger()
    ledger.require(Kind.EQ, a, b, WHY, scope)
    assert ledger.with_representatives({"b": 3}) == {"b": 3, "a": 3}
    assert ledger.with_representatives({"a": 2, "b": 3}) == {"a": 2, "b": 3}   # the entry reports the clash


def test_provably_true_divisibility_is_not_recorded():
    ledger = Ledger()
    assert ledger.require(Kind.DIVISIBLE, 24 * x0, x0, WHY, _scope("x.0")) is Decision.YES
    assert ledger.entries == []


def test_divisibility_fact_proves_the_reshape_element_count():
    scope, ledger = _scope("n"), Ledger()
    ledger.require(Kind.DIVISIBLE, n, 4, WHY, scope)
    assert ledger.require(Kind.EQ, n, 4 * floordiv(n, 4), WHY, scope) is Decision.YES
    assert ledger.require(Kind.GE, n, 4, WHY, scope) is Decision.YES       # a multiple of 4 is at least 4
    assert ledger.prove(n, Rel.GE, 5) is Decision.UNKNOWN
    assert [e.text() for e in ledger.entries] == ["n % 4 == 0"]


def test_an_entry_a_later_fact_proves_is_marked_proven():
    scope, ledger = _scope("a", "b"), Ledger()
    ledger.require(Kind.BROADCASTABLE, a, b, WHY, scope)
    ledger.require(Kind.EQ, a, b, WHY, scope)
    assert [(e.text(), e.status) for e in ledger.entries] == [
        ("broadcastable(a, b)", Status.PROVEN), ("a == b", Status.CHECKED_AT_BINDING)]
    # a proven entry is still checked (it holds whenever the facts do): bindings that break the fact break both
    assert [v.constraint.text() for v in ledger.check({"a": 2, "b": 3})] == ["broadcastable(a, b)", "a == b"]


def test_status_and_aliases_survive_the_text_ir():
    g = Graph()
    for name in ("a", "b"):
        g.scope.declare(SymbolInfo(name, f"input '{name}'", ExtentKind.EXACT))
    x = g.add_input("x", TensorType(DType.FP32, (a,)))
    g.ledger.require(Kind.EQ, a, b, WHY, g.scope)
    g.ledger.require(Kind.GE, a, 2, Provenance("Squeeze", "sq", "keeps the dim"), g.scope)
    g.ledger.mark(g.ledger.entries[1], Status.ASSERTED)
    g.set_outputs([Builder(g).emit(Op.ABS, x)], ["y"])
    text = print_graph(g)
    assert "status asserted" in text
    back = parse_graph(text)
    assert [e.status for e in back.ledger.entries] == [Status.CHECKED_AT_BINDING, Status.ASSERTED]
    assert back.ledger.prove(a, Rel.EQ, b) is Decision.YES
    assert print_graph(back) == text


@pytest.mark.parametrize("status", list(Status))
def test_every_status_parses(status):
    g = Graph()
    g.scope.declare(SymbolInfo("a", "input 'x'", ExtentKind.EXACT))
    x = g.add_input("x", TensorType(DType.FP32, (a,)))
    g.ledger.require(Kind.GE, a, 2, WHY, g.scope)
    g.ledger.mark(g.ledger.entries[0], status)
    g.set_outputs([Builder(g).emit(Op.ABS, x)], ["y"])
    assert parse_graph(print_graph(g)).ledger.entries[0].status is status


def test_divisibility_of_an_alias_carries_to_its_representative():
    scope, ledger = _scope("a", "b"), Ledger()
    ledger.require(Kind.DIVISIBLE, b, 4, WHY, scope)
    ledger.require(Kind.EQ, a, b, WHY, scope)
    assert ledger.require(Kind.EQ, a, 4 * floordiv(a, 4), WHY, scope) is Decision.YES
    assert ledger.representative("b") == "a" and ledger.representative("a") is None
