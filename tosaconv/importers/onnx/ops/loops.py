"""ONNX Loop and Scan: unrolled at import when the trip count is a constant.

A Loop whose trip count and condition are import-time constants, or a Scan
over an axis of static length, is unrolled here: the body is converted inline
once per iteration with the iteration number a constant, so shape tensors and
constants flow through the iterations and a carried value may change shape.
A condition computed in the body must then fold to a constant each iteration.
Scan slices each scan input along its axis (from the end for direction 1) and
stacks each scan output along its axis (reversed for direction 1), as
onnxruntime does. Everything else (a trip count from input shapes or data, a
condition that does not fold, a very long loop) becomes the LOOP op of
:mod:`.loop_regions`, unrolled when the graph is specialized.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....ir.region_rules import same_type
from ....lowering.control import results
from ....lowering.dims import norm_axis, reshape, slice_
from ....symbolic.constraints import Kind
from ..context import ShapeTensor
from ..reader import ConvertError
from ..registry import converter
from . import loop_regions
from ....lowering.context import as_const
from .control import inline_body

if TYPE_CHECKING:
    import onnx
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader

MAX_IMPORT_UNROLL = 64   # longer loops become a LOOP op (unrolled at specialization)


class _NotUnrollable(Exception):
    """The import-time unroll met something only a run or the bindings decide."""


@converter("Loop", since=1)
def convert_loop(ctx: ImportContext, node: NodeReader) -> Converted:
    body = node.attr("body")
    n_state = len(node.inputs) - 2
    if n_state < 0 or len(body.input) != 2 + n_state or len(body.output) < 1 + n_state:
        raise ConvertError(f"the body takes {len(body.input)} inputs and returns {len(body.output)} values "
                           f"for {max(n_state, 0)} loop-carried values; ONNX wants 2 + N inputs, 1 + N + K outputs")
    trip, cond = _const_scalar(ctx, node.input(0)), _const_scalar(ctx, node.input(1))
    if node.input(0) is None and node.input(1) is None:
        raise ConvertError("Loop without a trip count and without a condition never ends")
    if (node.input(0) is None or trip is not None) and (node.input(1) is None or cond is not None):
        try:
            return results(ctx, node.outputs, _unroll_loop(ctx, node, body, trip, cond))
        except _NotUnrollable:
            pass
    return loop_regions.convert_loop_region(ctx, node, body, n_state)


def _const_scalar(ctx: ImportContext, name: Optional[str]) -> Optional[Union[bool, int, float]]:
    c = None if name is None else ctx.const(name)
    if c is not None and c.size != 1:
        raise ConvertError(f"'{name}' must hold one element, it has shape {list(c.shape)}")
    return None if c is None else c.reshape(-1)[0].item()


def _unroll_loop(ctx: ImportContext, node: NodeReader, body: onnx.GraphProto, trip: Optional[Union[bool, int, float]], cond: Optional[Union[bool, int, float]]) -> list:
    names = [i.name for i in body.input]
    state = [ctx.lookup(n) for n in node.inputs[2:]]
    stacks = [[] for _ in body.output[1 + len(state):]]
    running, k = True if cond is None else bool(cond), 0
    while running and (trip is None or k < trip):
        if k >= MAX_IMPORT_UNROLL:
            raise _NotUnrollable()
        # The iteration number as a shape tensor, so index arithmetic on it stays import-time constant.
        bindings = {names[0]: ShapeTensor([ctx.index(k)], scalar=True), names[1]: np.array(running)}
        outs = inline_body(ctx, body, {**bindings, **dict(zip(names[2:], state))})
        if cond is not None:
            running = _folded_condition(outs[0])
        state = outs[1:1 + len(state)]
        for stack, out in zip(stacks, outs[1 + len(state):]):
            stack.append(out)
        k += 1
    return state + [stack_pieces(ctx, s, 0, False, o.name) for s, o in zip(stacks, body.output[1 + len(state):])]


def _folded_condition(held: Union[Value, ShapeTensor, np.ndarray]) -> bool:
    c = as_const(held)
    if c is None or c.size != 1:
        raise _NotUnrollable()
    return bool(c.reshape(-1)[0])


@converter("Scan", since=9)
def convert_scan(ctx: ImportContext, node: NodeReader) -> Converted:
    body = node.attr("body")
    m = node.attr("num_scan_inputs")
    n_state, n_out = len(node.inputs) - m, len(body.output) - (len(node.inputs) - m)
    if n_state < 0 or n_out < 0 or len(body.input) != len(node.inputs):
        raise ConvertError("the Scan body's inputs and outputs do not match num_scan_inputs and the node's inputs")
    scans = [ctx.lookup(n) for n in node.inputs[n_state:]]
    in_axes = [norm_axis(a, _rank(ctx, x)) for a, x in zip(_ints(node, "scan_input_axes", m, 0), scans)]
    in_rev = _ints(node, "scan_input_directions", m, 0)
    out_axes, out_rev = _ints(node, "scan_output_axes", n_out, 0), _ints(node, "scan_output_directions", n_out, 0)
    length = _scan_length(ctx, scans, in_axes)
    if isinstance(length, int) and length <= MAX_IMPORT_UNROLL:
        state = [ctx.lookup(n) for n in node.inputs[:n_state]]
        return results(ctx, node.outputs, _unroll_scan(ctx, body, state, scans, length, in_axes, in_rev, out_axes, out_rev))
    return loop_regions.convert_scan_region(ctx, node, body, n_state, length, in_axes, in_rev, out_axes, out_rev)


def _ints(node: NodeReader, name: str, n: int, default: int) -> list:
    values = node.attr(name, None)
    values = [default] * n if values is None else [int(v) for v in values]
    if len(values) != n:
        raise ConvertError(f"{name} has {len(values)} entries for {n} tensors")
    return values


def _rank(ctx: ImportContext, held: Union[Value, ShapeTensor, np.ndarray]) -> int:
    if isinstance(held, np.ndarray):
        return held.ndim
    if isinstance(held, ShapeTensor):
        return 0 if held.scalar else 1
    return held.type.rank


def _scan_length(ctx: ImportContext, scans: Sequence[Union[Value, ShapeTensor, np.ndarray]], axes: Sequence[int]) -> Dim:
    lengths = [_dim(x, a) for x, a in zip(scans, axes)]
    for d in lengths[1:]:
        ctx.require(Kind.EQ, lengths[0], d, "Scan inputs have one length along their scan axes")
    return lengths[0]


def _dim(held: Union[Value, ShapeTensor, np.ndarray], axis: int) -> Dim:
    if isinstance(held, np.ndarray):
        return held.shape[axis]
    if isinstance(held, ShapeTensor):
        return len(held.dims)
    return held.type.shape[axis]


def _unroll_scan(ctx: ImportContext, body: onnx.GraphProto, state: list, scans: list, length: int, in_axes: Sequence[int], in_rev: Sequence[int], out_axes: Sequence[int], out_rev: Sequence[int]) -> list:
    names, n_state = [i.name for i in body.input], len(state)
    stacks = [[] for _ in out_axes]
    for k in range(length):
        pieces = [_piece(ctx, x, a, length - 1 - k if r else k) for x, a, r in zip(scans, in_axes, in_rev)]
        outs = inline_body(ctx, body, dict(zip(names, state + pieces)))
        state = outs[:n_state]
        for stack, out in zip(stacks, outs[n_state:]):
            stack.append(out)
    outputs = body.output[n_state:]
    axes = [norm_axis(a, _rank(ctx, s[0]) + 1) if s else a for a, s in zip(out_axes, stacks)]
    return state + [stack_pieces(ctx, s, a, r, o.name) for s, a, r, o in zip(stacks, axes, out_rev, outputs)]


def _piece(ctx: ImportContext, held: Union[Value, ShapeTensor, np.ndarray], axis: int, index: int) -> Union[np.ndarray, ShapeTensor, Value]:
    """Slice ``index`` of a scan input along ``axis``, without the axis."""
    if isinstance(held, np.ndarray):
        return np.take(held, index, axis=axis)
    if isinstance(held, ShapeTensor) and not held.scalar:
        return ShapeTensor([held.dims[index]], scalar=True)
    x = ctx.to_tensor(held)
    starts = [index if i == axis else 0 for i in range(x.type.rank)]
    sizes = [1 if i == axis else d for i, d in enumerate(x.type.shape)]
    return reshape(ctx, slice_(ctx, x, starts, sizes), [d for i, d in enumerate(x.type.shape) if i != axis])


def stack_pieces(ctx: ImportContext, pieces: list, axis: int, reverse: bool, name: str) -> Union[np.ndarray, ShapeTensor, Value]:
    """One scan output: the per-iteration values stacked along ``axis`` (last first when reversed)."""
    if not pieces:
        raise ConvertError(f"the loop runs no iterations, so scan output '{name}' would be empty "
                           "(TOSA dims are >= 1)")
    pieces = pieces[::-1] if reverse else pieces
    if all(isinstance(p, np.ndarray) for p in pieces):
        return np.stack(pieces, axis=axis)
    if axis == 0 and all(isinstance(p, ShapeTensor) and p.scalar for p in pieces):
        return ShapeTensor([p.dims[0] for p in pieces])
    tensors = [ctx.to_tensor(p) for p in pieces]
    if not all(same_type(t.type, tensors[0].type) for t in tensors):
        raise ConvertError(f"scan output '{name}' changes shape across iterations "
                           f"({', '.join(str(t.type) for t in tensors[:3])}...); ONNX stacks equal shapes only")
    parts = [ctx.b.emit(Op.EXPAND_DIMS, t, attrs=A.IndicesAttrs((axis,))) for t in tensors]
    return parts[0] if len(parts) == 1 else ctx.b.emit(Op.CONCAT, *parts, attrs=A.AxisAttrs(axis))
