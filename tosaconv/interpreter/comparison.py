"""Kernels of the TOSA chapter "Comparison Operators": EQUAL, GREATER, GREATER_EQUAL.

The result is a bool tensor of the broadcast shape. numpy's comparisons
already give what the spec's floating-point table requires: any comparison
with a NaN is false, and +0.0 equals -0.0.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext



def equal(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.equal(args[0], args[1])]


def greater(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.greater(args[0], args[1])]


def greater_equal(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.greater_equal(args[0], args[1])]
