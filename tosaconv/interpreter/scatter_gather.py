"""Kernels of the TOSA chapter "Scatter/Gather Operators": GATHER and SCATTER.

GATHER reads ``values[N,K,C]`` at ``indices[N,W]`` to give ``[N,W,C]``.
SCATTER copies ``values_in[N,K,C]`` and overwrites row ``indices[n,w]`` with
``input[n,w,:]``. The spec REQUIREs every index to be in ``[0, K)`` and, for
SCATTER, no output row to be written twice; both are checked here, since a
violation has no defined result.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .numeric import as_int64

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext, KernelValue


def _checked_indices(indices: KernelValue, values: np.ndarray) -> np.ndarray:
    indices = as_int64(indices)
    k = values.shape[1]
    if indices.size and (indices.min() < 0 or indices.max() >= k):
        raise ValueError(f"indices must be in [0, {k}), got values from {indices.min()} to {indices.max()}")
    return indices


def gather(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    values, indices = args
    indices = _checked_indices(indices, values)
    return [np.take_along_axis(values, indices[:, :, None], axis=1)]


def scatter(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    values_in, indices, update = args
    indices = _checked_indices(indices, values_in)
    ordered = np.sort(indices, axis=1)
    if np.any(ordered[:, 1:] == ordered[:, :-1]):
        raise ValueError("SCATTER indices repeat within a batch; each output row may be written once")
    out = values_in.copy()
    out[np.arange(indices.shape[0])[:, None], indices] = update
    return [out]
