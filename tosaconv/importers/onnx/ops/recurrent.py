"""Converters for ONNX LSTM, GRU and RNN: every direction, both layouts, all optional inputs.

Each node becomes ONE data-dependent RECURRENT op whose shape rule gives the
symbolic Y, Y_h (and Y_c); it is unrolled into plain TOSA once the sequence
length is bound (:mod:`tosaconv.passes.decay_recurrent` explains why and
how). This module checks the operands against the shapes ONNX prescribes
(recording in the ledger that X's feature size matches W and that X's batch
matches sequence_lens and the initial states), resolves what ONNX leaves
implicit (hidden_size from R, each cell's default activations, which
activation consumes which activation_alpha/beta, with onnxruntime's defaults
for the ones not given) and refuses the rest with a clear message.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....symbolic.constraints import Kind
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader

# cell -> (gates, default activations of one direction, optional inputs after X, W, R)
CELLS = {
    "LSTM": (4, ("Sigmoid", "Tanh", "Tanh"), ("B", "sequence_lens", "initial_h", "initial_c", "P")),
    "GRU": (3, ("Sigmoid", "Tanh"), ("B", "sequence_lens", "initial_h")),
    "RNN": (1, ("Tanh",), ("B", "sequence_lens", "initial_h")),
}
_FLAGS = {"B": "has_bias", "sequence_lens": "has_sequence_lens", "initial_h": "has_initial_h",
          "initial_c": "has_initial_c", "P": "has_peepholes"}
DIRECTIONS = ("forward", "reverse", "bidirectional")

# lower-case name -> (name, default alpha, default beta); None: the function takes no such parameter.
# The defaults are onnxruntime's (it gives Affine, ScaledTanh and ThresholdedRelu 0 where unset).
ACTIVATIONS = {
    "sigmoid": ("Sigmoid", None, None), "tanh": ("Tanh", None, None), "relu": ("Relu", None, None),
    "affine": ("Affine", 0.0, 0.0), "leakyrelu": ("LeakyRelu", 0.01, None),
    "thresholdedrelu": ("ThresholdedRelu", 0.0, None), "scaledtanh": ("ScaledTanh", 0.0, 0.0),
    "hardsigmoid": ("HardSigmoid", 0.2, 0.5), "elu": ("Elu", 1.0, None),
    "softsign": ("Softsign", None, None), "softplus": ("Softplus", None, None),
}


@converter("LSTM", since=7)
def convert_lstm(ctx: ImportContext, node: NodeReader) -> Converted:
    return recurrent(ctx, node, "LSTM")


@converter("GRU", since=7)
def convert_gru(ctx: ImportContext, node: NodeReader) -> Converted:
    return recurrent(ctx, node, "GRU")


@converter("RNN", since=7)
def convert_rnn(ctx: ImportContext, node: NodeReader) -> Converted:
    return recurrent(ctx, node, "RNN")


def recurrent(ctx: ImportContext, node: NodeReader, cell: str) -> list[Value]:
    x, w, r = (ctx.tensor(node.inputs[i]) for i in range(3))
    direction = node.attr("direction")
    if direction not in DIRECTIONS:
        raise ConvertError(f"direction '{direction}' is not one of {', '.join(DIRECTIONS)}")
    dirs = 2 if direction == "bidirectional" else 1
    layout = node.attr("layout", 0)
    if layout not in (0, 1):
        raise ConvertError(f"layout {layout} is not 0 ([seq, batch, ...]) or 1 ([batch, seq, ...])")
    _check_float(x, w, r)
    hidden = _hidden_size(node, r)
    sizes = _Sizes(ctx, cell, dirs, hidden, x, layout)
    sizes.check("W", w, (dirs, sizes.width, x.type.shape[2]))
    sizes.check("R", r, (dirs, sizes.width, hidden))
    optional = _optional(ctx, node, sizes, x)
    attrs = A.RecurrentAttrs(
        cell=cell, direction=direction, hidden_size=hidden, activations=_activations(node, cell, dirs),
        clip=_clip(node), input_forget=bool(node.attr("input_forget", 0)),
        linear_before_reset=bool(node.attr("linear_before_reset", 0)), layout=layout,
        **{_FLAGS[name]: True for name in optional})
    return ctx.b.create(Op.RECURRENT, [x, w, r, *optional.values()], attrs).results


def _check_float(x: Value, *others) -> None:
    if not x.type.dtype.is_float:
        raise ConvertError(f"X is {x.type.dtype.value}; recurrent cells are converted for float data only")
    for v in others:
        if v.type.dtype != x.type.dtype:
            raise ConvertError(f"'{v.name}' is {v.type.dtype.value} but X is {x.type.dtype.value}; "
                               "the weights and states must have X's element type")


def _hidden_size(node: NodeReader, r: Value) -> int:
    hidden = node.attr("hidden_size")
    if hidden is None:
        hidden = r.type.shape[2] if r.type.rank == 3 else None
        if not isinstance(hidden, int):
            raise ConvertError("hidden_size is not set and R's last dim is not a static size; "
                               "set the hidden_size attribute")
    if hidden < 1:
        raise ConvertError(f"hidden_size must be >= 1, got {hidden}")
    return int(hidden)


class _Sizes:
    """The shapes ONNX prescribes for each operand; mismatches are refused or recorded in the ledger."""

    def __init__(self, ctx: ImportContext, cell: str, dirs: int, hidden: int, x: Value, layout: int):
        if x.type.rank != 3:
            raise ConvertError(f"X must have rank 3, got shape {x.type}")
        self.ctx, self.cell, self.dirs, self.hidden, self.layout = ctx, cell, dirs, hidden, layout
        self.width = CELLS[cell][0] * hidden
        self.batch = x.type.shape[0] if layout else x.type.shape[1]

    def check(self, name: str, v: Value, dims: Sequence[Dim]) -> None:
        if v.type.rank != len(dims):
            raise ConvertError(f"{name} must have rank {len(dims)}, got shape {v.type}")
        for axis, (got, want) in enumerate(zip(v.type.shape, dims)):
            self.ctx.require(Kind.EQ, got, want, f"{self.cell} {name} axis {axis} has the size ONNX prescribes")

    def state(self) -> tuple:
        if self.layout:
            return (self.batch, self.dirs, self.hidden)
        return (self.dirs, self.batch, self.hidden)

    def expected(self, name: str) -> tuple:
        return {"B": (self.dirs, 2 * self.width), "sequence_lens": (self.batch,), "initial_h": self.state(),
                "initial_c": self.state(), "P": (self.dirs, 3 * self.hidden)}[name]


def _optional(ctx: ImportContext, node: NodeReader, sizes: _Sizes, x: Value) -> dict:
    """The optional operands that are present, by ONNX name, in ONNX order."""
    out = {}
    for position, name in enumerate(CELLS[sizes.cell][2], start=3):
        if node.input(position) is None:
            continue
        v = ctx.tensor(node.input(position))
        sizes.check(name, v, sizes.expected(name))
        if name != "sequence_lens":
            _check_float(x, v)
        elif v.type.dtype != DType.INT32:
            raise ConvertError(f"sequence_lens is {v.type.dtype.value}; ONNX requires int32")
        out[name] = v
    return out


def _clip(node: NodeReader) -> float:
    clip = node.attr("clip")
    if clip is None:
        return 0.0
    if not clip > 0:
        raise ConvertError(f"clip must be > 0 (it bounds gate inputs to [-clip, clip]), got {clip}")
    return float(clip)


def _activations(node: NodeReader, cell: str, dirs: int) -> str:
    """Every function of every direction with its alpha and beta, consumed in order as onnxruntime does."""
    defaults = CELLS[cell][1]
    names = node.attr("activations") or defaults * dirs
    if cell == "RNN" and dirs == 1 and len(names) == 2:
        names = names[:1]   # RNN's schema default is [Tanh, Tanh] even for one direction (onnxruntime: the first)
    if len(names) != len(defaults) * dirs:
        raise ConvertError(f"{cell} with {dirs} direction(s) takes {len(defaults) * dirs} activations "
                           f"({len(defaults)} per direction), got {len(names)}: {', '.join(names)}")
    alphas = iter(node.attr("activation_alpha") or ())
    betas = iter(node.attr("activation_beta") or ())
    items = []
    for name in names:
        if name.lower() not in ACTIVATIONS:
            known = ", ".join(v[0] for v in ACTIVATIONS.values())
            raise ConvertError(f"activation '{name}' is not supported (supported: {known})")
        canonical, alpha, beta = ACTIVATIONS[name.lower()]
        alpha = 0.0 if alpha is None else next(alphas, alpha)
        beta = 0.0 if beta is None else next(betas, beta)
        items.append((canonical, alpha, beta))
    return A.activations_text(items)
