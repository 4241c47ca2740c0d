"""Converters for ONNX NonZero and Compress: outputs whose size depends on data.

A constant input folds at import. Otherwise NonZero becomes the
data-dependent NONZERO op, whose column count is a fresh symbol: Exact (it is
the true count) and data-dependent, with the input's size as its bound, and
origin ``NonZero '<name>' output axis 1``. It decays at specialization when
binding made its input a constant, or when the count is bound as an
assumption (``--bind NAME.1=K``, checked when the program runs); otherwise
specialization reports that the count of non-zeros is only known when the
model runs. The symbolic program still runs in the interpreter.
Compress is a GATHER along its axis (of the flattened input when no axis is
given) of the positions NonZero finds in the condition.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.dims import norm_axis, reshape
from ....lowering.gather import take
from ....symbolic.constraints import Kind
from ....symbolic.expr import product
from ....symbolic.scope import ExtentKind, SymbolInfo
from ..reader import ConvertError
from ....lowering.limits import Limit, LimitKind, size_from_data
from ..registry import converter, publish

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader


_NONZERO_DATA, NONZERO_SCALAR = publish(
    "NonZero", size_from_data("X"),
    Limit("scalar", LimitKind.INPUT, "X", ("of rank 0",), "the result would have a 0 dim, which TOSA does not allow",
          "give X rank 1 or more"))
publish("Compress", size_from_data("condition"))


@converter("NonZero", since=9)
def convert_nonzero(ctx: ImportContext, node: NodeReader) -> Converted:
    c = ctx.const(node.inputs[0])
    if c is not None:
        return _constant_coords(np.asarray(c), ctx)
    x = ctx.tensor(node.inputs[0])
    if x.type.rank < 1:
        raise NONZERO_SCALAR.refuse("NonZero of a scalar")
    return nonzero(ctx, x, f"{node.outputs[0]}.1", f"NonZero '{node.name}' output axis 1")


def nonzero(ctx: ImportContext, x: Value, base: str, origin: str) -> Value:
    """NONZERO of ``x`` with a new symbol for its count: Exact, data-dependent, bounded by x's size."""
    scope = ctx.graph.scope
    name = scope.fresh_name(base)
    scope.declare(SymbolInfo(name, f"{origin} (the count of non-zeros, data-dependent)",
                             ExtentKind.EXACT, bound=product(x.type.shape), data_dependent=True))
    out = ctx.b.emit(Op.NONZERO, x, attrs=A.NonZeroAttrs(name))
    ctx.symbol_values[name] = ctx.b.get_dim(out, 1)
    return out


def _constant_coords(c: np.ndarray, ctx: ImportContext) -> Value:
    coords = np.array(np.nonzero(c), dtype=np.int32)
    if c.ndim == 0 or coords.shape[1] == 0:
        raise ConvertError("NonZero of this constant has an empty result, which TOSA does not allow")
    return ctx.b.const(coords)


@converter("Compress", since=9)
def convert_compress(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    axis = node.attr("axis", None)
    if axis is None:
        x, axis = reshape(ctx, x, [product(x.type.shape)]), 0
    axis = norm_axis(axis, x.type.rank)
    cond = ctx.const(node.inputs[1])
    if cond is not None:
        picked = np.nonzero(np.asarray(cond).reshape(-1))[0]
        if picked.size == 0:
            raise ConvertError("Compress with an all-false condition has an empty output, which TOSA does not allow")
        return take(ctx, x, axis, ctx.b.const(picked.astype(np.int32)))
    cond = ctx.tensor(node.inputs[1])
    if cond.type.rank != 1:
        raise ConvertError(f"Compress condition must be 1-D, got rank {cond.type.rank}")
    ctx.require(Kind.GE, x.type.shape[axis], cond.type.shape[0], "Compress condition is no longer than the axis")
    coords = nonzero(ctx, cond, f"{node.outputs[0]}.{axis}", f"Compress '{node.name}' output axis {axis}")
    positions = reshape(ctx, coords, [coords.type.shape[1]])
    return take(ctx, x, axis, positions)

