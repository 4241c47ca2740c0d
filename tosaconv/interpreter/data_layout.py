"""Kernels of the TOSA chapter "Data Layout": CONCAT, PAD, RESHAPE, REVERSE, SLICE, TILE, TRANSPOSE, IDENTITY.

These move data without computing. RESHAPE, REVERSE, SLICE, TRANSPOSE and
IDENTITY return numpy views where possible (no kernel writes into an operand,
so sharing memory is safe). A RESHAPE with ``shape_symbols`` operands takes
each ``-1`` of ``new_shape`` from the next Index operand, in order (seed 001);
nothing is inferred. :func:`slice_array` and :func:`tile_array` are shared
with the data-dependent DYN_SLICE and DYN_TILE.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from ..symbolic.expr import Dim
    from .registry import Arrays, Kernel, KernelContext, KernelValue



def concat(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.concatenate(args, axis=op.attrs.axis)]


def pad(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, padding = args[0], op.attrs.padding
    if len(padding) != 2 * x.ndim or min(padding, default=0) < 0:
        raise ValueError(f"PAD needs two non-negative entries per dim of a rank {x.ndim} input, "
                         f"got {list(padding)}")
    pairs = [(padding[2 * i], padding[2 * i + 1]) for i in range(x.ndim)]
    return [pad_constant(x, pairs, x.dtype.type(op.attrs.pad_const))]


def pad_constant(x: np.ndarray, pairs: Sequence[tuple[Dim, Dim]], value: Union[float, np.generic]) -> np.ndarray:
    """``np.pad(x, pairs, constant_values=value)``, the same array (values, dtype, memory order) without
    np.pad's Python overhead, which costs more than the copy on the small tensors of a real model."""
    shape = tuple(int(d) + int(a) + int(b) for d, (a, b) in zip(x.shape, pairs))
    order = "F" if x.flags.f_contiguous and not x.flags.c_contiguous else "C"   # as np.pad picks it
    out = np.empty(shape, dtype=x.dtype, order=order)
    out[...] = np.asarray(value)
    inside = out[tuple(slice(int(a), int(a) + d) for d, (a, _) in zip(x.shape, pairs))]
    if x.ndim >= 2 and x.shape[-1] <= _FEW_CHANNELS and abs(x.strides[-1]) > abs(x.strides[-2]) > 0:
        # a channels-last view of channels-first memory (a model's NCHW input transposed): copied one
        # channel at a time, numpy's inner loop runs along a row instead of over the few channels (3x faster)
        for channel in range(x.shape[-1]):
            inside[..., channel] = x[..., channel]
    else:
        inside[...] = x
    return out


_FEW_CHANNELS = 4


def reshape(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x = args[0]
    shape = resolve_shape(op.attrs.new_shape, list(args[1:]))
    if math.prod(shape) != x.size:
        raise ValueError(f"cannot reshape {list(x.shape)} ({x.size} elements) into {shape}")
    return [x.reshape(shape)]


def resolve_shape(new_shape: Sequence[Dim], symbols: list[KernelValue]) -> list:
    """``new_shape`` with each -1 replaced by the next shape_symbols value, in order."""
    values = iter(symbols)
    shape = [int(next(values, -1)) if d == -1 else int(d) for d in new_shape]
    if new_shape.count(-1) != len(symbols) or min(shape, default=0) < 0:
        raise ValueError(f"RESHAPE new_shape {list(new_shape)} has {list(new_shape).count(-1)} -1 entries "
                         f"but {len(symbols)} shape_symbols (resolved shape {shape})")
    return shape


def reverse(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.flip(args[0], axis=op.attrs.axis)]


def slice_array(x: np.ndarray, start: Sequence[Dim], size: Sequence[Dim]) -> np.ndarray:
    """``x[start : start + size]`` on every axis, with the spec's bounds checks."""
    start, size = [int(s) for s in start], [int(s) for s in size]
    if len(start) != x.ndim or len(size) != x.ndim:
        raise ValueError(f"slice start {start} and size {size} need one entry per dim of rank {x.ndim}")
    for axis, (s, n, d) in enumerate(zip(start, size, x.shape)):
        if s < 0 or n <= 0 or s + n > d:
            raise ValueError(f"slice start {s} size {n} is out of bounds for axis {axis} of size {d}")
    return x[tuple(slice(s, s + n) for s, n in zip(start, size))]


def slice_(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [slice_array(args[0], op.attrs.start, op.attrs.size)]


def prepared_slice(op: Operation) -> Optional[Kernel]:
    """SLICE's kernel for a step of a static program whose first run checked it (the plan's, plan.py), or None:
    the index made once, so a call is one view (0.4 us against 5 us of conversions and bounds checks, which
    the first run did; a PAD passed on by pad_slices.py hands over an input the slice lies inside). An operand
    that is not an array of the slice's rank goes to the kernel. The same view, the same values."""
    start, size = op.attrs.start, op.attrs.size
    if not all(type(d) is int for d in (*start, *size)) or len(start) != len(size):
        return None
    index = tuple(slice(s, s + n) for s, n in zip(start, size))

    def run(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        x = args[0]
        if x.__class__ is not np.ndarray or x.ndim != len(index):
            return slice_(op, args, ctx)
        return [x[index]]
    return run


def tile_array(x: np.ndarray, multiples: Sequence[Dim]) -> np.ndarray:
    multiples = [int(m) for m in multiples]
    if len(multiples) != x.ndim or min(multiples, default=1) < 1:
        raise ValueError(f"tile multiples {multiples} need one positive entry per dim of rank {x.ndim}")
    return np.tile(x, multiples)


def tile(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [tile_array(args[0], op.attrs.multiples)]


def transpose(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x = args[0]
    # the method: np.transpose's view without its dispatch, which cost more than the view
    return [x.transpose(op.attrs.perms) if x.__class__ is np.ndarray else np.transpose(x, op.attrs.perms)]


def identity(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [args[0]]
