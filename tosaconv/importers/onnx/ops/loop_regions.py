"""ONNX Loop and Scan as a LOOP op: the body converted once, as a region.

When the trip count is known only from input shapes (or tensor data), the
body becomes a region with an Index input for the 1-based iteration number (a
symbol, so the body's shapes may depend on it) and the LOOP op unrolls it
when the graph is specialized (:mod:`tosaconv.passes.decay_control`); the
interpreter runs it as a loop. A loop-carried value must keep its type from
one iteration to the next, and a scan output's shape must not depend on the
iteration, since the region is typed once for all iterations. A condition
computed in the body makes the number of iterations a data-dependent symbol.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....ir.region_rules import same_type
from ....ir.types import IndexType
from ....lowering.control import bool_scalar
from ....lowering.dims import index_for, index_op
from ....symbolic.expr import free_symbols
from ....symbolic.scope import ExtentKind, SymbolInfo
from ..context import ShapeTensor
from ....lowering.limits import Limit, LimitKind
from ..reader import ConvertError
from ..registry import publish
from ..subgraph import RegionContext, convert_body
from ....lowering.context import as_const

if TYPE_CHECKING:
    import onnx
    from ....ir.graph import Value
    from ....ir.types import TensorType
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader

MAX_TRIP = 2**31 - 1   # a Loop without a trip count runs until its condition stops it


LOOP_VARYING_STATE = publish("Loop", Limit(
    "state-shape-varies", LimitKind.INPUT, "M or cond",
    ("computed from tensor data at run time while a loop-carried value changes shape between iterations",),
    "tosaconv carries values of one type through a TOSA loop, and unrolls a loop whose state changes shape, "
    "which needs the iteration count at import", "make the trip count a constant"))


def convert_loop_region(ctx: ImportContext, node: NodeReader, body: onnx.GraphProto, n_state: int) -> list:
    trip = _trip_index(ctx, node)
    r = RegionContext(ctx, body, "body")
    it = _iteration_input(ctx, r, node, trip.type.value if _has_trip_count(ctx, node) else None)
    names = [i.name for i in body.input]
    r.values[names[0]] = ShapeTensor([index_op(r, Op.INDEX_SUB, it, r.index(1))], scalar=True)
    head, cond_in = [], None
    if node.input(1) is not None:
        head = [bool_scalar(ctx, ctx.tensor(node.inputs[1]), "the Loop's condition")]
        cond_in = r.values[names[1]] = r.add_input(names[1], head[0].type)
    else:
        r.set_const(names[1], np.array(True))  # without a condition input, the body's is ignored
    state = [ctx.to_tensor(ctx.lookup(n)) for n in node.inputs[2:]]
    known = _convert(r, body, names[2:], [v.type for v in state])
    outs = [(o.name, r.lookup(o.name)) for o in body.output]
    cond_out = [bool_scalar(r, r.to_tensor(outs[0][1]), "the Loop body's condition")] if head else []
    n_scan = len(outs) - 1 - n_state
    _finish(r, [(outs[0][0], c) for c in cond_out], outs[1:1 + n_state], outs[1 + n_state:], state, known,
            LOOP_VARYING_STATE)
    runs_all = _runs_every_iteration(ctx, node, cond_in, cond_out)
    iterations = trip.type.value if runs_all else _iterations_symbol(ctx, node, trip)
    attrs = A.LoopAttrs(r.graph, n_state, (), (), (0,) * n_scan, (0,) * n_scan, (iterations,), bool(head))
    outs = ctx.b.create(Op.LOOP, [trip] + head + state + r.captures, attrs).results
    if not runs_all and n_scan:
        _define_iterations(ctx, iterations, outs[n_state])
    return outs


def _define_iterations(ctx: ImportContext, iterations: Dim, scan_out: Value) -> None:
    """A data-dependent iteration count is the scan outputs' length: give its symbol that Index value
    (GET_DIM of a scan output), so sizes computed from it downstream (a ReverseSequence over the
    stacked steps, a Range up to the count) have a value to compute from, and fold once the loop unrolls."""
    (name,) = free_symbols(iterations)
    ctx.symbol_values[name] = ctx.b.get_dim(scan_out, 0)


def convert_scan_region(ctx: ImportContext, node: NodeReader, body: onnx.GraphProto, n_state: int, length: Dim, in_axes: Sequence[int], in_rev: Sequence[int], out_axes: Sequence[int], out_rev: Sequence[int]) -> list:
    trip = index_for(ctx, length)
    r = RegionContext(ctx, body, "body")
    _iteration_input(ctx, r, node, length)
    names = [i.name for i in body.input]
    state = [ctx.to_tensor(ctx.lookup(n)) for n in node.inputs[:n_state]]
    scans = [ctx.to_tensor(ctx.lookup(n)) for n in node.inputs[n_state:]]
    slices = [x.type.with_shape(x.type.shape[:a] + x.type.shape[a + 1:]) for x, a in zip(scans, in_axes)]
    known = _convert(r, body, names, [v.type for v in state] + slices)
    outs = [(o.name, r.lookup(o.name)) for o in body.output]
    pieces = _finish(r, [], outs[:n_state], outs[n_state:], state, known)
    axes = tuple(a + t.type.rank + 1 if a < 0 else a for a, t in zip(out_axes, pieces))
    attrs = A.LoopAttrs(r.graph, n_state, tuple(in_axes), tuple(in_rev), axes, tuple(out_rev), (length,))
    return ctx.b.create(Op.LOOP, [trip] + state + scans + r.captures, attrs).results


def _has_trip_count(ctx: ImportContext, node: NodeReader) -> bool:
    """False when the Loop has no trip count, or only INT64_MAX's "none" (tf2onnx's while loops write it
    next to the condition that really ends them)."""
    if node.input(0) is None:
        return False
    c = ctx.const(node.inputs[0])
    return not (node.input(1) is not None and c is not None and c.size == 1 and int(c.reshape(-1)[0]) > MAX_TRIP)


def _trip_index(ctx: ImportContext, node: NodeReader) -> Value:
    """The trip count as an Index value (from shapes, or read from data with EXTRACT_DIM)."""
    if not _has_trip_count(ctx, node):
        return ctx.index(MAX_TRIP)
    st = ctx.dims(node.inputs[0])
    if len(st.dims) != 1:
        raise ConvertError(f"the trip count '{node.inputs[0]}' must hold one element")
    return st.dims[0]


def _iteration_input(ctx: ImportContext, r: RegionContext, node: NodeReader, bound: Optional[Dim]) -> Value:
    """The region's first input: the 1-based iteration number, a symbol of its own."""
    scope = ctx.graph.scope
    name = scope.fresh_name(f"{node.name}.iteration")
    d = scope.declare(SymbolInfo(name, f"the 1-based iteration number of {node.location}", ExtentKind.EXACT,
                                 bound, data_dependent=True))
    v = r.add_input(name, IndexType(d))
    r.symbol_values[name] = v
    return v


def _convert(r: RegionContext, body: onnx.GraphProto, names: Sequence[str], types: Sequence[TensorType]) -> set:
    """Add region inputs for the state (and scan slices), convert the body; returns the symbols known
    before it (a scan slice's shape may not use any symbol the body makes)."""
    for name, t in zip(names, types):
        r.values[name] = r.add_input(name, t)
    known = set(r.graph.scope.symbols) - {r.graph.inputs[0].name}
    convert_body(r, body)
    return known


def _finish(r: RegionContext, cond: list, state_out: list, scan_out: list, state: list, known: set, varying: Optional[Limit] = None) -> list:
    """Set the region's outputs (each list holds ``(name, value)``), checking that the state keeps its
    types and that no scan slice's shape depends on the iteration; returns the scan slices. A state
    whose type changes is refused from the published limit ``varying`` when the op has one."""
    state_t = [(n, r.to_tensor(h)) for n, h in state_out]
    for (name, t), s in zip(state_t, state):
        if not same_type(t.type, s.type):
            detail = f"loop-carried value '{name}' changes from {s.type} to {t.type} between iterations"
            if varying is not None:
                raise varying.refuse(detail)
            raise ConvertError(f"{detail}; tosaconv carries values of one type unless it unrolls the loop at "
                               "import (a constant trip count)")
    scan_t = [(n, r.to_tensor(h)) for n, h in scan_out]
    for name, t in scan_t:
        if not t.type.symbols() <= known:
            raise ConvertError(
                f"scan output '{name}' has type {t.type}, whose shape changes with the iteration; ONNX "
                "stacks slices of one shape, and tosaconv must know that shape before unrolling")
    pairs = cond + state_t + scan_t
    r.graph.set_outputs([v for _, v in pairs], [n for n, _ in pairs])
    return [t for _, t in scan_t]


def _runs_every_iteration(ctx: ImportContext, node: NodeReader, cond_in: Optional[Value], cond_out: list) -> bool:
    """True when the condition cannot stop the loop early (absent, or constant true throughout)."""
    if not cond_out:
        return True
    initial = as_const(ctx.lookup(node.inputs[1]))
    stays = cond_out[0] is cond_in or _is_true(as_const(cond_out[0]))
    return _is_true(initial) and stays


def _is_true(c: Optional[np.ndarray]) -> bool:
    return c is not None and c.size == 1 and bool(np.asarray(c).reshape(-1)[0])


def _iterations_symbol(ctx: ImportContext, node: NodeReader, trip: Value) -> Dim:
    """How many iterations run when the condition may stop early: known only when it runs."""
    scope = ctx.graph.scope
    name = scope.fresh_name(f"{node.name}.iterations")
    bound = None if node.input(0) is None else trip.type.value
    return scope.declare(SymbolInfo(name, f"the number of iterations {node.location} runs (data-dependent)",
                                    ExtentKind.EXACT, bound, data_dependent=True))
