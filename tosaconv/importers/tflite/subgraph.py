"""TFLite subgraphs: which ones a model reaches, and child contexts that convert them.

IF names a then and an else subgraph, WHILE a cond and a body subgraph, and
CALL_ONCE an init subgraph (:data:`CALLED`). Unlike ONNX bodies, a TFLite
subgraph sees nothing of its caller: it has its own tensors, and the caller
passes values in through the subgraph's inputs. So a child context is just a
:class:`TfliteContext` over the subgraph, in one of two forms:

* :func:`inline_subgraph` converts it into the caller's graph (same builder):
  a branch decided at import. Its inputs hold what the caller's operands
  hold, so constants and shape tensors stay what they are.
* :func:`region_subgraph` converts it into a new region graph whose inputs
  are typed like the caller's operands (COND_IF branches, WHILE_LOOP's cond
  and body).

Both share the caller's resource-variable table, so a body sees the
model's variables (:mod:`.ops.variables` refuses to use them inside a region).
A tensor a subgraph reads without receiving it (onnx-tf's implicit captures)
takes the value of the enclosing tensor of that name (:mod:`.captures`); a
region returns its context, whose ``captures`` the op passes as trailing
operands.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Union

from ...ir.graph import fresh_name
from .context import TfliteContext
from .node import OpReader
from .reader import ConvertError

if TYPE_CHECKING:
    from ...ir.graph import Graph
    from .reader import OpInfo, Subgraph, TfliteModel

# op -> (options table, the fields naming the subgraphs it calls)
CALLED = {
    "IF": ("IfOptions", ("ThenSubgraphIndex", "ElseSubgraphIndex")),
    "WHILE": ("WhileOptions", ("CondSubgraphIndex", "BodySubgraphIndex")),
    "CALL_ONCE": ("CallOnceOptions", ("InitSubgraphIndex",)),
}


def called_subgraphs(model: TfliteModel, sub: Union[Subgraph, TfliteModel], op: OpInfo) -> list:
    """The Subgraphs ``op`` (of subgraph ``sub``) calls, in option order (none for most ops)."""
    if op.custom or op.op_type not in CALLED:
        return []
    options, fields = CALLED[op.op_type]
    node = OpReader(op, [t.name for t in sub.tensors], sub.tensors, options)
    out = []
    for f in fields:
        k = node.opt(f)
        if not 0 <= k < len(model.graphs) or k == 0:
            raise ConvertError(f"{op.op_type} '{node.name}' calls subgraph {k}, but the model has subgraphs "
                               f"1 to {len(model.graphs) - 1} besides the main one")
        out.append(model.graphs[k])
    return out


def reachable_subgraphs(model: TfliteModel) -> list:
    """The main subgraph and every subgraph reached from it through IF, WHILE and CALL_ONCE."""
    if not model.graphs:
        return [model]
    order, seen = [model.graphs[0]], {0}
    for sub in order:
        for op in sub.ops:
            for called in called_subgraphs(model, sub, op):
                if called.index not in seen:
                    seen.add(called.index)
                    order.append(called)
    return order


def _child(parent: TfliteContext, sub: Subgraph, graph: Graph) -> TfliteContext:
    ctx = TfliteContext(graph, parent.model, sub)
    ctx.custom_options = getattr(parent, "custom_options", {})
    ctx.variables, ctx.once = parent.variables, parent.once
    ctx.in_region, ctx.init_mode = parent.in_region, parent.init_mode
    ctx.enclosing = parent
    ctx.captures, ctx.captured = [], {}   # enclosing values a region reads, and their region inputs
    return ctx


def inline_subgraph(parent: TfliteContext, sub: Subgraph, operands: list) -> list:
    """Convert ``sub`` into the caller's graph with its inputs holding the caller's ``operands`` (keys);
    what each of its outputs holds (Value, ShapeTensor or numpy constant)."""
    from .driver import convert_ops   # the driver imports the converters, which import this module
    from .captures import bind_free_tensors   # here: most models have no subgraph (start-up, issue 13)
    _check_arity(sub, operands)
    ctx = _child(parent, sub, parent.graph)
    ctx.b = parent.b
    ctx.symbol_values, ctx.index_cache = parent.symbol_values, parent.index_cache
    for i, key in zip(sub.inputs, operands):
        ctx.bind(ctx.keys[i], parent.lookup(key))
    bind_free_tensors(ctx, sub, _caller(parent))
    convert_ops(ctx, sub.ops)
    return [ctx.lookup(ctx.keys[o]) for o in sub.outputs]


def region_subgraph(parent: TfliteContext, sub: Subgraph, types: list, name: str, condition: bool = False) -> TfliteContext:
    """Convert ``sub`` into a new region graph whose inputs have ``types``, then the values it captures;
    returns its context (``.graph`` has its outputs set to the subgraph's outputs, as tensors; with
    ``condition``, its one output must be a one-element bool and is returned as the rank-0 tensor
    WHILE_LOOP's cond graph gives; ``.captures`` are the enclosing values behind its trailing inputs)."""
    from .driver import convert_ops
    from .captures import bind_free_tensors
    from ...lowering.control import bool_scalar
    _check_arity(sub, types)
    ctx = _child(parent, sub, parent.graph.region_shell(name))
    ctx.in_region = True
    ctx.b.location = parent.b.location
    for i, t in zip(sub.inputs, types):
        key = ctx.keys[i]
        ctx.values[key] = ctx.graph.add_input(fresh_name(key, set(ctx.graph._names)), t)
    bind_free_tensors(ctx, sub, _caller(parent))
    convert_ops(ctx, sub.ops)
    outs = [ctx.to_tensor(ctx.lookup(ctx.keys[o])) for o in sub.outputs]
    if condition:
        if len(outs) != 1:
            raise ConvertError(f"the cond subgraph '{sub.name}' returns {len(outs)} values; it must return one bool")
        outs = [bool_scalar(ctx, outs[0], f"the value the cond subgraph '{sub.name}' returns")]
    ctx.graph.set_outputs(outs, [ctx.keys[o] for o in sub.outputs])
    return ctx


def _caller(parent: TfliteContext) -> str:
    loc = parent.b.location
    return f"{loc.op_type} '{loc.name}'" if loc is not None and loc.op_type else "its caller"


def _check_arity(sub: Subgraph, operands: list) -> None:
    if len(sub.inputs) != len(operands):
        raise ConvertError(f"subgraph '{sub.name}' takes {len(sub.inputs)} inputs, but the op passes "
                           f"{len(operands)}")
