"""Converters for onnxruntime's com.microsoft Gelu family and BiasAdd.

Definitions from onnxruntime's contrib op schemas and CPU kernels:

* Gelu: ``0.5 x (1 + erf(x / sqrt 2))``, ONNX Gelu's exact form.
* BiasGelu: that Gelu of ``A + B`` (B a 1-D bias on the last axis).
* FastGelu: the tanh approximation ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``
  of ``x = X + bias`` (bias optional), ONNX Gelu's "tanh" form.
* QuickGelu: ``x * sigmoid(alpha x)``, alpha 1.702 by default.
* BiasAdd: ``X + bias + skip`` (bias 1-D on the channel axis).

The Gelu forms are built by ONNX Gelu's converter (opset 20), so both
importers' users of Gelu share one lowering.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ....ir.ops import Op
from ....lowering.typed import mul
from ..ms_domain import MS
from ..registry import converter
from .qlinear_base import run_float

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader

GELU_OPSET = 20


def _biased(ctx: ImportContext, node: NodeReader) -> Value:
    """Input 0, plus input 1 when the node has it."""
    x = ctx.tensor(node.inputs[0])
    return ctx.b.emit(Op.ADD, x, ctx.tensor(node.input(1))) if node.input(1) else x


def _gelu(ctx: ImportContext, node: NodeReader, x: Value, approximate: str) -> Converted:
    return run_float(ctx, node, "Gelu", [x], {"approximate": approximate}, opset=GELU_OPSET)


@converter("Gelu", since=1, domain=MS)
def convert_ms_gelu(ctx: ImportContext, node: NodeReader) -> Converted:
    return _gelu(ctx, node, ctx.tensor(node.inputs[0]), "none")


@converter("BiasGelu", since=1, domain=MS)
def convert_bias_gelu(ctx: ImportContext, node: NodeReader) -> Converted:
    return _gelu(ctx, node, _biased(ctx, node), "none")


@converter("FastGelu", since=1, domain=MS)
def convert_fast_gelu(ctx: ImportContext, node: NodeReader) -> Converted:
    return _gelu(ctx, node, _biased(ctx, node), "tanh")


@converter("QuickGelu", since=1, domain=MS)
def convert_quick_gelu(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    scaled = mul(ctx, x, ctx.b.scalar_like(node.attr("alpha"), x.type))
    return mul(ctx, x, ctx.b.emit(Op.SIGMOID, scaled))


@converter("BiasAdd", since=1, domain=MS)
def convert_bias_add(ctx: ImportContext, node: NodeReader) -> Converted:
    return ctx.b.emit(Op.ADD, _biased(ctx, node), ctx.tensor(node.inputs[2]))
