"""The TABLE kernel (TOSA chapter "Elementwise Binary Operators").

int8 input indexes a 256-entry int8 table at ``value + 128``. int16 input
uses the spec's ``apply_lookup_s``: a 513-entry int16 table, the top 9 bits
of ``value + 32768`` pick an entry and the low 7 bits interpolate linearly to
the next, giving an int32 result with 16 + 7 significant bits.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir.dtypes import DType
from .fixed_point import apply_lookup_s
from .numeric import as_int64, in_dtype, out_dtype, wrap

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext


def table(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, in_t = args[0], in_dtype(op)
    entries = np.asarray(op.attrs.table)
    if in_t == DType.INT8:
        _check_length(entries, 256, "int8")
        return [wrap(as_int64(entries)[as_int64(x) + 128], out_dtype(op))]
    if in_t == DType.INT16:
        _check_length(entries, 513, "int16")
        return [wrap(apply_lookup_s(entries, x), out_dtype(op))]
    raise ValueError(f"TABLE takes int8 or int16 input, got {in_t.value}")


def _check_length(entries: np.ndarray, length: int, kind: str) -> None:
    if entries.shape != (length,):
        raise ValueError(f"TABLE on {kind} input needs a table of {length} entries, "
                         f"got shape {list(entries.shape)}")
