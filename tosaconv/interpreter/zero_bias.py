"""Convolutions whose bias is all +0.0 skip adding it where nothing downstream can tell the difference.

ONNX convolutions without a bias, and the batch norms that follow most of
them, reach TOSA as a CONV2D (or DEPTHWISE_CONV2D, ...) with a bias of zeros
and a separate MUL and ADD. Adding +0.0 to a float32 accumulator changes one
thing only: a -0.0 becomes +0.0 (a NaN stays NaN, everything else is
unchanged). That pass over the result costs 5 % of a MobileNet's run.

So the plan (plan.py, once its first run is checked) lets such a step skip
it when the sign of a zero in its result cannot reach any output: every
reader of the result is

- an ADD of a constant without a -0.0 entry (``+-0 + c`` is the same for
  both zeros unless ``c`` is -0.0), or
- a MUL by a constant (``+-0 * c`` differs at most in the sign of a zero,
  or is NaN either way) whose own result, in turn, only such readers see;

and neither it nor such a MUL's result is an output of the graph. The
results are then bit for bit those of the kernel that adds the bias.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .plan import Step
    from .registry import Arrays, Kernel, KernelContext

_CONVOLUTIONS = frozenset(("CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D"))
_F32 = np.dtype(np.float32)
_DEPTH = 4      # MULs followed from a convolution's result before giving up


def skip_zero_biases(steps: list, readers: dict, constants: dict, outputs: set) -> None:
    """Make each trusted float32 convolution step whose bias is all +0.0 skip it, when the sign of a zero in its
    result cannot reach one of ``outputs`` (names); ``readers`` lists each value's reading steps
    (plan.readers_of), ``constants`` holds the plan's kept constants by name."""
    for step in steps:
        if skips_bias(step, readers, constants, outputs):
            step.call = _without_bias(step.call)


def skips_bias(step: Step, readers: dict, constants: dict, outputs: set) -> bool:
    """True when :func:`skip_zero_biases` makes ``step`` skip its bias (the same arguments)."""
    return _zero_bias_convolution(step, constants) and _sign_blind(step.names[0], readers, constants, outputs, 0)


def _zero_bias_convolution(step: Step, constants: dict) -> bool:
    """A trusted convolution with a float32 result and a kept float32 bias whose every bit is 0."""
    if step.opdef.name not in _CONVOLUTIONS or not step.trusted or len(step.results) != 1:
        return False
    bias = constants.get(step.operands[2])
    return (step.results[0].dtype == _F32 and isinstance(bias, np.ndarray) and bias.dtype == _F32
            and not bias.view(np.uint32).any())


def _sign_blind(name: str, readers: dict, constants: dict, outputs: set, depth: int) -> bool:
    """True when the sign of a zero in value ``name`` cannot change any output (see the module docstring)."""
    if name in outputs or depth > _DEPTH or name not in readers:
        return False
    for reader in readers[name]:
        kind, operands = reader.opdef.name, reader.operands
        if len(operands) != 2 or operands[0] == operands[1] or kind not in ("ADD", "MUL"):
            return False
        other = constants.get(operands[1] if operands[0] == name else operands[0])
        if not isinstance(other, np.ndarray) or other.dtype != _F32:
            return False
        if kind == "ADD" and np.any(np.signbit(other) & (other == 0)):
            return False
        if kind == "MUL" and not (reader.trusted and reader.results[0].dtype == _F32
                                  and _sign_blind(reader.names[0], readers, constants, outputs, depth + 1)):
            return False
    return True


def _without_bias(kernel: Kernel) -> Kernel:
    """``kernel`` called with no bias (None): the convolution kernels then leave their sums as they are."""
    def run(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        return kernel(op, [args[0], args[1], None], ctx)
    return run
