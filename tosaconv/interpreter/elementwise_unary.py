"""Kernels of the TOSA chapter "Elementwise Unary Operators".

ABS, BITWISE_NOT, CEIL, CLZ, COS, EXP, FLOOR, LOG, LOGICAL_NOT, NEGATE,
RECIPROCAL, RSQRT and SIN. Float ops compute in float32 and narrow to the
result type; special values (log of 0 or a negative, 1/0) follow IEEE, which
is what the spec's floating-point table asks for, so numpy's warnings are
silenced (by the caller: the evaluator and constant folding run kernels under
``np.errstate(all="ignore")``). Integer NEGATE applies its zero points in an int32 accumulator and
saturates, as in the pseudocode.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from ..ir.dtypes import DType
from .numeric import as_int64, bit_length, f32, float_result, out_dtype, saturate, wrap

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext, KernelValue


def float_map(op: Operation, x: KernelValue, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Apply ``fn`` to float32 ``x`` and narrow to the op's result type (IEEE specials without warnings:
    the caller runs kernels under ``np.errstate(all="ignore")``)."""
    return float_result(fn(f32(x)), out_dtype(op))


def abs_(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x = args[0]
    if out_dtype(op).is_float:
        return [float_map(op, x, np.abs)]   # also turns -0.0 into +0.0
    return [wrap(np.abs(as_int64(x)), out_dtype(op))]


def bitwise_not(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.invert(args[0])]


def ceil(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [float_map(op, args[0], np.ceil)]


def floor(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [float_map(op, args[0], np.floor)]


def clz(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    bits = out_dtype(op).bits
    unsigned = as_int64(args[0]) & ((1 << bits) - 1)
    return [wrap(bits - bit_length(unsigned), out_dtype(op))]


def cos(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [float_map(op, args[0], np.cos)]


def sin(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [float_map(op, args[0], np.sin)]


def exp(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [float_map(op, args[0], np.exp)]


def log(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [float_map(op, args[0], np.log)]


def reciprocal(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [float_map(op, args[0], lambda x: np.float32(1.0) / x)]


def rsqrt(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [float_map(op, args[0], lambda x: np.float32(1.0) / np.sqrt(x))]


def logical_not(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.logical_not(args[0])]


def negate(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, dtype = args[0], out_dtype(op)
    if dtype.is_float:
        return [float_map(op, x, np.negative)]
    input_zp, output_zp = op.attrs.input_zp, op.attrs.output_zp
    if dtype != DType.INT8 and (input_zp or output_zp):
        raise ValueError(f"NEGATE zero points must be 0 for {dtype.value} data, "
                         f"got input_zp={input_zp}, output_zp={output_zp}")
    value = -(as_int64(x) - input_zp) + output_zp
    return [saturate(value, dtype)]
