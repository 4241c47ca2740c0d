"""The ONNX If converter, and helpers the Loop and Scan converters share.

An If whose condition is an import-time constant, or that the scope proves
from shapes (``Shape(x)[1] > 4`` with ``x`` of dim 6), is decided here: only
the taken branch is converted, inline, so its shape tensors and constants stay
what they are. A condition that only the bindings decide becomes an IF helper
op holding both branches as regions; it decays to the taken branch when the
graph is specialized, and its results have the merged type
``c*then + (1-c)*else`` (exact for either branch); branches that return
tensors of different ranks cannot merge and are refused with what to do. A condition computed from
tensor data becomes TOSA COND_IF, whose branches must return the same types.
Sequence and optional values have no TOSA form; their ops are refused as
unsupported before conversion starts.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

from ....ir import attrs as A
from ....ir.ops import Op
from ....ir.region_rules import same_type
from ....lowering.control import bool_scalar, results
from ....lowering.dims import index_for
from ..context import ShapeTensor
from ..reader import ConvertError
from ..registry import converter
from ..subgraph import InlineContext, RegionContext, convert_body
from .condition import decide

if TYPE_CHECKING:
    import onnx
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader


@converter("If", since=1)
def convert_if(ctx: ImportContext, node: NodeReader) -> Converted:
    branches = (node.attr("then_branch"), node.attr("else_branch"))
    for body, what in zip(branches, ("then_branch", "else_branch")):
        if len(body.output) != len(node.outputs):
            raise ConvertError(f"{what} returns {len(body.output)} values for {len(node.outputs)} outputs")
    decision = decide(ctx, node.inputs[0])
    if decision is True or decision is False:
        return results(ctx, node.outputs, inline_body(ctx, branches[0 if decision else 1], {}))
    if decision is None:
        return _cond_if(ctx, node, branches)
    return _index_if(ctx, node, decision, branches)


def inline_body(ctx: ImportContext, body: onnx.GraphProto, bindings: dict) -> list:
    """Convert ``body`` into the current graph with its inputs bound; what each output holds."""
    child = InlineContext(ctx, body)
    for name, held in bindings.items():
        child.bind(name, held)
    convert_body(child, body)
    return [child.lookup(o.name) for o in body.output]


# -- If on a condition the bindings decide, or on tensor data ----------------------------

def _branch_regions(ctx: ImportContext, branches: Sequence[onnx.GraphProto], keep_shapes: bool) -> tuple:
    """Both branches as regions taking one operand list; per output, the ShapeTensor length kept."""
    regions = [RegionContext(ctx, body, name) for body, name in zip(branches, ("then", "else"))]
    outs = []
    for r, body in zip(regions, branches):
        convert_body(r, body)
        outs.append([r.lookup(o.name) for o in body.output])
    kept = [_kept_shape(a, b) if keep_shapes else None for a, b in zip(*outs)]
    for r, body, helds in zip(regions, branches, outs):
        flat = [d for held, k in zip(helds, kept) for d in (held.dims if k else [r.to_tensor(held)])]
        r.graph.set_outputs(flat, [f"{o.name}.{i}" if k else o.name for o, k in zip(body.output, kept)
                                   for i in range(k[0] if k else 1)])
    operands = _union(regions[0].captures + regions[1].captures)
    for r in regions:
        r.align_captures(operands)
    return regions, operands, kept


def _kept_shape(a: Union[Value, ShapeTensor], b: Union[Value, ShapeTensor]) -> Optional[tuple[int, bool]]:
    """Both branches return shape tensors of one form: keep them as Index values ((length, scalar))."""
    if isinstance(a, ShapeTensor) and isinstance(b, ShapeTensor) and len(a.dims) == len(b.dims) \
            and a.scalar == b.scalar and a.dims:
        return len(a.dims), a.scalar
    return None


def _union(values: list) -> list:
    seen, out = set(), []
    for v in values:
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    return out


def _index_if(ctx: ImportContext, node: NodeReader, condition: Dim, branches: Sequence[onnx.GraphProto]) -> list:
    regions, operands, kept = _branch_regions(ctx, branches, keep_shapes=True)
    _check_ranks(node, regions)
    cond = index_for(ctx, condition)
    attrs = A.CondIfAttrs(regions[0].graph, regions[1].graph)
    return _regroup(ctx.b.create(Op.IF, [cond] + operands, attrs).results, kept)


def _check_ranks(node: NodeReader, regions: Sequence[RegionContext]) -> None:
    """Refuse branches that return tensors of different ranks (torch's ``squeeze(-1)`` of a dynamic dim
    exports as ``If(Shape(x)[-1] == 1, Squeeze, Identity)``): one IR value has one rank before binding."""
    outs = [r.graph.outputs for r in regions]
    names = node.outputs if len(node.outputs) == len(outs[0]) else regions[0].graph.output_names
    for name, a, b in zip(names, *outs):
        if hasattr(a.type, "rank") and hasattr(b.type, "rank") and a.type.rank != b.type.rank:
            raise ConvertError(
                f"the branches return tensors of ranks {a.type.rank} and {b.type.rank} for '{name}' ({a.type} "
                f"and {b.type}), and which branch runs depends on the condition '{node.inputs[0]}', computed "
                "from input dims known only when they are bound; a program's tensors each have one rank. "
                "Make the inputs' "
                "dims static in the model first (python -m onnxruntime.tools.make_dynamic_shape_fixed), so "
                "that tosaconv decides the If when it imports the model")


def _regroup(values: list, kept: list) -> list:
    out, i = [], 0
    for k in kept:
        n = k[0] if k else 1
        out.append(ShapeTensor(values[i:i + n], scalar=k[1]) if k else values[i])
        i += n
    return out


def _cond_if(ctx: ImportContext, node: NodeReader, branches: Sequence[onnx.GraphProto]) -> list[Value]:
    cond = bool_scalar(ctx, ctx.tensor(node.inputs[0]), f"the condition '{node.inputs[0]}'")
    regions, operands, _ = _branch_regions(ctx, branches, keep_shapes=False)
    types = [[v.type for v in r.graph.outputs] for r in regions]
    for name, a, b in zip(node.outputs, *types):
        if not same_type(a, b):
            raise ConvertError(
                f"the branches return {a} and {b} for '{name}'; the condition '{node.inputs[0]}' is computed "
                "from tensor data, and TOSA COND_IF needs both branches to return the same shape")
    attrs = A.CondIfAttrs(regions[0].graph, regions[1].graph)
    return ctx.b.create(Op.COND_IF, [cond] + operands, attrs).results
