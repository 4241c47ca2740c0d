"""The numpy reference interpreter: runs a tosaconv graph on concrete arrays.

Kernels are grouped by TOSA specification chapter, one module each; the op
table's row for each op names its kernel (see :mod:`.registry`). Integer
kernels follow the spec pseudocode bit for bit; float kernels compute in
float32 through numpy's BLAS paths. :func:`evaluate` is the flat driver loop;
:func:`bind_from_shapes` binds dimension symbols from input shapes (the CLI
reuses it); :class:`InputError` and :class:`KernelError` are what a run can
raise. Kernel modules are imported when the table's pointer is first resolved,
not here: importing the package has no side effect that could close an import
cycle (a lowering module that uses the interpreter's fixed-point arithmetic,
while the RECURRENT kernel runs a lowering), and the op-table completeness test
(``tests/test_op_table.py``) resolves every kernel, so a broken kernel module
still fails a test rather than a run.

The names below are loaded when first asked for (:func:`__getattr__`, PEP 562): a conversion
that only folds constants uses :mod:`.registry` and its kernels, and should not pay for the
evaluator, the input binding and what they import (start-up, issue 13).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .binding import bind_from_shapes
    from .errors import InputError, KernelError
    from .evaluator import evaluate
    from .registry import kernel_for

__all__ = ["evaluate", "bind_from_shapes", "KernelError", "InputError", "kernel_for"]

# name -> the module of this package that defines it
_HOMES = {"evaluate": ".evaluator", "bind_from_shapes": ".binding", "KernelError": ".errors",
          "InputError": ".errors", "kernel_for": ".registry"}


def __getattr__(name: str) -> object:
    """``tosaconv.interpreter.<name>``: imports the module that defines it, the first time."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value
