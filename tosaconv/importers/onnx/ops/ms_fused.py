"""Converters for onnxruntime's fused float ops: com.microsoft FusedConv, FusedGemm and FusedMatMul.

onnxruntime's optimizer writes these when it folds an activation into a
Conv or Gemm, or a Transpose and a scalar Mul into a MatMul. Each is the
plain ONNX op, built by that op's own converter (:func:`delegate`, so layout,
padding and broadcasting are decided in one place), followed by what was
fused into it:

* FusedConv: ``activation(Conv(X, W, B) + Z)``; ``activation`` is one of the
  kinds onnxruntime's kernel runs (Relu, Tanh, Sigmoid, LeakyRelu with
  ``activation_params = [alpha]``, Clip with ``[min, max]``, HardSigmoid with
  ``[alpha, beta]``); the optional sum input Z is added before it.
* FusedGemm: ``activation(Gemm(A, B, C))``, the activation's constants in
  ``activation_alpha``, ``activation_beta`` and ``activation_gamma`` (ONNX's
  defaults where absent); also Elu, Selu, Softplus, Softsign, ThresholdedRelu.
* FusedMatMul: ``alpha * op(A) @ op(B)`` with numpy batch broadcasting, where
  ``transBatchX`` moves X's first axis just before its last one and
  ``transX`` then swaps the last two (the layout onnxruntime's kernel reads,
  measured against it in the tests).

An activation onnxruntime's kernel would refuse is refused here too, naming the kinds that work.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import onnx

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.index_math import transpose
from ....lowering.typed import clamp
from ..ms_domain import MS
from ..reader import ConvertError, NodeReader
from ..registry import converter, resolve
from .qlinear_base import run_float

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext

# activation kind -> the ONNX attributes its parameters are, in order
_CONV_ACTIVATIONS = {"Relu": (), "Tanh": (), "Sigmoid": (), "LeakyRelu": ("alpha",), "HardSigmoid": ("alpha", "beta"),
                     "Clip": ("min", "max")}
_GEMM_ACTIVATIONS = {"Relu": (), "Tanh": (), "Sigmoid": (), "LeakyRelu": ("alpha",), "HardSigmoid": ("alpha", "beta"),
                     "Elu": ("alpha",), "Selu": ("alpha", "gamma"), "ThresholdedRelu": ("alpha",), "Softplus": (),
                     "Softsign": ()}


def delegate(ctx: ImportContext, node: NodeReader, op_type: str, inputs: list, attrs: dict, opset: Optional[int] = None) -> Converted:
    """The ONNX ``op_type`` on the named ``inputs`` (initializers stay constants) with ``attrs``
    (None values left out), built by its registered converter at ``opset`` (default: the model's)."""
    proto = onnx.helper.make_node(op_type, inputs, [f"{node.name}::{op_type}:out"], name=node.name)
    proto.attribute.extend(onnx.helper.make_attribute(k, v) for k, v in attrs.items() if v is not None)
    fnode = NodeReader(proto, ctx.opset if opset is None else opset)
    fn = resolve(op_type, fnode.version)
    if fn is None:
        raise ConvertError(f"{node.op_type} computes an ONNX {op_type} version {fnode.version}, which tosaconv "
                           "does not convert")
    return fn(ctx, fnode)


def activate(ctx: ImportContext, node: NodeReader, y: Value, kind: Optional[str], params: dict, allowed: dict) -> Converted:
    """``kind`` (None: no activation) on ``y`` with ``params`` by ONNX attribute name."""
    if kind is None or kind == "":
        return y
    if kind not in allowed:
        raise ConvertError(f"{node.op_type} activation '{kind}' is not one onnxruntime fuses into "
                           f"{node.op_type} (supported: {', '.join(allowed)})")
    if kind == "Clip":
        if params.get("min") is None or params.get("max") is None:
            raise ConvertError(f"{node.op_type} activation Clip needs activation_params [min, max]")
        return clamp(ctx, y, float(params["min"]), float(params["max"]))
    return run_float(ctx, node, kind, [y], {k: v for k, v in params.items() if k in allowed[kind]})


@converter("FusedConv", since=1, domain=MS)
def convert_fused_conv(ctx: ImportContext, node: NodeReader) -> Converted:
    attrs = {k: _list(node.attr(k)) for k in ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")}
    y = delegate(ctx, node, "Conv", node.inputs[:3], attrs)
    if node.input(3):
        y = ctx.b.emit(Op.ADD, y, ctx.tensor(node.input(3)))
    kind = node.attr("activation")
    names = _CONV_ACTIVATIONS.get(kind, ())
    values = list(node.attr("activation_params") or ())
    if len(values) < len(names):
        raise ConvertError(f"FusedConv activation {kind} needs activation_params {list(names)}, got {values}")
    return activate(ctx, node, y, kind, dict(zip(names, values)), _CONV_ACTIVATIONS)


@converter("FusedGemm", since=1, domain=MS)
def convert_fused_gemm(ctx: ImportContext, node: NodeReader) -> Converted:
    attrs = {k: node.attr(k) for k in ("alpha", "beta", "transA", "transB")}
    y = delegate(ctx, node, "Gemm", node.inputs, attrs)
    params = {k: node.attr(f"activation_{k}") for k in ("alpha", "beta", "gamma")}
    return activate(ctx, node, y, node.attr("activation"), {k: v for k, v in params.items() if v is not None},
                    _GEMM_ACTIVATIONS)


@converter("FusedMatMul", since=1, domain=MS)
def convert_fused_matmul(ctx: ImportContext, node: NodeReader) -> Converted:
    a = _operand(ctx, ctx.tensor(node.inputs[0]), node.attr("transBatchA"), node.attr("transA"))
    b = _operand(ctx, ctx.tensor(node.inputs[1]), node.attr("transBatchB"), node.attr("transB"))
    y = run_float(ctx, node, "MatMul", [a, b], {})
    alpha = node.attr("alpha")
    if alpha == 1.0:
        return y
    return ctx.b.emit(Op.MUL, y, ctx.b.scalar_like(alpha, y.type), attrs=A.MulAttrs(0))


def _operand(ctx: ImportContext, x: Value, trans_batch: int, trans: int) -> Value:
    rank = x.type.rank
    perm = list(range(rank))
    if trans_batch and rank > 2:
        perm = perm[1:rank - 1] + [0, rank - 1]
    if trans and rank >= 2:
        perm[-2], perm[-1] = perm[-1], perm[-2]
    if trans and rank < 2:
        raise ConvertError(f"FusedMatMul transposes a rank-{rank} operand; transA/transB need rank >= 2")
    return x if perm == list(range(rank)) else transpose(ctx, x, tuple(perm))


def _list(v: object) -> object:
    return list(v) if isinstance(v, tuple) else v

