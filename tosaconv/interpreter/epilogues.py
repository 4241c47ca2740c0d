"""A convolution and the constant ADDs, SUBs, MULs and CLAMPs after it run as one warm-run step.

After most convolutions of a conv net come a few elementwise steps with a
constant: the ADD of a batch norm's shift (the convolution's own bias is often
zeros, which zero_bias.py skips), a MUL and an ADD, a ReLU CLAMP. The plan
already runs each in place in the convolution's fresh result (inplace.py);
:func:`fuse_epilogues` runs them inside the convolution's step instead of as
separate steps (or chain links, chains.py): the same ufunc with the same
constant, in place in the same array, in the same order, so the same bits,
without a step's lookups and a kernel call each.

A convolution step (CONV2D, DEPTHWISE_CONV2D or TRANSPOSE_CONV2D) is joined
with the steps after it when each of them is trusted by the first run, has a
float32 result of the convolution's shape, and is either an ADD, SUB or MUL
of the previous result and a kept float32 constant, or CLAMP's plain case
(inplace.clamp_bounds); when the previous result is read by that step alone,
dies there and is no output; and when the convolution's result is free to
write in place (``owned``: made new by its kernel, seen by no other op).
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from ..diagnostics import TosaconvError
from .errors import StepFailure
from .inplace import clamp_bounds, clip_ufunc, keeps_operands
from .elementwise_binary import channel_row

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .plan import Step
    from .registry import Arrays, KernelContext

_CONVOLUTIONS = frozenset(("CONV2D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D"))
_UFUNCS: dict = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply}
_F32 = np.dtype(np.float32)
InPlace = Callable[[np.ndarray], None]


def fuse_epilogues(steps: list, readers: dict, constants: dict, outputs: set, owned: dict) -> list:
    """``steps`` (a static program's warm steps, in order) with each convolution joined with the constant
    elementwise steps after it (see the module docstring); ``readers`` lists each value's reading steps
    (plan.readers_of), ``constants`` holds the kept constants, ``outputs`` names the graph's outputs and
    ``owned`` maps each value free to overwrite to its shape (plan._owned_values). The given steps are not
    changed."""
    fused: list = []
    index = 0
    while index < len(steps):
        step = steps[index]
        tail = _epilogue(steps, index, readers, constants, outputs, owned)
        if tail:
            fused.append(_joined(step, tail))
            index += len(tail) + 1
        else:
            fused.append(step)
            index += 1
    return fused


def _epilogue(steps: list, start: int, readers: dict, constants: dict, outputs: set, owned: dict) -> list:
    """The ``(step, in_place)`` pairs that follow the convolution ``steps[start]`` as its epilogue, maybe none."""
    conv = steps[start]
    if not _convolution(conv) or owned.get(conv.names[0]) != conv.results[0].shape:
        return []
    tail: list = []
    previous = conv
    for step in steps[start + 1:]:
        name = previous.names[0]
        reading = readers.get(name)
        if (name in outputs or reading is None or len(reading) != 1 or reading[0] is not step
                or name not in step.release or step.results[0].shape != conv.results[0].shape):
            break
        in_place = _in_place(step, name, constants)
        if in_place is None:
            break
        tail.append((step, in_place))
        previous = step
    return tail


def _convolution(step: Step) -> bool:
    """A trusted convolution step with one float32 result of a static shape, keeping no operand."""
    return (step.opdef.name in _CONVOLUTIONS and step.trusted and len(step.results) == 1
            and step.results[0].dtype == _F32 and step.results[0].shape is not None and not keeps_operands(step))


def _in_place(step: Step, name: str, constants: dict) -> Optional[InPlace]:
    """The in-place form of ``step`` on its operand ``name`` (an array of the result's shape), or None."""
    if not step.trusted or len(step.results) != 1 or step.results[0].dtype != _F32 or keeps_operands(step):
        return None
    kind, operands = step.opdef.name, step.operands
    if kind == "CLAMP" and operands == [name] and step.op.operands[0].type.dtype.numpy == _F32:
        bounds = clamp_bounds(step.op)
        return None if bounds is None else _clamp(*bounds)
    if kind not in _UFUNCS or len(operands) != 2 or operands.count(name) != 1:
        return None
    other = operands[1] if operands[0] == name else operands[0]
    constant = constants.get(other)
    if not isinstance(constant, np.ndarray) or constant.dtype != _F32:
        return None
    return _binary(_UFUNCS[kind], constant, operands[0] == name, step.results[0].shape)


def _binary(ufunc: np.ufunc, constant: np.ndarray, first: bool, shape: tuple) -> InPlace:
    """``ufunc`` of the array and ``constant`` (the array first when ``first``) written into the array; a
    per-channel constant tiled along rows of W*C values by the kernels' rule (elementwise_binary.channel_row)."""
    row = channel_row(constant, shape)
    if row is not None:
        row.flags.writeable = False
        width = row.size

        def rows(acc: np.ndarray) -> None:
            if acc.flags.c_contiguous:
                view = acc.reshape(-1, width)
                ufunc(*((view, row) if first else (row, view)), out=view)
            else:
                ufunc(*((acc, constant) if first else (constant, acc)), out=acc)
        return rows
    if first:
        return lambda acc: ufunc(acc, constant, out=acc)
    return lambda acc: ufunc(constant, acc, out=acc)


def _clamp(lo: np.float32, hi: np.float32) -> InPlace:
    """CLAMP's plain case in place: the clip ufunc ndarray.clip calls."""
    clip = clip_ufunc
    return lambda acc: clip(acc, lo, hi, out=acc)


def _joined(conv: Step, tail: list) -> Step:
    """One step running ``conv``'s call, then each of ``tail``'s in-place forms on its result."""
    last = tail[-1][0]
    joined = copy.copy(last)
    joined.call = _Epilogue(conv, [(step.op, in_place) for step, in_place in tail])
    joined.operands = list(conv.operands)
    inside = {conv.names[0]} | {step.names[0] for step, _ in tail[:-1]}
    joined.release = list(dict.fromkeys(n for s in [conv, *(s for s, _ in tail)] for n in s.release
                                         if n not in inside))
    return joined


class _Epilogue:
    """The call of a convolution with its epilogue; a failure is reported as its own op's (errors.StepFailure)."""

    __slots__ = ("op", "call", "tail")

    def __init__(self, conv: Step, tail: list) -> None:
        self.op, self.call, self.tail = conv.op, conv.call, tail

    def __call__(self, op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        current = self.op
        try:
            acc = self.call(current, args, ctx)[0]
            for step_op, in_place in self.tail:
                current = step_op          # the op a failure is reported at
                in_place(acc)
        except (TosaconvError, StepFailure):     # a budget refusal keeps its own exit code
            raise
        except Exception as e:                    # noqa: BLE001 - reported as this op's failure
            raise StepFailure(current, e) from e
        return [acc]
