"""The constraint ledger: every fact about symbols that the program relies on.

When the importer or a pass needs a fact it cannot prove yet (MatMul inner
dims equal, two dims broadcastable, a reshape split divisible), it records a
:class:`Constraint` with its provenance instead of guessing. Facts that are
provably true need no entry; facts that are provably false are errors right
away. At specialization every entry is checked against the bindings, and a
violation names the constraint, the values and where it came from. This is
the constraint/witness form of MLIR's shape dialect (seed 004).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .expr import Dim, dim_str, free_symbols, mod, same, subs
from .scope import Decision, Rel, Scope


class Kind(enum.Enum):
    EQ = "eq"                        # a == b
    BROADCASTABLE = "broadcastable"  # a == b or a == 1 or b == 1
    DIVISIBLE = "divisible"          # a % b == 0
    GE = "ge"                        # a >= b


@dataclass(frozen=True)
class Provenance:
    """Where a constraint came from: the source op type, its name, and why."""

    op_type: str
    node: str
    reason: str

    def where(self) -> str:
        return f"{self.op_type} '{self.node}'"


@dataclass(frozen=True)
class Constraint:
    kind: Kind
    lhs: Dim
    rhs: Dim
    provenance: Provenance

    def text(self) -> str:
        a, b = dim_str(self.lhs), dim_str(self.rhs)
        return {
            Kind.EQ: f"{a} == {b}",
            Kind.BROADCASTABLE: f"broadcastable({a}, {b})",
            Kind.DIVISIBLE: f"{a} % {b} == 0",
            Kind.GE: f"{a} >= {b}",
        }[self.kind]

    def symbols(self) -> frozenset:
        return free_symbols(self.lhs) | free_symbols(self.rhs)

    def holds(self, a: int, b: int) -> bool:
        return {
            Kind.EQ: a == b,
            Kind.BROADCASTABLE: a == b or a == 1 or b == 1,
            Kind.DIVISIBLE: b != 0 and a % b == 0,
            Kind.GE: a >= b,
        }[self.kind]


@dataclass(frozen=True)
class Violation:
    constraint: Constraint
    lhs_value: Dim
    rhs_value: Dim
    bindings: dict

    def message(self) -> str:
        c = self.constraint
        used = ", ".join(f"{k}={v}" for k, v in sorted(self.bindings.items()) if k in c.symbols())
        return (f"constraint {c.text()} does not hold: {dim_str(c.lhs)} = {self.lhs_value}, "
                f"{dim_str(c.rhs)} = {self.rhs_value} (with {used or 'no symbols'})")


class ConstraintFailed(Exception):
    """A fact that is provably false for every binding (for example 2 vs 4 in a broadcast)."""

    def __init__(self, constraint: Constraint):
        self.constraint = constraint
        super().__init__(f"{constraint.text()} can never hold ({constraint.provenance.reason})")


@dataclass
class Ledger:
    """An ordered, de-duplicated list of constraints."""

    entries: list = field(default_factory=list)

    def _decide(self, kind: Kind, a: Dim, b: Dim, scope: Scope) -> Decision:
        if kind is Kind.EQ:
            return scope.prove(a, Rel.EQ, b)
        if kind is Kind.GE:
            return scope.prove(a, Rel.GE, b)
        if kind is Kind.DIVISIBLE:
            if isinstance(b, int) and b != 0:
                return scope.prove(mod(a, b), Rel.EQ, 0)
            return Decision.UNKNOWN
        if same(a, b) or same(a, 1) or same(b, 1):
            return Decision.YES
        if isinstance(a, int) and isinstance(b, int):
            return Decision.NO
        return Decision.UNKNOWN

    def require(self, kind: Kind, a: Dim, b: Dim, provenance: Provenance, scope: Scope) -> Decision:
        """Record ``kind(a, b)`` unless it is proven; raise if it is disproven."""
        c = Constraint(kind, a, b, provenance)
        decision = self._decide(kind, a, b, scope)
        if decision is Decision.NO:
            raise ConstraintFailed(c)
        if decision is Decision.UNKNOWN and not any(self._implies(e, c) for e in self.entries):
            self.entries.append(c)
        return decision

    @staticmethod
    def _implies(known: Constraint, new: Constraint) -> bool:
        """Whether recorded ``known`` already implies ``new`` (same pair; eq implies broadcastable)."""
        symmetric = (Kind.EQ, Kind.BROADCASTABLE)
        pairs = [(known.lhs, known.rhs)]
        if known.kind in symmetric:
            pairs.append((known.rhs, known.lhs))
        if not any(same(a, new.lhs) and same(b, new.rhs) for a, b in pairs):
            return False
        return known.kind is new.kind or (known.kind is Kind.EQ and new.kind is Kind.BROADCASTABLE)

    def check(self, bindings: dict) -> list:
        """All violations under ``bindings`` (constraints whose symbols are all bound)."""
        out = []
        for c in self.entries:
            if not c.symbols() <= set(bindings):
                continue
            a, b = subs(c.lhs, bindings), subs(c.rhs, bindings)
            if not c.holds(a, b):
                out.append(Violation(c, a, b, dict(bindings)))
        return out
