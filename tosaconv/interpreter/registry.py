"""The kernel registry: ``@kernel(Op.CONV2D)`` next to each kernel function.

A kernel is ``fn(op, args, ctx) -> list``: ``op`` is the IR
:class:`~tosaconv.ir.graph.Operation` (its typed attributes and result types),
``args`` holds one entry per operand (a numpy array for a tensor, a Python
``int`` for an Index value) and ``ctx`` is the :class:`KernelContext` of the
run. It returns one entry per result. Registering an op twice is an error, so
two modules can never silently disagree about which kernel runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ..ir.ops import OpDef

_KERNELS: dict = {}   # op name -> kernel function


@dataclass
class KernelContext:
    """What a kernel may know about the run beyond its operands: the symbol bindings, and the program's
    state (variable name -> array), which outlives the run when the caller keeps it."""

    bindings: dict = field(default_factory=dict)
    variables: dict = field(default_factory=dict)


def kernel(opdef: OpDef) -> Callable:
    """Register the decorated function as the kernel of ``opdef``."""
    def register(fn: Callable) -> Callable:
        if opdef.name in _KERNELS:
            other = _KERNELS[opdef.name]
            raise ValueError(f"two kernels for {opdef.name}: {other.__module__}.{other.__name__} "
                             f"and {fn.__module__}.{fn.__name__}")
        _KERNELS[opdef.name] = fn
        return fn
    return register


def kernel_for(opdef: OpDef) -> Optional[Callable]:
    """The kernel registered for ``opdef``, or None when there is none."""
    return _KERNELS.get(opdef.name)


def registered_ops() -> list:
    """Names of every op that has a kernel, sorted."""
    return sorted(_KERNELS)
