"""Small tensors computed from constants alone, evaluated while importing.

Exporters compute shape operands with ordinary tensor ops on constants:
torch.onnx writes ``x.expand(-1, 2, -1)`` as ``Where(Equal(c, -1 * ones),
ones, c)`` with ``c = [-1, 2, -1]``, all of it constant. Read as data, such a
shape becomes an EXTRACT_DIM symbol per element, and the result's type loses
dims that are known. :func:`const_eval` evaluates the producers of a small
static tensor with the interpreter's own kernels (the ones constant folding
uses, so the value is what a run computes), when every leaf is a CONST and
every op on the way is pure; else it returns None.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..interpreter.registry import KernelContext, kernel_for
from ..ir.graph import Value
from ..ir.ops import Op, Trait
from ..ir.types import TensorType, ValueType

MAX_ELEMENTS = 64    # larger intermediate tensors are data, not shape arithmetic
MAX_DEPTH = 24


def const_eval(v: Value) -> Optional[np.ndarray]:
    """The value of the small static tensor ``v`` when it is computed from constants alone, else None."""
    return _eval(v, 0, {})


def _eval(v: Value, depth: int, memo: dict) -> Optional[np.ndarray]:
    if id(v) in memo:
        return memo[id(v)]
    p = v.producer
    if p is None or not _small(v.type) or depth > MAX_DEPTH:
        return None
    if p.op is Op.CONST:
        return np.asarray(p.attrs.values)
    if not p.op.has(Trait.PURE) or p.op.has(Trait.REGION) or not all(_small(r.type) for r in p.results):
        return None
    args = []
    for operand in p.operands:
        arg = _eval(operand, depth + 1, memo)
        if arg is None:
            return None
        args.append(arg)
    with np.errstate(all="ignore"):
        out = kernel_for(p.op)(p, args, KernelContext())
    value = np.asarray(out[p.results.index(v)], dtype=v.type.dtype.numpy).reshape(v.type.static_shape())
    memo[id(v)] = value
    return value


def _small(t: ValueType) -> bool:
    return isinstance(t, TensorType) and t.is_static and math.prod(t.static_shape()) <= MAX_ELEMENTS
