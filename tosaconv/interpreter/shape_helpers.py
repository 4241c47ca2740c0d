"""Kernels of the seed's shape helper and data-dependent ops (seed 001; never in a static ``.tosa``).

Index values are plain Python ints at run time. INDEX_CONST, GET_DIM and
EXTRACT_DIM make them; INDEX_ADD/SUB/MUL/FLOORDIV/MOD/MIN/MAX combine them
with floor semantics (Python's ``//`` and ``%``, matching the dim algebra);
DIMS_TO_TENSOR packs them into a 1-D tensor. EXPAND_DIMS and COLLAPSE_DIMS
are reshapes that add or remove literal 1s. DYN_SLICE, DYN_TILE and IOTA are
the data-dependent SLICE, TILE and a range, with their sizes as Index operands.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..diagnostics.assumption import assumption_error
from ..ir.graph import describe_value
from ..ir.ops import Op
from .data_layout import slice_array, tile_array
from .numeric import check_range

if TYPE_CHECKING:
    from ..ir.graph import Operation, Value
    from .registry import Arrays, KernelContext, KernelValue


def index_const(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [int(op.attrs.value)]


def get_dim(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, axis = args[0], op.attrs.dim_index
    if not 0 <= axis < np.ndim(x):
        raise ValueError(f"dim_index {axis} is out of range for a rank {np.ndim(x)} input")
    return [int(np.shape(x)[axis])]


def _data_origin(v: Value) -> Value:
    """The value whose data ``v`` reshapes (the name a user knows), through RESHAPEs."""
    while v.producer is not None and v.producer.op is Op.RESHAPE:
        v = v.producer.operands[0]
    return v


def extract_dim(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, index = np.asarray(args[0]), op.attrs.dim_index
    if x.ndim != 1 or not 0 <= index < x.shape[0]:
        raise ValueError(f"EXTRACT_DIM needs a 1-D input with element {index}, got shape {list(x.shape)}")
    value, name = int(x[index]), next(iter(op.result.type.symbols()), None)
    if name is not None and ctx.bindings.get(name, value) != value:   # the user assumed it (--bind)
        raise assumption_error(name, ctx.bindings[name], value, op.location, describe_value(_data_origin(op.operands[0])),
                               index)
    return [value]


def dims_to_tensor(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    dtype = op.attrs.dtype.numpy
    values = np.array([int(d) for d in args], dtype=np.int64)
    info = np.iinfo(dtype)
    check_range(values, int(info.min), int(info.max), f"DIMS_TO_TENSOR values for {dtype}")
    return [values.astype(dtype)]


def expand_dims(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    shape = list(np.shape(args[0]))
    for i in op.attrs.indices:
        shape.insert(i, 1)
    return [np.reshape(args[0], shape)]


def collapse_dims(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    shape = np.shape(args[0])
    drop = set(op.attrs.indices)
    if any(shape[i] != 1 for i in drop):
        raise ValueError(f"COLLAPSE_DIMS can only remove size-1 dims; dims {sorted(drop)} of {list(shape)}")
    return [np.reshape(args[0], [d for i, d in enumerate(shape) if i not in drop])]


def index_add(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [args[0] + args[1]]


def index_sub(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [args[0] - args[1]]


def index_mul(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [args[0] * args[1]]


def index_floordiv(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    _nonzero_divisor(op, args[1])
    return [args[0] // args[1]]


def index_mod(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    _nonzero_divisor(op, args[1])
    return [args[0] % args[1]]


def _nonzero_divisor(op: Operation, divisor: KernelValue) -> None:
    if divisor == 0:
        raise ValueError(f"{op.op.name} by zero")


def index_min(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [min(args[0], args[1])]


def index_max(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [max(args[0], args[1])]


def dyn_slice(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x = args[0]
    rank = np.ndim(x)
    if len(args) != 1 + 2 * rank:
        raise ValueError(f"DYN_SLICE on rank {rank} takes {rank} start and {rank} size indices, "
                         f"got {len(args) - 1} indices")
    return [slice_array(x, args[1:1 + rank], args[1 + rank:])]


def dyn_tile(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [tile_array(args[0], args[1:])]


def iota(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    length = int(args[0])
    if length < 0:
        raise ValueError(f"IOTA length must be >= 0, got {length}")
    return [np.arange(length, dtype=op.attrs.dtype.numpy)]


def dyn_pad(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    """ONNX Pad semantics on the bound amounts: negative amounts crop, then numpy pads in the mode."""
    x, pads = args[0], [int(p) for p in args[1:]]
    if len(pads) != 2 * np.ndim(x):
        raise ValueError(f"DYN_PAD on rank {np.ndim(x)} takes {2 * np.ndim(x)} pad amounts, got {len(pads)}")
    pairs = list(zip(pads[0::2], pads[1::2]))
    x = x[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(np.shape(x), pairs))]
    if 0 in np.shape(x):
        raise ValueError(f"DYN_PAD amounts {pads} crop an axis to nothing")
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
    mode = op.attrs.mode
    for n, (lo, hi) in zip(np.shape(x), grow):
        if (mode == "reflect" and max(lo, hi) > n - 1) or (mode in ("wrap", "symmetric") and max(lo, hi) > n):
            raise ValueError(f"a {mode} pad of {max(lo, hi)} is too large for a dim of {n}")
    if mode == "constant":
        return [np.pad(x, grow, mode="constant", constant_values=x.dtype.type(op.attrs.pad_const))]
    return [np.pad(x, grow, mode=mode)]
