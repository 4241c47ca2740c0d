"""The one op table: every IR op, its operands, attributes, traits and shape rule.

Passes select ops by trait (``Trait.ELEMENTWISE``, ``Trait.SHAPE_HELPER``...)
and never keep hand-copied op lists. ``tosa`` names the TOSA op the emitter
writes for it (``None`` for the seed's helper and data-dependent ops, which
must have decayed before emission). Each operand declares its kind (tensor,
index or any); a kind ending in ``*`` is variadic.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Callable, Optional

from ..symbolic.expr import add, dmax, dmin, floordiv, mod, mul, sub
from . import attrs as A
from . import shape_rules as R
from .types import IndexType, TensorType


class Trait(enum.Enum):
    ELEMENTWISE = "elementwise"      # per-element; operands broadcast
    BROADCASTABLE = "broadcastable"  # operands must have equal ranks; only 1s broadcast
    UNARY = "unary"
    BINARY = "binary"
    TERNARY = "ternary"
    SHAPE_HELPER = "shape_helper"    # seed 001 helper op on Index values; never in static TOSA
    DATA_DEPENDENT = "data_dependent"  # takes Index operands for shape; decays when bound
    INDEX_ARITH = "index_arith"      # Index x Index -> Index
    CONSTANT = "constant"
    LAYOUT = "layout"                # moves data without computing
    PURE = "pure"                    # no side effects: dead results may be dropped
    REGION = "region"                # holds regions (Graphs in its attributes); passes recurse into them


class OperandKind(enum.Enum):
    """What an operand holds: a tensor, an Index value (a dimension value of the seed's helper ops), or
    either (the carried values of the control-flow ops)."""

    TENSOR = "tensor"
    INDEX = "index"
    ANY = "any"


@dataclass(frozen=True)
class Operand:
    """One declared operand: its name, its kind and whether it takes all remaining operands."""

    name: str
    kind: OperandKind
    variadic: bool = False

    def accepts(self, value_type: object) -> bool:
        """Whether a value of ``value_type`` may stand in this operand's place."""
        if self.kind is OperandKind.ANY:
            return True
        return isinstance(value_type, IndexType if self.kind is OperandKind.INDEX else TensorType)

    def __str__(self) -> str:
        return self.name + ("*" if self.variadic else "")


def parse_signature(signature: str) -> tuple:
    """``"input: tensor, start: index*"`` -> the Operands it declares (``*``: variadic)."""
    operands = []
    for part in filter(None, (p.strip() for p in signature.split(","))):
        name, _, kind = (x.strip() for x in part.partition(":"))
        operands.append(Operand(name, OperandKind(kind.rstrip("*")), kind.endswith("*")))
    return tuple(operands)


@dataclass(frozen=True)
class OpDef:
    name: str
    operands: tuple          # of Operand, in order
    attrs: type
    traits: frozenset
    shape_rule: Callable
    tosa: Optional[str]
    index_fn: Optional[Callable] = None  # INDEX_ARITH: the dim-level function

    def has(self, trait: Trait) -> bool:
        return trait in self.traits

    def operand_at(self, position: int) -> Optional[Operand]:
        """The declared operand at ``position``; past the end, the last one (variadic); None if none."""
        return self.operands[min(position, len(self.operands) - 1)] if self.operands else None

    def __repr__(self):
        return f"Op.{self.name}"


OPS: dict = {}


class Op:
    """Namespace of OpDefs: ``Op.ADD`` and so on (filled from the table below)."""


def _define(name, operands, attrs, traits, rule, tosa=True, index_fn=None):
    t = frozenset(traits) | {Trait.PURE}
    op = OpDef(name, parse_signature(operands), attrs, t, rule,
               (name if tosa is True else tosa), index_fn)
    if name in OPS:
        raise ValueError(f"op {name} defined twice")
    OPS[name] = op
    setattr(Op, name, op)


E, B = Trait.ELEMENTWISE, Trait.BROADCASTABLE
UN, BIN, TER = Trait.UNARY, Trait.BINARY, Trait.TERNARY

# -- elementwise unary (TOSA 1.0 chapter "Elementwise unary") -------------------
for _n in ("ABS", "BITWISE_NOT", "CEIL", "CLZ", "COS", "EXP", "FLOOR", "LOG", "LOGICAL_NOT",
           "RECIPROCAL", "RSQRT", "SIN", "ERF", "SIGMOID", "TANH"):
    _define(_n, "input: tensor", A.NoAttrs, {E, B, UN}, R.same_as_first)
_define("NEGATE", "input: tensor", A.NegateAttrs, {E, B, UN}, R.same_as_first)
_define("CLAMP", "input: tensor", A.ClampAttrs, {E, B, UN}, R.same_as_first)
_define("CAST", "input: tensor", A.CastAttrs, {E, B, UN}, R.cast)
_define("TABLE", "input: tensor", A.TableAttrs, {E, B, UN}, R.table)
_define("RESCALE", "input: tensor", A.RescaleAttrs, {E, B, UN}, R.rescale)

# -- elementwise binary ---------------------------------------------------------
for _n in ("ADD", "SUB", "INTDIV", "POW", "BITWISE_AND", "BITWISE_OR", "BITWISE_XOR",
           "LOGICAL_AND", "LOGICAL_OR", "LOGICAL_XOR", "LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT"):
    _define(_n, "input1: tensor, input2: tensor", A.NoAttrs, {E, B, BIN}, R.elementwise)
_define("MAXIMUM", "input1: tensor, input2: tensor", A.NanModeAttrs, {E, B, BIN}, R.elementwise)
_define("MINIMUM", "input1: tensor, input2: tensor", A.NanModeAttrs, {E, B, BIN}, R.elementwise)
_define("ARITHMETIC_RIGHT_SHIFT", "input1: tensor, input2: tensor", A.ArithmeticRightShiftAttrs, {E, B, BIN}, R.elementwise)
_define("MUL", "input1: tensor, input2: tensor", A.MulAttrs, {E, B, BIN}, R.elementwise_mul)
for _n in ("EQUAL", "GREATER", "GREATER_EQUAL"):
    _define(_n, "input1: tensor, input2: tensor", A.NoAttrs, {E, B, BIN}, R.elementwise_bool)

# -- elementwise ternary -------------------------------------------------------
_define("SELECT", "input1: tensor, input2: tensor, input3: tensor", A.NoAttrs, {E, B, TER}, R.select)

# -- tensor ops ------------------------------------------------------------------
_define("ARGMAX", "input: tensor", A.AxisNanAttrs, set(), R.argmax)
_define("MATMUL", "a: tensor, b: tensor", A.MatMulAttrs, set(), R.matmul)
_define("CONV2D", "input: tensor, weight: tensor, bias: tensor", A.Conv2dAttrs, set(), R.conv2d)
_define("CONV3D", "input: tensor, weight: tensor, bias: tensor", A.Conv3dAttrs, set(), R.conv3d)
_define("DEPTHWISE_CONV2D", "input: tensor, weight: tensor, bias: tensor", A.Conv2dAttrs, set(), R.depthwise_conv2d)
_define("TRANSPOSE_CONV2D", "input: tensor, weight: tensor, bias: tensor", A.TransposeConv2dAttrs, set(), R.transpose_conv2d)
_define("AVG_POOL2D", "input: tensor", A.AvgPool2dAttrs, set(), R.pool2d)
_define("MAX_POOL2D", "input: tensor", A.MaxPool2dAttrs, set(), R.pool2d)
for _n in ("REDUCE_ALL", "REDUCE_ANY", "REDUCE_PRODUCT", "REDUCE_SUM"):
    _define(_n, "input: tensor", A.AxisAttrs, set(), R.reduce_axis)
for _n in ("REDUCE_MAX", "REDUCE_MIN"):
    _define(_n, "input: tensor", A.AxisNanAttrs, set(), R.reduce_axis)

# -- data layout -------------------------------------------------------------------
L = Trait.LAYOUT
_define("CONCAT", "input1: tensor*", A.AxisAttrs, {L}, R.concat)
_define("PAD", "input: tensor", A.PadAttrs, {L}, R.pad)
_define("RESHAPE", "input: tensor, shape_symbols: index*", A.ReshapeAttrs, {L}, R.reshape)
_define("REVERSE", "input: tensor", A.AxisAttrs, {L}, R.reverse)
_define("SLICE", "input: tensor", A.SliceAttrs, {L}, R.slice_)
_define("TILE", "input: tensor", A.TileAttrs, {L}, R.tile)
_define("TRANSPOSE", "input: tensor", A.TransposeAttrs, {L}, R.transpose)
_define("GATHER", "values: tensor, indices: tensor", A.NoAttrs, set(), R.gather)
_define("SCATTER", "values_in: tensor, indices: tensor, input: tensor", A.NoAttrs, set(), R.scatter)
_define("RESIZE", "input: tensor", A.ResizeAttrs, set(), R.resize)
_define("IDENTITY", "input1: tensor", A.NoAttrs, {L}, R.same_as_first)
_define("CONST", "", A.ConstAttrs, {Trait.CONSTANT}, R.const)

# -- seed 001 shape helper ops (Index values; never emitted) -------------------------
H, IA = Trait.SHAPE_HELPER, Trait.INDEX_ARITH
_define("INDEX_CONST", "", A.IndexConstAttrs, {H, Trait.CONSTANT}, R.index_const, tosa=None)
_define("GET_DIM", "input: tensor", A.DimIndexAttrs, {H}, R.get_dim, tosa=None)
_define("EXTRACT_DIM", "input: tensor", A.DimIndexAttrs, {H, Trait.DATA_DEPENDENT}, R.extract_dim_rule, tosa=None)
_define("DIMS_TO_TENSOR", "dims: index*", A.DimsToTensorAttrs, {H}, R.dims_to_tensor, tosa=None)
_define("EXPAND_DIMS", "input: tensor", A.IndicesAttrs, {H, L}, R.expand_dims, tosa=None)
_define("COLLAPSE_DIMS", "input: tensor", A.IndicesAttrs, {H, L}, R.collapse_dims, tosa=None)
for _n, _fn in (("INDEX_ADD", add), ("INDEX_SUB", sub), ("INDEX_MUL", mul), ("INDEX_FLOORDIV", floordiv),
                ("INDEX_MOD", mod), ("INDEX_MIN", dmin), ("INDEX_MAX", dmax)):
    _define(_n, "lhs: index, rhs: index", A.NoAttrs, {H, IA}, R.index_binary(_fn), tosa=None, index_fn=_fn)

# -- data-dependent ops that decay to static TOSA once indices are known ----------------
DD = Trait.DATA_DEPENDENT
_define("DYN_SLICE", "input: tensor, start: index*, size: index*", A.NoAttrs, {DD}, R.dyn_slice, tosa=None)
_define("DYN_TILE", "input: tensor, multiples: index*", A.NoAttrs, {DD}, R.dyn_tile, tosa=None)
_define("IOTA", "length: index", A.IotaAttrs, {DD}, R.iota, tosa=None)
_define("COUNT_RESCALE", "input: tensor, count: index", A.CountRescaleAttrs, {DD}, R.count_rescale, tosa=None)
_define("INTERP_MATRIX", "in_size: index, out_size: index", A.InterpMatrixAttrs, {DD}, R.interp_matrix, tosa=None)
_define("RECURRENT", "x: tensor, w: tensor, r: tensor, optional: tensor*", A.RecurrentAttrs, {DD}, R.recurrent, tosa=None)


# TOSA ops we deliberately do not produce yet, with the reason (the completeness test reads this).
UNSUPPORTED_TOSA = {
    "CUSTOM": "custom ops are rejected at import",
}


# -- control flow: ops holding regions (ONNX If/Loop/Scan; see region_rules.py) -----------
from . import region_rules as RR  # noqa: E402

RG = Trait.REGION
_define("COND_IF", "condition: tensor, inputs: any*", A.CondIfAttrs, {RG}, RR.cond_if)
_define("WHILE_LOOP", "inputs: any*", A.WhileLoopAttrs, {RG}, RR.while_loop)
_define("IF", "condition: index, inputs: any*", A.CondIfAttrs, {RG, DD}, RR.index_if, tosa=None)
_define("LOOP", "trip_count: index, inputs: any*", A.LoopAttrs, {RG, DD}, RR.loop, tosa=None)


# -- data-dependent ops whose result extent is a symbol (UpperBound); appended ------------
_define("NONZERO", "input: tensor", A.NonZeroAttrs, {DD}, R.nonzero, tosa=None)


# -- ONNX Pad whose amounts are computed from shapes (seed 001's data-dependent PAD); appended -----------
_define("DYN_PAD", "input: tensor, padding: index*", A.DynPadAttrs, {DD}, R.dyn_pad, tosa=None)


# -- state (TOSA 1.0 EXT-VARIABLE; see variable_rules.py): not PURE, so no pass drops or folds them
# (passes keep the op order, so reads and writes stay in sequence); VARIABLE declares, VARIABLE_READ
# and VARIABLE_WRITE access the state by name -----------------------------------------------------
from . import variable_rules as VR  # noqa: E402


def _define_stateful(name, operands, attrs, rule):
    _define(name, operands, attrs, set(), rule)
    op = replace(OPS[name], traits=OPS[name].traits - {Trait.PURE})
    OPS[name] = op
    setattr(Op, name, op)


_define_stateful("VARIABLE", "", A.VariableAttrs, VR.variable)
_define_stateful("VARIABLE_READ", "", A.VariableRefAttrs, VR.variable_read)
_define_stateful("VARIABLE_WRITE", "input1: tensor", A.VariableRefAttrs, VR.variable_write)


# -- TOSA 1.0 EXT-FFT (see fft_rules.py); appended -------------------------------------------------
from . import fft_rules as FR  # noqa: E402

_define("FFT2D", "input_real: tensor, input_imag: tensor", A.Fft2dAttrs, set(), FR.fft2d)
_define("RFFT2D", "input_real: tensor", A.Rfft2dAttrs, set(), FR.rfft2d)
