"""IOTA of an open count in a symbolic ``.tosa``: :class:`IotaWriter`.

TOSA has no iota operator, and EXT-SHAPE cannot turn a shape value into
tensor data except as the size of a tensor. So ``[0, 1, ..., n-1]`` is built
from a tensor whose *size* is ``n``, exactly and with no upper bound on ``n``:

- ``x = TILE([1], [n])``: ``n`` ones (INT32);
- an inclusive prefix sum by doubling (Hillis–Steele): for ``k = 0..30``,
  ``x += SLICE(CONCAT(zeros[min(2^k, n)], x), [0], [n])``, i.e. ``x`` plus
  itself shifted right by ``2^k`` with zeros shifted in (when ``2^k >= n`` the
  zeros cover the whole tensor and the term is all zeros); after step ``k``
  each ``x[i] = min(i + 1, 2^(k+1))``, so 31 steps count exactly to ``2^31``.
  The zeros are a TILE of ``[0]``, not a PAD: the official ``infer_shapes``
  (tosa-tools 2026.8) resolved a PAD of ``[256, 0]`` and of ``[512, 0]`` as if
  the amount were 0 (8-bit amounts?), and the reference model then failed;
- ``iota = x - 1``, CAST when the IOTA's dtype is not INT32.

All IOTAs of a file share one such prefix sum, over the largest of their
counts, each a SLICE of it (:class:`IotaWriter`).

Why 31 unconditional steps: the file cannot branch on ``n`` (COND_IF would
need the count as tensor data), and no bound on ``n`` is known in general.
31 covers every count an INT32 iota can hold (and TOSA's largest level,
MAX_LOG2_SIZE 31). Steps past ``ceil(log2 n)`` add zeros, costing only
``O(n)`` each, so the run is about ``31 n`` element operations — for the
sequence lengths and feature-map widths the models use, microseconds — and
the file grows by about 220 records, once. A count whose upper bound is known
from its expression (``min(n, 512)``) takes only ``ceil(log2 bound)`` steps.
Not done: rewriting a Range that only feeds a Gather of a table (position
ids) as a SLICE of the table — it would save those records in BERT-like
models only, and the table's size bound is not a fact the ledger carries.
"""
from __future__ import annotations

from functools import reduce
from typing import TYPE_CHECKING

import numpy as np

from ..ir.dtypes import DType
from ..ir.types import TensorType
from ..symbolic.expr import Expr, bounds, dmax, dmin, same
from . import params as P
from .tensor_data import to_le_bytes
from .writer import location_text

if TYPE_CHECKING:
    from ..ir.graph import Graph, Operation
    from ..ir.location import Location
    from ..symbolic.expr import Dim
    from .shape_ops import ShapeOps
    from .symbolic import _SymbolicLowering

MAX_STEPS = 31   # 2^31 elements: the largest INT32 iota (and TOSA's MAX_LOG2_SIZE)


def doubling_steps(n: Dim) -> int:
    """How many doubling steps count to ``n`` for every value it can take."""
    hi = bounds(n)[1]
    if not np.isfinite(hi) or hi > 2 ** MAX_STEPS:
        return MAX_STEPS
    return max(1, int(np.ceil(np.log2(max(hi, 1)))))


class IotaWriter:
    """Writes the IOTAs of one block. Every open count ``n_i`` whose symbols are graph-input dims is served
    by one prefix sum over ``L = max(n_1, ..., n_k)`` (computed once, where the first IOTA stands), each
    IOTA then a SLICE of it to ``[0, n_i)``: exact, since ``n_i <= L``, and one construction per file
    instead of one per Range (nudenet 320n has six)."""

    def __init__(self, graph: Graph, shape_ops: ShapeOps) -> None:
        counts = [op.operands[0].type.value for op in graph.ops if op.op.name == "IOTA"]
        open_counts = [n for n in counts if isinstance(n, Expr) and not shape_ops.missing([n])]
        self.largest = reduce(dmax, open_counts) if open_counts else None
        self.counted = None   # the int32 tensor [0, 1, ..., L-1], once written

    def write(self, w: _SymbolicLowering, op: Operation) -> None:
        """Append the records of ``op`` (IOTA of the Index value ``n``) to the lowering ``w``."""
        n = op.operands[0].type.value
        out, dtype, location = w.names[op.result], op.attrs.dtype, op.location
        text = w.shape_ops.location = location_text(location)
        if not isinstance(n, Expr):
            values = to_le_bytes(np.arange(int(n), dtype=dtype.numpy), dtype)
            w._add_tensor(out, TensorType(dtype, (int(n),)), values)
            w._add_op("CONST", {}, [], [out], text)
            return
        size = w.vector([n])   # raises, naming the symbol, when no graph input carries it
        if self.counted is None:
            self.counted = _count_up(w, self.largest, out, location)
        w.shape_ops.location = text
        inputs = [self.counted]
        if not same(n, self.largest):   # the first n of the shared count
            inputs += [w.vector([0]), size]
            if dtype is not DType.INT32:
                inputs = [_tensor(w, f"{out}/first", "SLICE", inputs, text)]
        last = "CAST" if dtype is not DType.INT32 else ("SLICE" if len(inputs) == 3 else "IDENTITY")
        w._add_tensor(out, TensorType(dtype, (n,)))
        w._add_op(last, {}, inputs, [out], text)
        w.defined.update(op.results)


def _count_up(w: _SymbolicLowering, n: Dim, owner: str, location: Location) -> str:
    """The int32 tensor ``[0, 1, ..., n-1]``: a prefix sum of ``n`` ones, minus one."""
    text = location_text(location)
    ones = w._param(owner, P.Param("one", DType.INT32, np.ones(1, dtype=np.int32)), location)
    zero = w._param(owner, P.Param("zero", DType.INT32, np.zeros(1, dtype=np.int32)), location)
    size, start = w.vector([n]), w.vector([0])
    x = _tensor(w, f"{owner}/ones", "TILE", [ones, size], text)
    for k in range(doubling_steps(n)):
        zeros = _tensor(w, f"{owner}/zeros{k}", "TILE", [zero, w.vector([dmin(2 ** k, n)])], text)
        joined = _tensor(w, f"{owner}/join{k}", "CONCAT", [zeros, x], text, {"axis": 0})
        shifted = _tensor(w, f"{owner}/shift{k}", "SLICE", [joined, start, size], text)
        x = _tensor(w, f"{owner}/sum{k}", "ADD", [x, shifted], text)
    return _tensor(w, f"{owner}/counted", "SUB", [x, ones], text)


def _tensor(w: _SymbolicLowering, base: str, tosa: str, inputs: list, text: str, fields: dict | None = None) -> str:
    """A fresh ``int32[-1]`` tensor computed by ``tosa`` from ``inputs``."""
    name = w.names.fresh(base)
    w._add_tensor(name, TensorType(DType.INT32, (-1,)))
    w._add_op(tosa, fields or {}, inputs, [name], text)
    return name

