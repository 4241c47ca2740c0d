"""The ERROR_IF rule registry and the helpers the rule modules share.

:mod:`.error_if` (elementwise, data layout, scatter/gather, control flow) and
:mod:`.error_if_windows` (MATMUL, the convolutions, pooling, RESIZE) register
their checkers here with :func:`rule`; :func:`tosaconv.ir.error_if.error_if`
looks them up. Keeping the registry and helpers in this module lets both rule
modules import it, and :mod:`.error_if` import the windowed rules at its top,
with no import cycle. Every helper answers and none raises (see :mod:`.error_if`).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable, Optional, TypeVar, Union

from ..symbolic.expr import Dim
from .dtypes import DType
from .ops import OPS, Operand, OperandKind
from .types import TensorType, ValueType

Reason = Optional[str]
_AttrsT = TypeVar("_AttrsT")
Checker = Callable[[list[ValueType], _AttrsT], Reason]
# Each checker takes the attribute class the op table gives its ops, which error_if() checks before calling
# it; the registry holds checkers of every class, so it cannot name one.
RULES: dict[str, Checker[Any]] = {}


def rule(*names: str) -> Callable[[Checker[_AttrsT]], Checker[_AttrsT]]:
    """Register a checker ``fn(types, attrs) -> Reason`` for the ops ``names``."""
    def register(fn: Checker[_AttrsT]) -> Checker[_AttrsT]:
        for name in names:
            if name in RULES:
                raise ValueError(f"ERROR_IF rule for {name} registered twice")
            RULES[name] = fn
        return fn
    return register


_NO_OPERAND = Operand("?", OperandKind.TENSOR)   # an operand an op without operands does not declare


def operand_kinds(op_name: str, types: Sequence[ValueType]) -> Reason:
    """Each operand is of the kind (tensor, Index or either) the op table declares for its position."""
    op = OPS.get(op_name)
    if op is None:
        return f"{op_name} is not an op of the table"
    for i, t in enumerate(types):
        declared = op.operand_at(i) or _NO_OPERAND
        if declared.accepts(t):
            continue
        kind = "an Index value" if declared.kind is OperandKind.INDEX else "a tensor"
        return f"operand {i} ({declared.name}) must be {kind}, got {t}"
    return None


# -- helpers: every one answers, none raises -------------------------------------------------------

def _ints(value: object, n: int) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == n and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value)


def _attr_tuples(attrs: object, **lengths: int) -> Reason:
    for name, n in lengths.items():
        value = getattr(attrs, name, None)
        if not _ints(value, n):
            return f"attribute {name} must hold {n} integers, got {value!r}"
    return None


def _tensors(types: Sequence[ValueType], *ranks: Optional[int]) -> Reason:
    """Each of the first ``len(ranks)`` operands is a tensor of that rank (None: any rank)."""
    if len(types) < len(ranks):
        return f"takes {len(ranks)} operands, got {len(types)}"
    for i, (t, rank) in enumerate(zip(types, ranks)):
        if not isinstance(t, TensorType):
            return f"operand {i} must be a tensor, got {t}"
        if rank is not None and t.rank != rank:
            return f"operand {i} must have rank {rank}, got {t}"
    return None


def _checked(types: Sequence[ValueType], *ranks: Optional[int]) -> Union[str, list[TensorType]]:
    """:func:`_tensors`'s reason, or the first ``len(ranks)`` operands, which it found to be tensors."""
    bad = _tensors(types, *ranks)
    if bad:
        return bad
    return [t for t in types[:len(ranks)] if isinstance(t, TensorType)]


def _static(*dims: object) -> bool:
    return all(isinstance(d, int) for d in dims)   # is_static, for values an attribute may hold


def _differ(a: Dim, b: Dim) -> bool:
    """True only when both dims are known and differ (a symbolic pair is decided after binding)."""
    return _static(a, b) and a != b


def _exact(numerator: Dim, divisor: int, what: str) -> Reason:
    """``idiv_check``: the division must be exact (symbolic: decided after binding)."""
    if divisor < 1 or not _static(numerator):
        return None
    if numerator % divisor:
        return f"{what} = {numerator} is not a multiple of the stride {divisor} (idiv_check)"
    return None


def _zero_point(value: int, dtype: DType, name: str) -> Reason:
    if dtype is not DType.INT8 and value != 0:
        return f"{name} is {value}, but a zero point other than 0 needs int8 data ({dtype.name})"
    return None


def _first(*reasons: Reason) -> Reason:
    return next((r for r in reasons if r), None)
