"""Errors the interpreter reports: bad inputs, and failures inside a kernel.

Kernels raise plain exceptions (``ValueError`` and friends) and know nothing
about where they run. The evaluator wraps such a failure in a
:class:`KernelError` that names the op and its source location, so a report
reads "while running MATMUL at MatMul 'attn/mm': ...". An :class:`InputError`
says which input is wrong, what was expected, what was given and what to do.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from ..ir.location import Location


class InputError(ValueError):
    """A missing, unknown or malformed input array, or input shapes that bind symbols inconsistently."""

    def __init__(self, message: str, input_name: Optional[str] = None, axis: Optional[int] = None):
        super().__init__(message)
        self.input_name = input_name
        self.axis = axis


class KernelError(RuntimeError):
    """A kernel failed; ``location`` is the failing op's source location."""

    def __init__(self, message: str, location: Optional[Location] = None, op_name: Optional[str] = None):
        super().__init__(message)
        self.location = location
        self.op_name = op_name


class StepFailure(Exception):
    """A kernel failure inside a chained warm-run step (chains.py), carried out with the op it belongs to,
    so the evaluator reports it at that op rather than at the chain's first."""

    def __init__(self, op: Operation, error: Exception):
        super().__init__(str(error))
        self.op = op
        self.error = error
