"""TFLite IF and WHILE: COND_IF and WHILE_LOOP over converted subgraphs.

IF passes its operands after the condition to the then or else subgraph.
A condition known at import (a constant) decides the op here: only the taken
branch is converted, inline, so its constants and shape tensors stay what
they are. Otherwise both branches become COND_IF regions, which must return
the same types (TOSA runs either). WHILE carries its operands through the
body subgraph while the cond subgraph returns true; it becomes a WHILE_LOOP
whose carried values keep one type, so a body that changes a shape (TFLite
allows that, resizing tensors at run time) is refused. Both ops are
encoding-agnostic (``form="any"``): quantized operands just pass through.
Tensors a subgraph reads from an enclosing one (:mod:`..captures`) become
trailing COND_IF operands, or extra WHILE_LOOP values the body passes on.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ....ir import attrs as A
from ....ir.ops import Op
from ....ir.region_rules import same_type
from ....lowering.control import bool_scalar, results
from ..captures import align_captures
from ..reader import ConvertError
from ..registry import converter
from ..subgraph import called_subgraphs, inline_subgraph, region_subgraph

if TYPE_CHECKING:
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import Subgraph


def _operands(node: OpReader, start: int) -> list:
    keys = node.inputs[start:]
    if any(k is None for k in keys):
        raise ConvertError(f"{node.op_type} has an omitted (-1) operand; every operand must be a tensor")
    return keys


def _check_outputs(node: OpReader, subs: Sequence[Subgraph]) -> None:
    for sub in subs:
        if len(sub.outputs) != len(node.outputs):
            raise ConvertError(f"subgraph '{sub.name}' returns {len(sub.outputs)} values for the "
                               f"{len(node.outputs)} outputs of {node.op_type}")


@converter("IF", options="IfOptions", form="any")
def convert_if(ctx: TfliteContext, node: OpReader) -> Converted:
    branches = called_subgraphs(ctx.model, ctx.sub, node.info)
    _check_outputs(node, branches)
    operands = _operands(node, 1)
    c = ctx.const(node.inputs[0])
    if c is not None:
        if c.size != 1:
            raise ConvertError(f"the condition '{node.inputs[0]}' must hold one element, it has shape {list(c.shape)}")
        taken = branches[0] if bool(c.reshape(-1)[0]) else branches[1]
        return results(ctx, node.outputs, inline_subgraph(ctx, taken, operands))
    cond = bool_scalar(ctx, ctx.tensor(node.inputs[0]), f"the condition '{node.inputs[0]}'")
    values = [ctx.tensor(k) for k in operands]
    types = [v.type for v in values]
    regions = [region_subgraph(ctx, sub, types, name) for sub, name in zip(branches, ("then", "else"))]
    captured = align_captures(regions)
    then_g, else_g = (r.graph for r in regions)
    for key, a, b in zip(node.outputs, then_g.outputs, else_g.outputs):
        if not same_type(a.type, b.type):
            raise ConvertError(f"the branches return {a.type} and {b.type} for '{key}'; TOSA COND_IF needs both "
                               "branches to return the same type")
    return ctx.b.create(Op.COND_IF, [cond] + values + captured, A.CondIfAttrs(then_g, else_g)).results


@converter("WHILE", options="WhileOptions", form="any")
def convert_while(ctx: TfliteContext, node: OpReader) -> Converted:
    cond_sub, body_sub = called_subgraphs(ctx.model, ctx.sub, node.info)
    _check_outputs(node, [body_sub])
    carried = [ctx.tensor(k) for k in _operands(node, 0)]
    if len(carried) != len(node.outputs):
        raise ConvertError(f"WHILE carries {len(carried)} values but has {len(node.outputs)} outputs")
    types = [v.type for v in carried]
    cond_r = region_subgraph(ctx, cond_sub, types, "cond", condition=True)
    body_r = region_subgraph(ctx, body_sub, types, "body")
    captured = align_captures([cond_r, body_r])
    cond_g, body_g = cond_r.graph, body_r.graph
    for key, t, out in zip(node.outputs, types, body_g.outputs):
        if not same_type(t, out.type):
            raise ConvertError(
                f"the body changes loop value '{key}' from {t} to {out.type}; TOSA WHILE_LOOP carries values of "
                "one type, so loops whose shapes change between iterations (data-dependent shapes) are not "
                "supported")
    if captured:   # what the regions read from outside rides along unchanged as extra loop values
        passed = body_g.inputs[len(carried):]
        body_g.set_outputs(list(body_g.outputs) + passed, body_g.output_names + [v.name for v in passed])
    return ctx.b.create(Op.WHILE_LOOP, carried + captured,
                        A.WhileLoopAttrs(cond_g, body_g)).results[:len(carried)]
