"""In-place elementwise steps: a float ADD, SUB, MUL or CLAMP writes into an operand that dies with it.

(A float ADD, SUB or MUL with no such operand still gets a plan-made kernel: the same ufunc into a new
array, without the kernel's per-call checks; see _fresh_binary.)

Between convolutions, conv nets run chains of small elementwise ops (a batch
norm's MUL and ADD, HardSwish's ADD, CLAMP, MUL, MUL). Each kernel call
allocates its result, and a large result costs fresh pages every run. When
the plan can see that an operand's array is owned by nobody else, the step
computes into that array with numpy's ``out=``, which gives the same float32
bits as the kernel (the same ufunc on the same operands; numpy handles an
output that is one of the inputs).

An operand's array is free to overwrite when all of these hold, the last two
as seen in the plan's checked first run (evaluator.py). Only a program whose
every type is static is done in place: its kernels see the same operand
shapes and types on every run, so they share memory the same way each time.

- the step is its last use, and it is not a graph output;
- it was made in this graph by a kernel that returns new arrays (CONV2D,
  DEPTHWISE_CONV2D, ERF, or one of the four ops here); never an input, a
  constant or a variable;
- it is float32 with the step's own result shape, and writeable;
- no op that reads it returned an array sharing its memory (RESHAPE's view,
  say), and none of them keeps it (no VARIABLE_WRITE, no region).

A per-channel constant (``[1, ..., 1, C]``, few channels) against a big tensor
is tiled once along a row of W*C values when the plan is made: numpy's inner
loop then runs over a whole row instead of C values at a time (about twice
as fast at 16 channels), with the same products and sums.

CLAMP is done in place only for its plain case (float32, ``nan_mode``
PROPAGATE, a non-zero ``max_val``), where its kernel is one ``np.clip``.
"""
from __future__ import annotations

import importlib
import math
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from ..ir.graph import op_regions
from .elementwise_binary import channel_row

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .plan import Step
    from .registry import Arrays, Kernel, KernelContext

_UFUNCS: dict = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply}
# kernels whose results are always new arrays (checked again against their operands in the first run)
_FRESH = frozenset(("ADD", "SUB", "MUL", "CLAMP", "CONV2D", "DEPTHWISE_CONV2D", "ERF"))
_F32 = np.dtype(np.float32)


def _binary(ufunc: np.ufunc, target: int) -> Kernel:
    """``ufunc`` of the two operands, written into operand ``target``."""
    def run(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        return [ufunc(args[0], args[1], out=args[target])]
    return run


def _binary_rows(ufunc: np.ufunc, target: int, tiled: np.ndarray) -> Kernel:
    """``ufunc`` of operand ``target`` as rows of W*C values and the other operand, a per-channel constant
    tiled W times, written into operand ``target`` (broadcast as usual when it is not C-contiguous)."""
    width = tiled.size

    def run(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        big = args[target]
        if not big.flags.c_contiguous:
            return [ufunc(args[0], args[1], out=big)]
        rows = big.reshape(-1, width)
        ufunc(*((rows, tiled) if target == 0 else (tiled, rows)), out=rows)
        return [big]
    return run


def _fresh_binary(ufunc: np.ufunc, operands: list, constants: dict, shape: tuple) -> Kernel:
    """``ufunc`` of the two operands into a new array, as the kernel computes it (a per-channel constant tiled
    along rows of the other operand when that has the result's shape and is C-contiguous), without the
    kernel's dtype and layout checks, which a trusted float32 step does not need (4 us a call)."""
    for target in (0, 1):
        tiled = _tiled_row(constants.get(operands[1 - target]), shape)
        if tiled is not None:
            break
    width = 0 if tiled is None else tiled.size

    def run(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        big = args[target]
        if tiled is None or big.shape != shape or not big.flags.c_contiguous:
            return [ufunc(args[0], args[1])]
        rows = big.reshape(-1, width)
        return [ufunc(*((rows, tiled) if target == 0 else (tiled, rows))).reshape(shape)]
    return run


def _tiled_row(constant: Optional[np.ndarray], shape: tuple) -> Optional[np.ndarray]:
    """A per-channel ``constant`` tiled along a row of a result of ``shape``, by the kernel's own rule, else None."""
    row = None if constant is None else channel_row(constant, shape)
    if row is not None:
        row.flags.writeable = False
    return row


def _clip_ufunc() -> Callable:
    """numpy's clip ufunc, the one ``ndarray.clip`` calls with two bounds (without its Python wrapper), where
    numpy 2 (``numpy._core``) or 1.x (``numpy.core``) keeps it; else np.clip, the same operation."""
    for path in ("numpy._core.umath", "numpy.core.umath"):
        try:
            return importlib.import_module(path).clip
        except (ImportError, AttributeError):
            continue
    return np.clip


clip_ufunc = _clip_ufunc()


def _clamp(lo: np.float32, hi: np.float32) -> Kernel:
    """CLAMP's plain case, written into its operand."""
    def run(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        x = args[0]
        return [x.clip(lo, hi, out=x)]     # the method: np.clip's ufunc without its dispatch (3 us a call)
    return run


def clamp_bounds(op: Operation) -> Optional[tuple]:
    """``(min_val, max_val)`` as float32 when CLAMP's kernel is one ``np.clip``, else None."""
    a = op.attrs
    lo, hi = np.float32(a.min_val), np.float32(a.max_val)
    if a.nan_mode != "PROPAGATE" or hi == 0 or math.isnan(lo) or math.isnan(hi) or hi < lo:
        return None
    return lo, hi


def inplace_kernel(step: Step, owned: dict, constants: dict) -> Optional[Kernel]:
    """The in-place kernel of ``step``, or None; ``owned`` maps each value whose array no other value
    shares to its static shape (plan.py works it out from the checked first run); ``constants`` holds
    the kept constants' arrays by name."""
    kind, op = step.opdef.name, step.op

    def free(name: str, shape: tuple) -> bool:
        return name in step.release and owned.get(name) == shape

    if not step.trusted or len(step.results) != 1 or step.results[0].dtype != _F32:
        return None
    if any(v.type.dtype.numpy != _F32 for v in op.operands):
        return None
    shape = step.results[0].shape
    if kind in _UFUNCS:
        for index, name in enumerate(step.operands):
            if free(name, shape):
                tiled = _tiled_row(constants.get(step.operands[1 - index]), shape)
                if tiled is not None:
                    return _binary_rows(_UFUNCS[kind], index, tiled)
                return _binary(_UFUNCS[kind], index)
        return _fresh_binary(_UFUNCS[kind], step.operands, constants, shape)
    if kind == "CLAMP" and free(step.operands[0], shape):
        bounds = clamp_bounds(op)
        return None if bounds is None else _clamp(*bounds)
    return None


def produces_fresh(step: Step) -> bool:
    """True for a step whose kernel makes new arrays (its results still checked against its operands)."""
    return step.opdef.name in _FRESH


def keeps_operands(step: Step) -> bool:
    """True for a step that may hold on to an operand beyond its results: state writes and regions."""
    return step.opdef.name.startswith("VARIABLE") or bool(op_regions(step.op))
