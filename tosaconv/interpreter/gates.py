"""Squeeze-excitation gates run as one warm-run step: a branch of tiny values computed from ``x`` and multiplied
(or added) back into ``x``.

The conv nets of the MobileNetV3 and PP-LCNet family gate a feature map ``x``
with a squeeze-excitation block: a mean over the pixels (TRANSPOSE, two
REDUCE_SUMs and a MUL, or a global AVG_POOL2D), a 1x1 CONV2D, its ADD and a
ReLU CLAMP, a second 1x1 CONV2D and ADD, a hard sigmoid (MUL, ADD, CLAMP), and
the MUL of ``x`` by that gate. Every value between ``x`` and the last MUL has
at most a few hundred elements, so each of those steps costs more in its
kernel's Python and its chain link (chains.py) than in its arithmetic.

:func:`fuse_gates` finds such a branch in a warm plan (plan.py) and runs it
as one step that calls, for each branch step, a small function made once
(its constants bound, its geometry worked out): the same numpy call the
step's kernel makes (the same ufunc, ``add.reduce`` over the same axis of the
same view, the same BLAS product of :class:`~.windows.Pointwise`), writing
into the branch's own previous value where the kernel would have made a new
array (an elementwise float32 result does not depend on where it is
written). A step without such a function calls its own kernel. The last step
(the MUL or ADD with ``x``) calls its own kernel too. So the results are the
same bits.

A branch is fused when its steps are neighbours in the warm plan, all
trusted by the first run, and:

- its first step reads ``x`` (no constant) and kept constants only, each
  later one its predecessor's result and kept constants only;
- each of its results is float32, read only by the next step, dead after it,
  no graph output, and (but for a TRANSPOSE's view) of at most
  :data:`_SMALL` elements;
- its last step is a float32 ADD or MUL of ``x`` and the branch's last result;
- no step keeps an operand (state writes, regions).
"""
from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from ..diagnostics import TosaconvError
from .errors import StepFailure
from .inplace import clamp_bounds, clip_ufunc, keeps_operands
from .windows import Pointwise
from .zero_bias import skips_bias

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .plan import Step
    from .registry import Arrays, KernelContext

_SMALL = 4096         # the most elements of a branch value (a view aside)
_F32 = np.dtype(np.float32)
_UFUNCS: dict = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply}
Link = Callable[[np.ndarray, "KernelContext"], np.ndarray]


def fuse_gates(steps: list, readers: dict, constants: dict, outputs: set) -> list:
    """``steps`` (a static program's warm steps, in order) with each gate branch (see the module docstring)
    joined with its last step into one step; ``readers`` lists each value's reading steps (plan.readers_of),
    ``constants`` holds the plan's kept constants, ``outputs`` names the graph's outputs. The given steps
    are not changed."""
    fused: list = []
    index = 0
    while index < len(steps):
        count = _branch_length(steps, index, readers, constants, outputs)
        if count:
            fused.append(_gate_step(steps[index:index + count + 1], readers, constants, outputs))
            index += count + 1
        else:
            fused.append(steps[index])
            index += 1
    return fused


def _branch_length(steps: list, start: int, readers: dict, constants: dict, outputs: set) -> int:
    """The number of branch steps of a gate starting at ``steps[start]`` (its last step follows them), or 0."""
    first = steps[start]
    inputs = _variable_operands(first, constants)
    if len(inputs) != 1 or not _branch_step(first):
        return 0
    x, count = inputs[0], 0
    for step, after in zip(steps[start:], steps[start + 1:]):
        name = step.names[0]
        if not _branch_step(step) or not _passes_on(name, step, after, readers, outputs):
            return 0
        count += 1
        later = _variable_operands(after, constants)
        if sorted(later) == sorted((x, name)) and _gating(after):
            return count if count > 1 else 0
        if later != [name]:
            return 0
    return 0


def _variable_operands(step: Step, constants: dict) -> list:
    """The operand names of ``step`` that are not kept constants, each once, in order."""
    return [name for name in dict.fromkeys(step.operands) if name not in constants]


def _branch_step(step: Step) -> bool:
    """A trusted step with one static float32 result, small or a TRANSPOSE's view, keeping no operand."""
    if not step.trusted or len(step.results) != 1 or keeps_operands(step):
        return False
    slot = step.results[0]
    return slot.dtype == _F32 and (step.opdef.name == "TRANSPOSE" or math.prod(slot.shape) <= _SMALL)


def _passes_on(name: str, step: Step, after: Step, readers: dict, outputs: set) -> bool:
    """``step``'s result ``name`` is read by ``after`` alone, dies there and is no output."""
    reading = readers.get(name)
    return (name not in outputs and reading is not None and len(reading) == 1 and reading[0] is after
            and name in after.release)


def _gating(step: Step) -> bool:
    """The last step of a gate: a trusted float32 ADD or MUL of two operands with one result."""
    return (step.opdef.name in ("ADD", "MUL") and step.trusted and len(step.operands) == 2
            and len(step.results) == 1 and step.results[0].dtype == _F32 and not keeps_operands(step))


def _gate_step(steps: list, readers: dict, constants: dict, outputs: set) -> Step:
    """One step running the branch ``steps[:-1]`` and the gating ``steps[-1]`` (see :class:`_Gate`)."""
    last = steps[-1]
    x = _variable_operands(steps[0], constants)[0]
    links, owned = [], False
    for step in steps[:-1]:
        link, owned = _link(step, constants, owned, readers, outputs)
        links.append((step.op, link))
    joined = copy.copy(last)
    joined.call = _Gate(links, last, last.operands[0] == x)
    joined.operands = [x]
    inside = {step.names[0] for step in steps[:-1]}
    joined.release = list(dict.fromkeys(n for step in steps for n in step.release if n not in inside))
    return joined


class _Gate:
    """The call of a fused gate: each branch link on the previous value (``x`` first), then the gating step's
    own call on ``x`` and the branch's value; a failure is reported as its own op's (errors.StepFailure)."""

    __slots__ = ("links", "op", "call", "x_first")

    def __init__(self, links: list, last: Step, x_first: bool) -> None:
        self.links = links
        self.op, self.call, self.x_first = last.op, last.call, x_first

    def __call__(self, op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        x = value = args[0]
        for link_op, link in self.links:
            try:
                value = link(value, ctx)
            except TosaconvError:      # a budget refusal keeps its own exit code
                raise
            except Exception as e:     # noqa: BLE001 - reported as this link's op's failure
                raise StepFailure(link_op, e) from e
        try:
            return self.call(self.op, [x, value] if self.x_first else [value, x], ctx)
        except TosaconvError:
            raise
        except Exception as e:         # noqa: BLE001
            raise StepFailure(self.op, e) from e


def _link(step: Step, constants: dict, owned: bool, readers: dict, outputs: set) -> tuple:
    """``(link, owned)``: the function computing ``step``'s result from its one variable operand (the branch's
    value, which the link may overwrite when ``owned``), and whether the branch owns that result."""
    kind = step.opdef.name
    if kind == "TRANSPOSE":
        perms = tuple(step.op.attrs.perms)
        return (lambda v, ctx: v.transpose(perms)), owned
    lean = None
    if kind == "REDUCE_SUM":
        lean = _reduce_sum(step)
    elif kind in _UFUNCS:
        lean = _binary(step, constants, owned)
    elif kind == "CLAMP":
        lean = _clamp(step, owned)
    elif kind == "CONV2D":
        lean = _pointwise(step, constants, not skips_bias(step, readers, constants, outputs))
    return (lean, True) if lean is not None else (_general(step, constants), False)


def _reduce_sum(step: Step) -> Optional[Link]:
    """REDUCE_SUM's ``add.reduce`` over its axis, as reduction.prepared_reduce_sum calls it."""
    op = step.op
    if op.operands[0].type.dtype.numpy != _F32:
        return None
    axis, add = op.attrs.axis, np.add.reduce
    return lambda v, ctx: add(v, axis=axis, keepdims=True, dtype=np.float32)


def _binary(step: Step, constants: dict, owned: bool) -> Optional[Link]:
    """ADD, SUB or MUL of the branch's value and a float32 constant, in the operands' order, written into the
    value when the branch owns it and it has the result's shape; then the constant is spread to that shape once
    (:func:`_spread`)."""
    ufunc, (a, b), shape = _UFUNCS[step.opdef.name], step.operands, tuple(step.results[0].shape)
    constant = constants.get(b if a not in constants else a)
    if (a in constants) == (b in constants) or not isinstance(constant, np.ndarray) or constant.dtype != _F32:
        return None
    same = tuple(step.op.operands[0 if a not in constants else 1].type.shape) == shape
    if same:
        constant = _spread(constant, shape)
    into = owned and same
    if a in constants:
        return (lambda v, ctx: ufunc(constant, v, out=v)) if into else (lambda v, ctx: ufunc(constant, v))
    return (lambda v, ctx: ufunc(v, constant, out=v)) if into else (lambda v, ctx: ufunc(v, constant))


def _spread(constant: np.ndarray, shape: tuple) -> np.ndarray:
    """``constant`` broadcast to ``shape`` as a contiguous read-only array (a branch value is small): the same
    value at each element, so the same results, and numpy's ufuncs take two arrays of one shape in half the
    time of a broadcast (0.75 us against 1.65 us at 192 values)."""
    spread = np.ascontiguousarray(np.broadcast_to(constant, shape))
    spread.flags.writeable = False
    return spread


def _clamp(step: Step, owned: bool) -> Optional[Link]:
    """CLAMP's plain case (inplace.clamp_bounds): the clip ufunc ndarray.clip calls, without its Python, its
    bounds spread to the value's shape (:func:`_spread`: 1.1 us against 1.5 us)."""
    bounds = clamp_bounds(step.op) if step.op.operands[0].type.dtype.numpy == _F32 else None
    if bounds is None:
        return None
    shape = tuple(step.results[0].shape)
    lo, hi = (_spread(np.asarray(bound, _F32), shape) for bound in bounds)
    clip = clip_ufunc
    return (lambda v, ctx: clip(v, lo, hi, out=v)) if owned else (lambda v, ctx: clip(v, lo, hi))


def _pointwise(step: Step, constants: dict, with_bias: bool) -> Optional[Link]:
    """A 1x1 CONV2D (stride 1, no padding) with constant float32 weights and bias: windows.Pointwise's product,
    then the bias added in place unless the plan skips a bias of +0.0 for this step (zero_bias.py)."""
    op = step.op
    weights, bias = constants.get(step.operands[1]), constants.get(step.operands[2])
    a, x = op.attrs, op.operands[0].type
    if (not isinstance(weights, np.ndarray) or not isinstance(bias, np.ndarray) or weights.dtype != _F32
            or bias.dtype != _F32 or x.dtype.numpy != _F32 or weights.shape[1:3] != (1, 1) or any(a.pad)
            or tuple(a.stride) != (1, 1) or a.input_zp or a.weight_zp or bias.ndim > 1
            or bias.size not in (1, weights.shape[0])):
        return None
    product = Pointwise(weights, tuple(x.shape))
    if not with_bias:
        return lambda v, ctx: product(v)
    add = np.add

    def run(v: np.ndarray, ctx: KernelContext) -> np.ndarray:
        acc = product(v)
        return add(acc, bias, out=acc)
    return run


def _general(step: Step, constants: dict) -> Link:
    """The step's own call, its constants bound, the branch's value at each of its variable operands."""
    call, op = step.call, step.op
    args = [constants.get(name) for name in step.operands]
    places = [i for i, name in enumerate(step.operands) if name not in constants]

    def run(v: np.ndarray, ctx: KernelContext) -> np.ndarray:
        now = list(args)
        for i in places:
            now[i] = v
        return call(op, now, ctx)[0]
    return run
