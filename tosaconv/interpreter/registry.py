"""The kernel registry: each op's kernel is the function its op-table row names.

A kernel is ``fn(op, args, ctx) -> list``: ``op`` is the IR
:class:`~tosaconv.ir.graph.Operation` (its typed attributes and result types),
``args`` holds one entry per operand (a numpy array for a tensor, a Python
``int`` for an Index value) and ``ctx`` is the :class:`KernelContext` of the
run. It returns one entry per result. The row's ``kernel`` string
(``"tosaconv.interpreter.convolution:conv2d"``) is the only registration, so
there is one kernel per op by construction and nothing registers by import.
"""
from __future__ import annotations

from dataclasses import field
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union, cast

import numpy as np

from ..ir.ops import OPS, OpDef, resolve

if TYPE_CHECKING:
    from ..ir.graph import Operation

_RESOLVED: dict[str, "Kernel"] = {}   # op name -> kernel function, filled on first use


@dataclass
class KernelContext:
    """What a kernel may know about the run beyond its operands: the symbol bindings, and the program's
    state (variable name -> array), which outlives the run when the caller keeps it."""

    bindings: dict[str, int] = field(default_factory=dict)
    variables: "dict[str, np.ndarray[Any, Any]]" = field(default_factory=dict)


# A kernel's operand or result: a numpy array for a tensor, a Python int for an Index value
KernelValue = Union["np.ndarray[Any, Any]", int]
Kernel = Callable[["Operation", list[KernelValue], KernelContext], list[KernelValue]]
# a kernel's operands and its results, one per value: ``kernel(op, args, ctx) -> results``
Arrays = Sequence[KernelValue]


def kernel_for(opdef: OpDef) -> Optional[Kernel]:
    """The kernel the op table names for ``opdef``, or None when it names none."""
    fn = _RESOLVED.get(opdef.name)
    if fn is None and opdef.kernel:
        fn = _RESOLVED[opdef.name] = cast(Kernel, resolve(opdef.kernel))   # the table names a kernel
    return fn


def registered_ops() -> list[str]:
    """Names of every op whose table row names a kernel, sorted."""
    return sorted(name for name, op in OPS.items() if op.kernel)
