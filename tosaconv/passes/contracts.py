"""Extent contracts (seed 003): what guarantee a decay rule or a pass needs from the dims it reads.

Every dim of a value is Exact, UpperBound or Unknown (see
:mod:`tosaconv.symbolic.scope`). A rule that turns dims into a reshape shape,
a broadcast target, slice sizes or tensor data needs Exact ones: an upper
bound must never be used as a true size. Each decay rule and each pass
declares what it needs (``needs=`` on :func:`~.decay.decays` and on
:class:`~.manager.Pass`), and :func:`require_extents` checks an op's operand
and result dims before the rule or pass reads them. A violation is a shape
error (exit 4) that names the op, the dim, its guarantee and the symbol behind it.
"""
from __future__ import annotations

from ..diagnostics import ShapeError
from ..ir.graph import Operation, Value, describe_value
from ..ir.types import IndexType, TensorType
from ..symbolic.expr import Dim, dim_str, free_symbols
from ..symbolic.scope import ExtentKind, Scope, satisfies


def _dims(value: Value) -> list[Dim]:
    t = value.type
    if isinstance(t, TensorType):
        return list(t.shape)
    if isinstance(t, IndexType):
        return [t.value]
    return []


def extent_problems(op: Operation, need: ExtentKind, scope: Scope) -> list[str]:
    """Text for every dim of ``op``'s operands and results whose guarantee is weaker than ``need``."""
    if need is ExtentKind.UNKNOWN:
        return []
    out: list[str] = []
    kinds: dict[object, ExtentKind] = {}   # the extent of each symbolic dim met (an op repeats the same few)
    for value in list(op.operands) + list(op.results):
        for d in _dims(value):
            if type(d) is int:
                continue        # a constant is Exact, which satisfies every need
            have = kinds.get(d)
            if have is None:
                have = kinds[d] = scope.extent_kind(d)
            if not satisfies(have, need):
                out.append(_describe(value, d, have, scope))
    return out


def _describe(value: Value, d: Dim, have: ExtentKind, scope: Scope) -> str:
    weak = [s for s in sorted(free_symbols(d)) if s in scope.symbols and scope.symbols[s].kind is have]
    origins = "; ".join(f"'{s}' is {have.value} ({scope.symbols[s].origin})" for s in weak)
    return f"{describe_value(value)} has dim {dim_str(d)} whose extent is only {have.value}: {origins}"


def require_extents(op: Operation, need: ExtentKind, scope: Scope, who: str) -> None:
    """Raise a ShapeError (E-EXTENT) when ``op`` has a dim weaker than ``need``; ``who`` names the rule or pass."""
    problems = extent_problems(op, need, scope)
    if problems:
        raise ShapeError.one(
            "E-EXTENT", f"{who} needs {need.value} extents at {op.op.name} ({op.location}), but "
            + "; ".join(problems), op.location,
            hint="an upper bound is never used as a true size (seed 003): bind the symbol, or give the "
                 "op an exact size")
