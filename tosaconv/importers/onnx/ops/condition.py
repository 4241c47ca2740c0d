"""The value of a small int/bool tensor as dim expressions: deciding conditions from shapes.

Exporters' shape code branches on comparisons such as ``Shape(x)[1] > 4``.
Those arrive as ordinary IR ops (GREATER of a DIMS_TO_TENSOR and a CONST), so
:func:`element_dims` walks back through such ops and computes each element as
a dim expression; booleans become expressions in {0, 1} (``a > b`` is
``min(max(a - b, 0), 1)``, ``not c`` is ``1 - c``), which the closed dim
algebra can hold, normalize and decide. :func:`decide` then asks the scope:
a condition proven true or false picks its branch at import, and an undecided
one still folds to 0 or 1 as soon as the symbols are bound. Anything computed
from tensor data gives None.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Sequence, Union

import numpy as np

from ....ir.dtypes import DType
from ....ir.ops import Op
from ....symbolic.expr import add, dmax, dmin, mul, sub
from ....symbolic.scope import Decision, Rel
from ..context import ShapeTensor

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.graph import Operation
    from ....symbolic.expr import Dim
    from ..context import ImportContext

MAX_ELEMENTS = 16
MAX_DEPTH = 64


def gt(a: Dim, b: Dim) -> Dim:
    return dmin(dmax(sub(a, b), 0), 1)


def eq(a: Dim, b: Dim) -> Dim:
    return sub(1, dmin(dmax(sub(a, b), sub(b, a)), 1))


def truthy(a: Dim) -> Dim:
    return sub(1, eq(a, 0))


_BINARY = {
    Op.GREATER: gt,
    Op.GREATER_EQUAL: lambda a, b: gt(add(a, 1), b),
    Op.EQUAL: eq,
    Op.LOGICAL_AND: dmin,
    Op.LOGICAL_OR: dmax,
    Op.LOGICAL_XOR: lambda a, b: dmax(sub(a, b), sub(b, a)),
    Op.ADD: add,
    Op.SUB: sub,
    Op.MAXIMUM: dmax,
    Op.MINIMUM: dmin,
}
_PASS_THROUGH = (Op.RESHAPE, Op.EXPAND_DIMS, Op.COLLAPSE_DIMS, Op.IDENTITY)


def element_dims(ctx: ImportContext, name: str) -> Optional[list]:
    """The elements of ONNX value ``name`` as dims (ints or expressions), or None if data-dependent."""
    held = ctx.values.get(name)
    if isinstance(held, ShapeTensor):
        return held.values()
    if held is None:
        c = ctx.const(name)
        return None if c is None else _array_dims(c)
    return value_dims(held)


def value_dims(v: Value, depth: int = 0) -> Optional[list]:
    p = v.producer
    if p is None or depth > MAX_DEPTH or not hasattr(v.type, "shape"):
        return None
    if p.op is Op.CONST:
        return _array_dims(p.attrs.values)
    if p.op is Op.DIMS_TO_TENSOR:
        return [o.type.value for o in p.operands]
    if p.op in _PASS_THROUGH or (p.op is Op.CAST and p.attrs.dtype is not DType.BOOL):
        return _integral(p.operands[0], value_dims(p.operands[0], depth + 1))
    args = [value_dims(o, depth + 1) for o in p.operands]
    if any(a is None for a in args):
        return None
    return _combine(p, args)


def _combine(p: Operation, args: Sequence[list]) -> Optional[list]:
    if p.op is Op.CAST:
        return [truthy(a) for a in args[0]]
    if p.op is Op.LOGICAL_NOT:
        return [sub(1, a) for a in args[0]]
    if p.op is Op.MUL:
        return _broadcast(mul, args) if p.attrs.shift == 0 else None
    if p.op is Op.SELECT:
        c, x, y = (_stretch(a, max(map(len, args))) for a in args)
        return None if c is None or x is None or y is None else \
            [add(mul(ci, xi), mul(sub(1, ci), yi)) for ci, xi, yi in zip(c, x, y)]
    fn = _BINARY.get(p.op)
    return None if fn is None else _broadcast(fn, args)


def _broadcast(fn: Callable[[Dim, Dim], Dim], args: Sequence[list]) -> Optional[list]:
    n = max(len(a) for a in args)
    a, b = (_stretch(x, n) for x in args)
    return None if a is None or b is None else [fn(x, y) for x, y in zip(a, b)]


def _stretch(a: list, n: int) -> Optional[list]:
    return a * n if len(a) == 1 else (a if len(a) == n else None)


def _integral(v: Value, dims: Optional[list]) -> Optional[list]:
    """Pass-through ops keep values; a float tensor's values are not dims."""
    return dims if dims is not None and not v.type.dtype.is_float else None


def _array_dims(arr: np.ndarray) -> Optional[list]:
    arr = np.asarray(arr)
    if arr.size > MAX_ELEMENTS or arr.dtype.kind not in "biu":
        return None
    return [int(x) for x in arr.reshape(-1)]


def decide(ctx: ImportContext, name: str) -> Optional[Union[bool, Dim]]:
    """An If condition: True or False when proven at import, a {0, 1} expression when only the
    bindings decide it, or None when it depends on tensor data."""
    dims = element_dims(ctx, name)
    if dims is None or len(dims) != 1:
        return None
    c = truthy(dims[0])
    if isinstance(c, int):
        return bool(c)
    decision = ctx.graph.scope.prove(c, Rel.EQ, 1)
    return {Decision.YES: True, Decision.NO: False}.get(decision, c)
