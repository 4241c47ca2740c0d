"""Tensors a TFLite IF/WHILE subgraph reads from an enclosing subgraph (implicit captures).

A TFLite subgraph normally receives everything it reads through its inputs.
Models converted through onnx-tf can break that rule: an ONNX If branch reads
an enclosing value by name, and the branch subgraph ends up with a tensor of
that name (``.../Squeeze``) that it neither receives, computes, nor holds as a
constant. LiteRT cannot run such a branch ("Input tensor lacks data"), but the
meaning is clear, so tosaconv resolves it as the ONNX importer resolves
enclosing names: such a *free* tensor takes the value of the tensor of the
same name that the calling subgraph (or one enclosing it) has computed before
the calling op. An inlined subgraph uses that value directly. A region
(COND_IF branch, WHILE_LOOP cond or body) gets it as an extra region input,
listed in the child context's ``captures`` (the region op's trailing
operands, aligned across the op's regions by :func:`align_captures`);
constants are copied in instead. A free tensor that no enclosing subgraph
has computed is an error naming the subgraph, the tensor and the op.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

from ...ir.graph import fresh_name
from ...lowering.context import as_const
from .reader import ConvertError

if TYPE_CHECKING:
    import numpy as np
    from ...ir.graph import Value
    from ...lowering.context import ShapeTensor
    from .context import TfliteContext
    from .reader import Subgraph


def free_keys(ctx: TfliteContext, sub: Subgraph) -> list:
    """Keys of the tensors ``sub`` reads (or returns) that it neither receives, computes nor holds as data."""
    produced = {o for op in sub.ops for o in op.outputs} | set(sub.inputs)
    used = [i for op in sub.ops for i in op.inputs] + list(sub.outputs)
    out = []
    for i in used:
        if i < 0 or i in produced or sub.tensors[i].data is not None or sub.tensors[i].is_variable:
            continue
        if ctx.keys[i] not in out:
            out.append(ctx.keys[i])
    return out


def bind_free_tensors(ctx: TfliteContext, sub: Subgraph, caller: str) -> None:
    """Give each free tensor of ``sub`` the value of the enclosing tensor of the same name."""
    for key in free_keys(ctx, sub):
        name = ctx.infos[key].name
        held = outer_value(ctx, name)
        if held is None:
            raise ConvertError(f"subgraph '{sub.name}' (called by {caller}) reads tensor '{name}', which it neither "
                               "receives as an input, computes, nor holds as a constant, and no enclosing subgraph "
                               "computes a tensor of that name before the call")
        ctx.bind(key, held)


def _own_value(ctx: TfliteContext, name: str) -> Optional[Union[Value, ShapeTensor, np.ndarray]]:
    """What ``ctx``'s own tensor called ``name`` holds, when it has been computed (else None)."""
    for key, info in ctx.infos.items():
        if info.name == name and ctx.has(key):
            return ctx.lookup(key)
    return None


def outer_value(ctx: TfliteContext, name: str) -> Optional[Union[Value, ShapeTensor, np.ndarray]]:
    """``name`` as an enclosing subgraph holds it, seen from ``ctx`` (captured when ``ctx`` is a region)."""
    enclosing = getattr(ctx, "enclosing", None)
    if enclosing is None:
        return None
    held = _own_value(enclosing, name)
    if held is None:
        held = outer_value(enclosing, name)
    if held is None or ctx.graph is enclosing.graph:
        return held
    return _capture(ctx, enclosing, held)


def _capture(ctx: TfliteContext, enclosing: TfliteContext, held: Union[Value, ShapeTensor, np.ndarray]) -> Union[np.ndarray, Value]:
    """``held`` (of ``enclosing``) inside ``ctx``'s region: a copied constant, or a new region input."""
    c = as_const(held)
    if c is not None:
        return c
    v = enclosing.to_tensor(held)
    if id(v) not in ctx.captured:
        ctx.captured[id(v)] = ctx.graph.add_input(fresh_name(v.name or "capture", set(ctx.graph._names)), v.type)
        ctx.captures.append(v)
    return ctx.captured[id(v)]


def align_captures(regions: list) -> list:
    """One operand list for the captures of all ``regions`` (child contexts of one op): each region's
    trailing inputs are reordered to it, with unused inputs for what another region captured."""
    operands, seen = [], set()
    for r in regions:
        for v in r.captures:
            if id(v) not in seen:
                seen.add(id(v))
                operands.append(v)
    for r in regions:
        explicit = r.graph.inputs[:len(r.graph.inputs) - len(r.captures)]
        inner = [r.captured.get(id(v)) or r.graph.add_input(fresh_name(v.name or "capture", set(r.graph._names)),
                                                            v.type) for v in operands]
        r.graph.inputs = explicit + inner
        r.captures = list(operands)
    return operands
