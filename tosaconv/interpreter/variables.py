"""Kernels of the state ops (TOSA 1.0 chapter "Variable operators").

The state is the run's :attr:`KernelContext.variables` (name -> array). A
VARIABLE declaration puts its initial value there unless the state already
holds the variable (a later run of the same program keeps what the previous
one wrote); VARIABLE_READ returns the current value and VARIABLE_WRITE
replaces it with a copy of its operand.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext



def variable(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    a = op.attrs
    if a.name not in ctx.variables:
        ctx.variables[a.name] = np.array(a.initial, dtype=a.dtype.numpy, copy=True)
    return []


def variable_read(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    if op.attrs.name not in ctx.variables:
        raise ValueError(f"variable '{op.attrs.name}' is read before the VARIABLE op declares it")
    return [ctx.variables[op.attrs.name]]


def variable_write(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    value = np.asarray(args[0])
    if value.dtype != op.attrs.dtype.numpy or tuple(value.shape) != tuple(op.attrs.shape):
        raise ValueError(f"writing {value.dtype}{list(value.shape)} to variable '{op.attrs.name}' of "
                         f"{op.attrs.dtype.name}{list(op.attrs.shape)}")
    ctx.variables[op.attrs.name] = value.copy()
    return []
