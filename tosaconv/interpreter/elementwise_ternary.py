"""Kernels of the TOSA chapter "Elementwise Ternary Operators": SELECT.

SELECT picks ``input2`` where the bool ``input1`` is true and ``input3``
elsewhere, broadcasting size-1 dims of all three operands.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext



def select(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    condition, on_true, on_false = args
    return [np.where(np.asarray(condition, dtype=bool), on_true, on_false)]
