"""Equal and Where on shape tensors, decided at import: :func:`index_equal`, :func:`index_where`.

Exporters spell a size rule with tensor ops on shapes. torch.onnx's BERT
export computes its token-type Expand target as
``Where(Equal(shape, -1 * ones), ones, shape)`` (Expand's "-1 keeps the dim"
rule, written out). When each Equal of two dim expressions is decided for
every binding by the dim algebra (``batch == -1`` never holds: a dim is at
least 1), the Equal is a constant, and a Where with a constant condition picks
elements of shape tensors: the Expand keeps symbolic dims instead of reading
them back from tensor data (an EXTRACT_DIM, which a symbolic ``.tosa`` cannot
compute). A comparison the algebra cannot decide, or one of a value read from
tensor data (which may hold anything, −1 too), stays tensor math.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ..symbolic.expr import free_symbols
from ..symbolic.scope import Decision, Rel, prove
from .context import ShapeTensor

if TYPE_CHECKING:
    from ..ir.graph import Value
    from .context import LoweringContext


def index_equal(ctx: LoweringContext, a: str, b: str) -> Optional[np.ndarray]:
    """``a == b`` per element as a bool array, when both are shape-like (one a ShapeTensor) and every
    element pair is decided for all bindings; else None."""
    sts = _shape_operands(ctx, (a, b))
    if sts is None or any(_read_from_data(ctx, st) for st in sts):
        return None
    n = _length(sts)
    if n is None:
        return None
    out = []
    for i in range(n):
        decision = prove(_pick(sts[0], i).type.value, Rel.EQ, _pick(sts[1], i).type.value)
        if decision is Decision.UNKNOWN:
            return None
        out.append(decision is Decision.YES)
    result = np.array(out, dtype=bool)
    return result.reshape(()) if all(st.scalar for st in sts) else result


def index_where(ctx: LoweringContext, cond: str, a: str, b: str) -> Optional[ShapeTensor]:
    """``Where(cond, a, b)`` of shape tensors with an import-time constant ``cond``: the picked
    elements, as a ShapeTensor; else None."""
    c = ctx.const(cond)
    if c is None or c.ndim > 1:
        return None
    sts = _shape_operands(ctx, (a, b))
    if sts is None:
        return None
    flags = c.reshape(-1).astype(bool)
    n = _length(sts + [ShapeTensor(list(flags))])
    if n is None:
        return None
    picked = [_pick(sts[0], i) if _pick_flag(flags, i) else _pick(sts[1], i) for i in range(n)]
    return ShapeTensor(picked, scalar=c.ndim == 0 and all(st.scalar for st in sts))


def _shape_operands(ctx: LoweringContext, names: Sequence[str]) -> Optional[list]:
    if not any(isinstance(ctx.values.get(n), ShapeTensor) for n in names):
        return None
    sts = [ctx.shape_tensor(n) for n in names]
    return None if any(st is None for st in sts) else sts


def _read_from_data(ctx: LoweringContext, st: ShapeTensor) -> bool:
    """Whether an element depends on a symbol read from tensor data (it may hold any value)."""
    symbols = ctx.graph.scope.symbols
    return any(symbols[s].data_dependent for d in st.values() for s in free_symbols(d) if s in symbols)


def _length(sts: list) -> Optional[int]:
    """The broadcast length of rank ≤ 1 operands (each of length 1 or n), or None."""
    n = max(len(st.dims) for st in sts)
    return n if all(len(st.dims) in (1, n) for st in sts) else None


def _pick(st: ShapeTensor, i: int) -> Value:
    return st.dims[0] if len(st.dims) == 1 else st.dims[i]


def _pick_flag(flags: np.ndarray, i: int) -> bool:
    return bool(flags[0] if flags.size == 1 else flags[i])
