"""Kernels of the control-flow ops: each runs its regions with :func:`run_region`.

COND_IF runs the branch its bool condition picks (TOSA 1.0 chapter "Control
flow"); IF does the same with an Index condition (the helper an ONNX If on a
shape comparison becomes). WHILE_LOOP runs its body while its cond graph
returns true. LOOP is ONNX Loop and Scan before the trip count is bound: each
iteration passes the 1-based iteration number, the condition, the state, one
slice of each scan input (from the end of the axis for a reverse scan) and the
captured values; the scan outputs are stacked along their axes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir.region_rules import loop_groups
from .evaluator import run_region

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext, KernelValue


def truth(condition: KernelValue) -> bool:
    array = np.asarray(condition)
    if array.size != 1:
        raise ValueError(f"a condition must have one element, got shape {list(array.shape)}")
    return bool(array.reshape(-1)[0])


def cond_if(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    taken = op.attrs.then_graph if truth(args[0]) else op.attrs.else_graph
    return run_region(taken, list(args[1:]), ctx.bindings)


def index_if(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    if int(args[0]) not in (0, 1):
        raise ValueError(f"IF's condition must be 0 or 1, got {args[0]}")
    taken = op.attrs.then_graph if int(args[0]) else op.attrs.else_graph
    return run_region(taken, list(args[1:]), ctx.bindings)


def while_loop(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    carried = list(args)
    while truth(run_region(op.attrs.cond_graph, carried, ctx.bindings)[0]):
        carried = run_region(op.attrs.body_graph, carried, ctx.bindings)
    return carried


def loop(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    a = op.attrs
    groups = loop_groups(list(args[1:]), a)
    cond = groups["cond"][0] if a.has_cond else None
    state, stacks = list(groups["state"]), [[] for _ in a.scan_output_axes]
    for k in range(int(args[0])):
        if cond is not None and not truth(cond):
            break
        slices = [scan_slice(x, axis, k, rev) for x, axis, rev
                  in zip(groups["scan"], a.scan_input_axes, a.scan_input_reverse)]
        head = [k + 1] + ([cond] if a.has_cond else [])
        outs = run_region(a.body, head + state + slices + groups["captured"], ctx.bindings)
        if a.has_cond:
            cond, outs = outs[0], outs[1:]
        state = outs[:a.num_state]
        for stack, out in zip(stacks, outs[a.num_state:]):
            stack.append(out)
    return state + [stack_outputs(s, axis, rev) for s, axis, rev
                    in zip(stacks, a.scan_output_axes, a.scan_output_reverse)]


def scan_slice(x: KernelValue, axis: int, k: int, reverse: int) -> np.ndarray:
    """Slice ``k`` of a scan input along ``axis`` (counted from the end for a reverse scan)."""
    x = np.asarray(x)
    index = x.shape[axis] - 1 - k if reverse else k
    if not 0 <= index < x.shape[axis]:
        raise ValueError(f"scan input of length {x.shape[axis]} has no slice {k}")
    return np.take(x, index, axis=axis)


def stack_outputs(slices: list, axis: int, reverse: int) -> np.ndarray:
    if not slices:
        raise ValueError("the loop ran no iterations, so its scan output would be empty "
                         "(TOSA dims are >= 1)")
    return np.stack(slices[::-1] if reverse else slices, axis=axis)
