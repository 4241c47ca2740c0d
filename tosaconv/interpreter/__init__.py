"""The numpy reference interpreter: runs a tosaconv graph on concrete arrays.

Kernels are grouped by TOSA specification chapter, one module each; the op
table's row for each op names its kernel (see :mod:`.registry`). Integer
kernels follow the spec pseudocode bit for bit; float kernels compute in
float32 through numpy's BLAS paths. :func:`evaluate` is the flat driver loop;
:func:`bind_from_shapes` binds dimension symbols from input shapes (the CLI
reuses it); :class:`InputError` and :class:`KernelError` are what a run can
raise. Every kernel module is imported explicitly below, so a broken kernel
module fails on import, not in the middle of a run.
"""
from __future__ import annotations

from . import (  # noqa: F401 - imported up front (see above)
    activation,
    comparison,
    control_flow,
    convolution,
    data_dependent,
    data_layout,
    data_nodes,
    elementwise_binary,
    elementwise_ternary,
    elementwise_unary,
    fft,
    image,
    interpolation,
    recurrent,
    reduction,
    scatter_gather,
    shape_helpers,
    table,
    tensor_ops,
    type_conversion,
    variables,
)
from .binding import bind_from_shapes
from .errors import InputError, KernelError
from .evaluator import evaluate
from .registry import kernel_for

__all__ = ["evaluate", "bind_from_shapes", "KernelError", "InputError", "kernel_for"]
