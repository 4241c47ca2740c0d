"""The constraint ledger: every fact about symbols that the program relies on.

When the importer or a pass needs a fact it cannot prove yet (MatMul inner
dims equal, two dims broadcastable, a reshape split divisible), it records a
:class:`Constraint` with its provenance instead of guessing. Facts that are
provably true need no entry; facts that are provably false are errors right
away. At specialization every entry is checked against the bindings, and a
violation names the constraint, the values and where it came from. This is
the constraint/witness form of MLIR's shape dialect (seed 004).

The ledger is a constraint system, not a flat list: a recorded fact informs
later decisions (the shape dialect's ``meet``). ``a == b`` between two symbols
makes one the other's alias (:meth:`Ledger.refine` gives the dims the program's
types then use, one symbol for both), and ``n % k == 0`` lets proofs write
``n`` as ``k*q``, so the reshape that infers ``n // k`` needs no second entry
``n == k*floordiv(n, k)``. Each entry has a :class:`Status`: proven by later
facts, checked when its symbols are bound, or asserted in a symbolic file.
"""
from __future__ import annotations

import enum
from dataclasses import field

from ..records import dataclass   # dataclasses' classes, built faster (issue 13)

import math
from typing import Optional

from .expr import Dim, Expr, dim_str, free_symbols, mod, same, subs, sym
from .scope import Decision, Rel, Scope, prove


class Kind(enum.Enum):
    __hash__ = object.__hash__   # a member is its own identity; Enum's hash is a Python call
    EQ = "eq"                        # a == b
    BROADCASTABLE = "broadcastable"  # a == b or a == 1 or b == 1
    DIVISIBLE = "divisible"          # a % b == 0
    GE = "ge"                        # a >= b


class Status(enum.Enum):
    """How an entry is discharged (what ``tosaconv inspect`` shows)."""
    __hash__ = object.__hash__   # a member is its own identity; Enum's hash is a Python call

    PROVEN = "proven"                           # later facts prove it: it holds for every binding
    CHECKED_AT_BINDING = "checked_at_binding"   # checked when its symbols are bound (or at run time)
    ASSERTED = "asserted"                       # a symbolic file checks it itself (ASSERT_EQUAL_SHAPE)


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
    """A fact about symbols, ``lhs`` ``kind`` ``rhs``, with where it came from and whether it is checked yet."""

    kind: Kind
    lhs: Dim
    rhs: Dim
    provenance: Provenance
    status: Status = Status.CHECKED_AT_BINDING

    def text(self) -> str:
        a, b = dim_str(self.lhs), dim_str(self.rhs)
        return {
            Kind.EQ: f"{a} == {b}",
            Kind.BROADCASTABLE: f"broadcastable({a}, {b})",
            Kind.DIVISIBLE: f"{a} % {b} == 0",
            Kind.GE: f"{a} >= {b}",
        }[self.kind]

    def symbols(self) -> frozenset[str]:
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
    """A constraint that does not hold at ``bindings``: its sides' values there."""

    constraint: Constraint
    lhs_value: Dim
    rhs_value: Dim
    bindings: dict[str, int]

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
    """An ordered, de-duplicated constraint system.

    ``aliases`` maps a symbol to the symbol a recorded ``a == b`` made it equal to (its representative);
    ``multiples`` maps a symbol to a number it is recorded to be divisible by. Both inform
    :meth:`prove`, so a fact recorded once makes later ones provable instead of recorded again.
    """

    entries: list[Constraint] = field(default_factory=list)
    aliases: dict[str, Dim] = field(default_factory=dict)
    multiples: dict[str, int] = field(default_factory=dict)

    def refine(self, d: Dim) -> Dim:
        """``d`` with every aliased symbol replaced by its representative (the form types use)."""
        return subs(d, self.aliases) if self.aliases and isinstance(d, Expr) else d

    def _proof_form(self, d: Dim) -> Dim:
        """``d`` refined, with each symbol known divisible by k written as k times a quotient symbol."""
        d = self.refine(d)
        if not self.multiples or not isinstance(d, Expr):
            return d
        return subs(d, {n: k * sym(f"{n}/{k}") for n, k in self.multiples.items()})

    def prove(self, a: Dim, rel: Rel, b: Dim) -> Decision:
        """``prove(a rel b)`` given the recorded facts (every binding that satisfies them)."""
        return prove(self._proof_form(a), rel, self._proof_form(b))

    def decide(self, kind: Kind, a: Dim, b: Dim) -> Decision:
        """Whether ``kind(a, b)`` holds under the recorded facts: YES, NO or UNKNOWN."""
        if kind is Kind.EQ:
            return self.prove(a, Rel.EQ, b)
        if kind is Kind.GE:
            return self.prove(a, Rel.GE, b)
        a, b = self._proof_form(a), self._proof_form(b)
        if kind is Kind.DIVISIBLE:
            return _decide_divisible(a, b)
        if same(a, b) or same(a, 1) or same(b, 1):
            return Decision.YES
        if isinstance(a, int) and isinstance(b, int):
            return Decision.NO
        return Decision.UNKNOWN

    def require(self, kind: Kind, a: Dim, b: Dim, provenance: Provenance, scope: Scope) -> Decision:
        """Record ``kind(a, b)`` unless it is proven; raise if it is disproven."""
        c = Constraint(kind, a, b, provenance)
        decision = self.decide(kind, a, b)
        if decision is Decision.NO:
            raise ConstraintFailed(c)
        if decision is Decision.UNKNOWN and not any(self._implies(e, c) for e in self.entries):
            self.entries.append(c)
            if self._learn(c, scope):
                self._mark_proven(scope)
        return decision

    def restore(self, c: Constraint, scope: Scope) -> None:
        """Append an entry read back from a file, learning from it as :meth:`require` does."""
        self.entries.append(c)
        self._learn(c, scope)

    def mark(self, c: Constraint, status: Status) -> Constraint:
        """Give entry ``c`` a new status (e.g. ASSERTED when a symbolic file checks it); the new entry."""
        new = Constraint(c.kind, c.lhs, c.rhs, c.provenance, status)
        self.entries[self.entries.index(c)] = new
        return new

    def _learn(self, c: Constraint, scope: Scope) -> bool:
        """Turn ``c`` into an alias or a divisibility fact when it has that form; True when it did."""
        a, b = self.refine(c.lhs), self.refine(c.rhs)
        if c.kind is Kind.EQ:
            return self._learn_alias(_bare(a), _bare(b), scope)
        name = _bare(a)
        if c.kind is Kind.DIVISIBLE and name is not None and isinstance(b, int) and b > 1:
            self.multiples[name] = math.lcm(self.multiples.get(name, 1), b)
            return True
        return False

    def _learn_alias(self, x: Optional[str], y: Optional[str], scope: Scope) -> bool:
        """Make the later-declared of two input-made symbols an alias of the other (never a data-dependent
        one: its value is only known when the model runs, after the types that would use it)."""
        if x is None or y is None or x == y or not (_aliasable(scope, x) and _aliasable(scope, y)):
            return False
        order = list(scope.symbols)
        keep, drop = sorted((x, y), key=order.index)
        self.aliases = {k: subs(v, {drop: sym(keep)}) for k, v in self.aliases.items()}
        self.aliases[drop] = sym(keep)
        if drop in self.multiples:   # what was known of the alias is now known of its representative
            self.multiples[keep] = math.lcm(self.multiples.get(keep, 1), self.multiples.pop(drop))
        return True

    def _mark_proven(self, scope: Scope) -> None:
        """Entries that the facts learned since make provable become PROVEN (kept, with provenance).

        An entry that is itself a fact (an alias or a divisibility) stays: it is what the proofs use."""
        for i, e in enumerate(self.entries):
            if e.status is Status.CHECKED_AT_BINDING and not self._is_fact(e, scope) \
                    and self.decide(e.kind, e.lhs, e.rhs) is Decision.YES:
                self.entries[i] = Constraint(e.kind, e.lhs, e.rhs, e.provenance, Status.PROVEN)

    @staticmethod
    def _is_fact(e: Constraint, scope: Scope) -> bool:
        a, b = _bare(e.lhs), _bare(e.rhs)
        if e.kind is Kind.EQ:
            return a is not None and b is not None and _aliasable(scope, a) and _aliasable(scope, b)
        return e.kind is Kind.DIVISIBLE and a is not None and isinstance(e.rhs, int)

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

    def check(self, bindings: dict[str, int]) -> list[Violation]:
        """All violations under ``bindings`` (constraints whose symbols are all bound)."""
        out = []
        for c in self.entries:
            if not c.symbols() <= set(bindings):
                continue
            a, b = subs(c.lhs, bindings), subs(c.rhs, bindings)
            if isinstance(a, int) and isinstance(b, int) and not c.holds(a, b):
                out.append(Violation(c, a, b, dict(bindings)))
        return out

    def with_representatives(self, bindings: dict[str, int]) -> dict[str, int]:
        """``bindings`` plus each unbound representative whose alias is bound (``--bind j=3`` binds the
        ``k`` that types use after ``k == j`` was recorded)."""
        out = dict(bindings)
        for drop in self.aliases:
            name = self.representative(drop)
            if drop in out and name is not None and name not in out:
                out[name] = out[drop]
        return out

    def representative(self, name: str) -> Optional[str]:
        """The symbol the types use for alias ``name``, or None when ``name`` is no alias."""
        return _bare(self.aliases[name]) if name in self.aliases else None


def _bare(d: Dim) -> Optional[str]:
    """The symbol's name when ``d`` is one bare symbol, else None."""
    names = free_symbols(d)
    if len(names) == 1:
        (name,) = names
        if same(d, sym(name)):
            return name
    return None


def _aliasable(scope: Scope, name: str) -> bool:
    info = scope.symbols.get(name)
    return info is not None and not info.data_dependent


def _decide_divisible(a: Dim, b: Dim) -> Decision:
    if isinstance(a, int) and isinstance(b, int):
        return Decision.YES if b != 0 and a % b == 0 else Decision.NO
    if same(b, 0):
        return Decision.NO
    return Decision.YES if same(mod(a, b), 0) else Decision.UNKNOWN
