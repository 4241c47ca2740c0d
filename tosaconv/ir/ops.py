"""The one op table: every IR op, its operands, attributes, traits and shape rule.

Passes select ops by trait (``Trait.ELEMENTWISE``, ``Trait.SHAPE_HELPER``...)
and never keep hand-copied op lists. ``tosa`` names the TOSA op the emitter
writes for it (``None`` for the seed's helper and data-dependent ops, which
must have decayed before emission). Operand names ending in ``*`` are
variadic.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Callable, Optional

from ..symbolic.expr import add, dmax, dmin, floordiv, mod, mul, sub
from . import attrs as A
from . import shape_rules as R


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


@dataclass(frozen=True)
class OpDef:
    name: str
    operands: tuple
    attrs: type
    traits: frozenset
    shape_rule: Callable
    tosa: Optional[str]
    index_fn: Optional[Callable] = None  # INDEX_ARITH: the dim-level function

    def has(self, trait: Trait) -> bool:
        return trait in self.traits

    def __repr__(self):
        return f"Op.{self.name}"


OPS: dict = {}


class Op:
    """Namespace of OpDefs: ``Op.ADD`` and so on (filled from the table below)."""


def _define(name, operands, attrs, traits, rule, tosa=True, index_fn=None):
    t = frozenset(traits) | {Trait.PURE}
    op = OpDef(name, tuple(operands.split()) if operands else (), attrs, t, rule,
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
    _define(_n, "input", A.NoAttrs, {E, B, UN}, R.same_as_first)
_define("NEGATE", "input", A.NegateAttrs, {E, B, UN}, R.same_as_first)
_define("CLAMP", "input", A.ClampAttrs, {E, B, UN}, R.same_as_first)
_define("CAST", "input", A.CastAttrs, {E, B, UN}, R.cast)
_define("TABLE", "input", A.TableAttrs, {E, B, UN}, R.table)
_define("RESCALE", "input", A.RescaleAttrs, {E, B, UN}, R.rescale)

# -- elementwise binary ---------------------------------------------------------
for _n in ("ADD", "SUB", "INTDIV", "POW", "BITWISE_AND", "BITWISE_OR", "BITWISE_XOR",
           "LOGICAL_AND", "LOGICAL_OR", "LOGICAL_XOR", "LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT"):
    _define(_n, "input1 input2", A.NoAttrs, {E, B, BIN}, R.elementwise)
_define("MAXIMUM", "input1 input2", A.NanModeAttrs, {E, B, BIN}, R.elementwise)
_define("MINIMUM", "input1 input2", A.NanModeAttrs, {E, B, BIN}, R.elementwise)
_define("ARITHMETIC_RIGHT_SHIFT", "input1 input2", A.ArithmeticRightShiftAttrs, {E, B, BIN}, R.elementwise)
_define("MUL", "input1 input2", A.MulAttrs, {E, B, BIN}, R.elementwise_mul)
for _n in ("EQUAL", "GREATER", "GREATER_EQUAL"):
    _define(_n, "input1 input2", A.NoAttrs, {E, B, BIN}, R.elementwise_bool)

# -- elementwise ternary -------------------------------------------------------
_define("SELECT", "input1 input2 input3", A.NoAttrs, {E, B, TER}, R.select)

# -- tensor ops ------------------------------------------------------------------
_define("ARGMAX", "input", A.AxisNanAttrs, set(), R.argmax)
_define("MATMUL", "a b", A.MatMulAttrs, set(), R.matmul)
_define("CONV2D", "input weight bias", A.Conv2dAttrs, set(), R.conv2d)
_define("CONV3D", "input weight bias", A.Conv3dAttrs, set(), R.conv3d)
_define("DEPTHWISE_CONV2D", "input weight bias", A.Conv2dAttrs, set(), R.depthwise_conv2d)
_define("TRANSPOSE_CONV2D", "input weight bias", A.TransposeConv2dAttrs, set(), R.transpose_conv2d)
_define("AVG_POOL2D", "input", A.AvgPool2dAttrs, set(), R.pool2d)
_define("MAX_POOL2D", "input", A.MaxPool2dAttrs, set(), R.pool2d)
for _n in ("REDUCE_ALL", "REDUCE_ANY", "REDUCE_PRODUCT", "REDUCE_SUM"):
    _define(_n, "input", A.AxisAttrs, set(), R.reduce_axis)
for _n in ("REDUCE_MAX", "REDUCE_MIN"):
    _define(_n, "input", A.AxisNanAttrs, set(), R.reduce_axis)

# -- data layout -------------------------------------------------------------------
L = Trait.LAYOUT
_define("CONCAT", "input1*", A.AxisAttrs, {L}, R.concat)
_define("PAD", "input", A.PadAttrs, {L}, R.pad)
_define("RESHAPE", "input shape_symbols*", A.ReshapeAttrs, {L}, R.reshape)
_define("REVERSE", "input", A.AxisAttrs, {L}, R.reverse)
_define("SLICE", "input", A.SliceAttrs, {L}, R.slice_)
_define("TILE", "input", A.TileAttrs, {L}, R.tile)
_define("TRANSPOSE", "input", A.TransposeAttrs, {L}, R.transpose)
_define("GATHER", "values indices", A.NoAttrs, set(), R.gather)
_define("SCATTER", "values_in indices input", A.NoAttrs, set(), R.scatter)
_define("RESIZE", "input", A.ResizeAttrs, set(), R.resize)
_define("IDENTITY", "input1", A.NoAttrs, {L}, R.same_as_first)
_define("CONST", "", A.ConstAttrs, {Trait.CONSTANT}, R.const)

# -- seed 001 shape helper ops (Index values; never emitted) -------------------------
H, IA = Trait.SHAPE_HELPER, Trait.INDEX_ARITH
_define("INDEX_CONST", "", A.IndexConstAttrs, {H, Trait.CONSTANT}, R.index_const, tosa=None)
_define("GET_DIM", "input", A.DimIndexAttrs, {H}, R.get_dim, tosa=None)
_define("EXTRACT_DIM", "input", A.DimIndexAttrs, {H, Trait.DATA_DEPENDENT}, R.extract_dim_rule, tosa=None)
_define("DIMS_TO_TENSOR", "dims*", A.DimsToTensorAttrs, {H}, R.dims_to_tensor, tosa=None)
_define("EXPAND_DIMS", "input", A.IndicesAttrs, {H, L}, R.expand_dims, tosa=None)
_define("COLLAPSE_DIMS", "input", A.IndicesAttrs, {H, L}, R.collapse_dims, tosa=None)
for _n, _fn in (("INDEX_ADD", add), ("INDEX_SUB", sub), ("INDEX_MUL", mul), ("INDEX_FLOORDIV", floordiv),
                ("INDEX_MOD", mod), ("INDEX_MIN", dmin), ("INDEX_MAX", dmax)):
    _define(_n, "lhs rhs", A.NoAttrs, {H, IA}, R.index_binary(_fn), tosa=None, index_fn=_fn)

# -- data-dependent ops that decay to static TOSA once indices are known ----------------
DD = Trait.DATA_DEPENDENT
_define("DYN_SLICE", "input start* size*", A.NoAttrs, {DD}, R.dyn_slice, tosa=None)
_define("DYN_TILE", "input multiples*", A.NoAttrs, {DD}, R.dyn_tile, tosa=None)
_define("IOTA", "length", A.IotaAttrs, {DD}, R.iota, tosa=None)
_define("COUNT_RESCALE", "input count", A.CountRescaleAttrs, {DD}, R.count_rescale, tosa=None)
_define("INTERP_MATRIX", "in_size out_size", A.InterpMatrixAttrs, {DD}, R.interp_matrix, tosa=None)
_define("RECURRENT", "x w r optional*", A.RecurrentAttrs, {DD}, R.recurrent, tosa=None)


# TOSA ops we deliberately do not produce yet, with the reason (the completeness test reads this).
UNSUPPORTED_TOSA = {
    "CUSTOM": "custom ops are rejected at import",
}


# -- control flow: ops holding regions (ONNX If/Loop/Scan; see region_rules.py) -----------
from . import region_rules as RR  # noqa: E402

RG = Trait.REGION
_define("COND_IF", "condition inputs*", A.CondIfAttrs, {RG}, RR.cond_if)
_define("WHILE_LOOP", "inputs*", A.WhileLoopAttrs, {RG}, RR.while_loop)
_define("IF", "condition inputs*", A.CondIfAttrs, {RG, DD}, RR.index_if, tosa=None)
_define("LOOP", "trip_count inputs*", A.LoopAttrs, {RG, DD}, RR.loop, tosa=None)


# -- data-dependent ops whose result extent is a symbol (UpperBound); appended ------------
_define("NONZERO", "input", A.NonZeroAttrs, {DD}, R.nonzero, tosa=None)


# -- ONNX Pad whose amounts are computed from shapes (seed 001's data-dependent PAD); appended -----------
_define("DYN_PAD", "input padding*", A.DynPadAttrs, {DD}, R.dyn_pad, tosa=None)


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
_define_stateful("VARIABLE_WRITE", "input1", A.VariableRefAttrs, VR.variable_write)


# -- TOSA 1.0 EXT-FFT (see fft_rules.py); appended -------------------------------------------------
from . import fft_rules as FR  # noqa: E402

_define("FFT2D", "input_real input_imag", A.Fft2dAttrs, set(), FR.fft2d)
_define("RFFT2D", "input_real", A.Rfft2dAttrs, set(), FR.rfft2d)
