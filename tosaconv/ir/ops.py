"""The one op table: every IR op declared in one place, with pointers to all of its parts.

Each row of :data:`TABLE` gives an op's name, its operands and their kinds
(``"input: tensor, start: index*"``: tensor, index or any, ``*`` variadic),
its attribute class, its traits (by their values: ``"elementwise unary"``),
its shape rule, and where its other parts live, as ``module:function``
strings: the interpreter kernel (under ``tosaconv.interpreter``), the decay
rule of a helper or data-dependent op (under ``tosaconv.passes``) and the
``.tosa`` codec class (under ``tosaconv.emit``). The strings keep this module
free of imports from the layers above it. The interpreter and the decay pass
find kernels and rules only through them (:func:`resolve`, on first use);
tests/test_op_table.py checks every pointer, and that the codec one names the
class of the codec the emitter registers for the op.

Passes select ops by trait (``Trait.ELEMENTWISE``, ``Trait.SHAPE_HELPER``...)
and never keep hand-copied op lists. ``tosa`` names the TOSA op the emitter
writes for it (``None`` for the seed's helper and data-dependent ops, which
must have decayed before emission). Every op is PURE (dead results may be
dropped) except the stateful ones.
"""
from __future__ import annotations

import enum
import functools
from collections.abc import Sequence
import importlib
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from types import SimpleNamespace
from typing import Callable, Optional

from ..symbolic.expr import Dim, add, dmax, dmin, floordiv, mod, mul, sub
from . import attrs, fft_rules, region_rules, shape_rules, variable_rules
from .types import IndexType, TensorType, ValueType

# A shape rule: (operand types, the op's own attribute class) -> result types. Its parameter types
# differ from op to op, hence the ``...``.
ShapeRule = Callable[..., Sequence[ValueType]]


class Trait(enum.Enum):
    __hash__ = object.__hash__   # a member is its own identity; Enum's hash is a Python call
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

    __hash__ = object.__hash__       # members are singletons: hashing by identity spares Enum's Python-level hash


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


@functools.lru_cache(maxsize=None)   # the table repeats 25 signatures 96 times; Operands are immutable (issue 13)
def parse_signature(signature: str) -> tuple[Operand, ...]:
    """``"input: tensor, start: index*"`` -> the Operands it declares (``*``: variadic)."""
    operands = []
    for part in filter(None, (p.strip() for p in signature.split(","))):
        name, _, kind = (x.strip() for x in part.partition(":"))
        operands.append(Operand(name, OperandKind(kind.rstrip("*")), kind.endswith("*")))
    return tuple(operands)


@dataclass(frozen=True, eq=False)   # one object per op: identity is equality (and hashing is cheap)
class OpDef:
    name: str
    operands: tuple[Operand, ...]          # in order
    attrs: type
    traits: frozenset[Trait]
    shape_rule: ShapeRule
    tosa: Optional[str]
    index_fn: Optional[Callable[[Dim, Dim], Dim]] = None  # INDEX_ARITH: the dim-level function
    kernel: str = ""                     # "tosaconv.interpreter.<module>:<function>"
    decay: Optional[str] = None          # "tosaconv.passes.<module>:<function>" (helper/data-dependent ops)
    codec: Optional[str] = None          # "tosaconv.emit.<module>:<Codec class>" (ops written to a .tosa)

    def has(self, trait: Trait) -> bool:
        return trait in self.traits

    def operand_at(self, position: int) -> Optional[Operand]:
        """The declared operand at ``position``; past the end, the last one (variadic); None if none."""
        return self.operands[min(position, len(self.operands) - 1)] if self.operands else None

    def __repr__(self) -> str:
        return f"Op.{self.name}"


def resolve(reference: str) -> object:
    """The object a ``"package.module:name"`` reference of the table names (imports the module)."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def declare(name: str, signature: str, attr_class: type, traits: str, shape_rule: ShapeRule, *, kernel: str,
            decay: Optional[str] = None, codec: Optional[str] = None, emitted: bool = True,
            stateful: bool = False, index_fn: Optional[Callable[[Dim, Dim], Dim]] = None) -> OpDef:
    """One row of the table; ``kernel``, ``decay`` and ``codec`` are relative to their layer's package."""
    return OpDef(name, parse_signature(signature), attr_class, _traits(traits, stateful), shape_rule,
                 name if emitted else None, index_fn, f"tosaconv.interpreter.{kernel}",
                 decay and f"tosaconv.passes.{decay}", codec and f"tosaconv.emit.{codec}")


@functools.lru_cache(maxsize=None)   # 15 distinct sets in 96 rows (start-up, issue 13)
def _traits(traits: str, stateful: bool) -> frozenset[Trait]:
    """The traits a row declares (space-separated), and PURE unless the op is ``stateful``."""
    return frozenset({Trait(t) for t in traits.split()} | (set() if stateful else {Trait.PURE}))


TABLE: tuple[OpDef, ...] = (
    # -- elementwise unary (TOSA 1.0 chapter "Elementwise unary"; ERF SIGMOID TANH: "Activation")
    declare("ABS", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="elementwise_unary:abs_", codec="codec_base:Codec"),
    declare("BITWISE_NOT", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary",
            shape_rules.same_as_first, kernel="elementwise_unary:bitwise_not", codec="codec_base:Codec"),
    declare("CEIL", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="elementwise_unary:ceil", codec="codec_base:Codec"),
    declare("CLZ", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="elementwise_unary:clz", codec="codec_base:Codec"),
    declare("COS", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="elementwise_unary:cos", codec="codec_base:Codec"),
    declare("EXP", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="elementwise_unary:exp", codec="codec_base:Codec"),
    declare("FLOOR", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="elementwise_unary:floor", codec="codec_base:Codec"),
    declare("LOG", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="elementwise_unary:log", codec="codec_base:Codec"),
    declare("LOGICAL_NOT", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary",
            shape_rules.same_as_first, kernel="elementwise_unary:logical_not", codec="codec_base:Codec"),
    declare("RECIPROCAL", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary",
            shape_rules.same_as_first, kernel="elementwise_unary:reciprocal", codec="codec_base:Codec"),
    declare("RSQRT", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="elementwise_unary:rsqrt", codec="codec_base:Codec"),
    declare("SIN", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="elementwise_unary:sin", codec="codec_base:Codec"),
    declare("ERF", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="activation:erf", codec="codec_base:Codec"),
    declare("SIGMOID", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="activation:sigmoid", codec="codec_base:Codec"),
    declare("TANH", "input: tensor", attrs.NoAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="activation:tanh", codec="codec_base:Codec"),
    declare("NEGATE", "input: tensor", attrs.NegateAttrs, "elementwise broadcastable unary",
            shape_rules.same_as_first, kernel="elementwise_unary:negate", codec="codecs:NegateCodec"),
    declare("CLAMP", "input: tensor", attrs.ClampAttrs, "elementwise broadcastable unary", shape_rules.same_as_first,
            kernel="activation:clamp", codec="codecs:ClampCodec"),
    declare("CAST", "input: tensor", attrs.CastAttrs, "elementwise broadcastable unary", shape_rules.cast,
            kernel="type_conversion:cast", codec="codecs:CastCodec"),
    declare("TABLE", "input: tensor", attrs.TableAttrs, "elementwise broadcastable unary", shape_rules.table,
            kernel="table:table", codec="codecs:TableCodec"),
    declare("RESCALE", "input: tensor", attrs.RescaleAttrs, "elementwise broadcastable unary", shape_rules.rescale,
            kernel="type_conversion:rescale", codec="codecs:RescaleCodec"),

    # -- elementwise binary
    declare("ADD", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise, kernel="elementwise_binary:add", codec="codec_base:Codec"),
    declare("SUB", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise, kernel="elementwise_binary:sub", codec="codec_base:Codec"),
    declare("INTDIV", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise, kernel="elementwise_binary:intdiv", codec="codec_base:Codec"),
    declare("POW", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise, kernel="elementwise_binary:pow_", codec="codec_base:Codec"),
    declare("BITWISE_AND", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise, kernel="elementwise_binary:bitwise_and", codec="codec_base:Codec"),
    declare("BITWISE_OR", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise, kernel="elementwise_binary:bitwise_or", codec="codec_base:Codec"),
    declare("BITWISE_XOR", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise, kernel="elementwise_binary:bitwise_xor", codec="codec_base:Codec"),
    declare("LOGICAL_AND", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise, kernel="elementwise_binary:logical_and", codec="codec_base:Codec"),
    declare("LOGICAL_OR", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise, kernel="elementwise_binary:logical_or", codec="codec_base:Codec"),
    declare("LOGICAL_XOR", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise, kernel="elementwise_binary:logical_xor", codec="codec_base:Codec"),
    declare("LOGICAL_LEFT_SHIFT", "input1: tensor, input2: tensor", attrs.NoAttrs,
            "elementwise broadcastable binary", shape_rules.elementwise,
            kernel="elementwise_binary:logical_left_shift", codec="codec_base:Codec"),
    declare("LOGICAL_RIGHT_SHIFT", "input1: tensor, input2: tensor", attrs.NoAttrs,
            "elementwise broadcastable binary", shape_rules.elementwise,
            kernel="elementwise_binary:logical_right_shift", codec="codec_base:Codec"),
    declare("MAXIMUM", "input1: tensor, input2: tensor", attrs.NanModeAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise, kernel="elementwise_binary:maximum", codec="codecs:NanCodec"),
    declare("MINIMUM", "input1: tensor, input2: tensor", attrs.NanModeAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise, kernel="elementwise_binary:minimum", codec="codecs:NanCodec"),
    declare("ARITHMETIC_RIGHT_SHIFT", "input1: tensor, input2: tensor", attrs.ArithmeticRightShiftAttrs,
            "elementwise broadcastable binary", shape_rules.elementwise,
            kernel="elementwise_binary:arithmetic_right_shift", codec="codecs:ShiftCodec"),
    declare("MUL", "input1: tensor, input2: tensor", attrs.MulAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise_mul, kernel="elementwise_binary:mul", codec="codecs:MulCodec"),
    declare("EQUAL", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise_bool, kernel="comparison:equal", codec="codec_base:Codec"),
    declare("GREATER", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise_bool, kernel="comparison:greater", codec="codec_base:Codec"),
    declare("GREATER_EQUAL", "input1: tensor, input2: tensor", attrs.NoAttrs, "elementwise broadcastable binary",
            shape_rules.elementwise_bool, kernel="comparison:greater_equal", codec="codec_base:Codec"),

    # -- elementwise ternary
    declare("SELECT", "input1: tensor, input2: tensor, input3: tensor", attrs.NoAttrs,
            "elementwise broadcastable ternary", shape_rules.select, kernel="elementwise_ternary:select",
            codec="codec_base:Codec"),

    # -- tensor ops
    declare("ARGMAX", "input: tensor", attrs.AxisNanAttrs, "", shape_rules.argmax, kernel="tensor_ops:argmax",
            codec="codecs:AxisNanCodec"),
    declare("MATMUL", "a: tensor, b: tensor", attrs.MatMulAttrs, "", shape_rules.matmul, kernel="tensor_ops:matmul",
            codec="codecs:MatMulCodec"),
    declare("CONV2D", "input: tensor, weight: tensor, bias: tensor", attrs.Conv2dAttrs, "", shape_rules.conv2d,
            kernel="convolution:conv2d", codec="codecs:ConvCodec"),
    declare("CONV3D", "input: tensor, weight: tensor, bias: tensor", attrs.Conv3dAttrs, "", shape_rules.conv3d,
            kernel="convolution:conv3d", codec="codecs:Conv3dCodec"),
    declare("DEPTHWISE_CONV2D", "input: tensor, weight: tensor, bias: tensor", attrs.Conv2dAttrs, "",
            shape_rules.depthwise_conv2d, kernel="convolution:depthwise_conv2d", codec="codecs:ConvCodec"),
    declare("TRANSPOSE_CONV2D", "input: tensor, weight: tensor, bias: tensor", attrs.TransposeConv2dAttrs, "",
            shape_rules.transpose_conv2d, kernel="convolution:transpose_conv2d", codec="codecs:TransposeConvCodec"),
    declare("AVG_POOL2D", "input: tensor", attrs.AvgPool2dAttrs, "", shape_rules.pool2d,
            kernel="tensor_ops:avg_pool2d", codec="codecs:AvgPoolCodec"),
    declare("MAX_POOL2D", "input: tensor", attrs.MaxPool2dAttrs, "", shape_rules.pool2d,
            kernel="tensor_ops:max_pool2d", codec="codecs:MaxPoolCodec"),
    declare("REDUCE_ALL", "input: tensor", attrs.AxisAttrs, "", shape_rules.reduce_axis,
            kernel="reduction:reduce_all", codec="codecs:AxisCodec"),
    declare("REDUCE_ANY", "input: tensor", attrs.AxisAttrs, "", shape_rules.reduce_axis,
            kernel="reduction:reduce_any", codec="codecs:AxisCodec"),
    declare("REDUCE_PRODUCT", "input: tensor", attrs.AxisAttrs, "", shape_rules.reduce_axis,
            kernel="reduction:reduce_product", codec="codecs:AxisCodec"),
    declare("REDUCE_SUM", "input: tensor", attrs.AxisAttrs, "", shape_rules.reduce_axis,
            kernel="reduction:reduce_sum", codec="codecs:AxisCodec"),
    declare("REDUCE_MAX", "input: tensor", attrs.AxisNanAttrs, "", shape_rules.reduce_axis,
            kernel="reduction:reduce_max", codec="codecs:AxisNanCodec"),
    declare("REDUCE_MIN", "input: tensor", attrs.AxisNanAttrs, "", shape_rules.reduce_axis,
            kernel="reduction:reduce_min", codec="codecs:AxisNanCodec"),

    # -- data layout, scatter/gather, image, data nodes
    declare("CONCAT", "input1: tensor*", attrs.AxisAttrs, "layout", shape_rules.concat, kernel="data_layout:concat",
            codec="codecs:AxisCodec"),
    declare("PAD", "input: tensor", attrs.PadAttrs, "layout", shape_rules.pad, kernel="data_layout:pad",
            codec="layout_codecs:PadCodec"),
    declare("RESHAPE", "input: tensor, shape_symbols: index*", attrs.ReshapeAttrs, "layout", shape_rules.reshape,
            kernel="data_layout:reshape", decay="decay:decay_reshape", codec="layout_codecs:ReshapeCodec"),
    declare("REVERSE", "input: tensor", attrs.AxisAttrs, "layout", shape_rules.reverse, kernel="data_layout:reverse",
            codec="codecs:AxisCodec"),
    declare("SLICE", "input: tensor", attrs.SliceAttrs, "layout", shape_rules.slice_, kernel="data_layout:slice_",
            codec="layout_codecs:SliceCodec"),
    declare("TILE", "input: tensor", attrs.TileAttrs, "layout", shape_rules.tile, kernel="data_layout:tile",
            codec="layout_codecs:TileCodec"),
    declare("TRANSPOSE", "input: tensor", attrs.TransposeAttrs, "layout", shape_rules.transpose,
            kernel="data_layout:transpose", codec="layout_codecs:TransposeCodec"),
    declare("GATHER", "values: tensor, indices: tensor", attrs.NoAttrs, "", shape_rules.gather,
            kernel="scatter_gather:gather", codec="codec_base:Codec"),
    declare("SCATTER", "values_in: tensor, indices: tensor, input: tensor", attrs.NoAttrs, "", shape_rules.scatter,
            kernel="scatter_gather:scatter", codec="codec_base:Codec"),
    declare("RESIZE", "input: tensor", attrs.ResizeAttrs, "", shape_rules.resize, kernel="image:resize",
            codec="layout_codecs:ResizeCodec"),
    declare("IDENTITY", "input1: tensor", attrs.NoAttrs, "layout", shape_rules.same_as_first,
            kernel="data_layout:identity", codec="codec_base:Codec"),
    declare("CONST", "", attrs.ConstAttrs, "constant", shape_rules.const, kernel="data_nodes:const"),

    # -- seed 001 shape helper ops (Index values; never emitted)
    declare("INDEX_CONST", "", attrs.IndexConstAttrs, "shape_helper constant", shape_rules.index_const,
            kernel="shape_helpers:index_const", emitted=False),
    declare("GET_DIM", "input: tensor", attrs.DimIndexAttrs, "shape_helper", shape_rules.get_dim,
            kernel="shape_helpers:get_dim", emitted=False),
    declare("EXTRACT_DIM", "input: tensor", attrs.DimIndexAttrs, "shape_helper data_dependent",
            shape_rules.extract_dim_rule, kernel="shape_helpers:extract_dim", decay="decay:decay_extract_dim",
            emitted=False),
    declare("DIMS_TO_TENSOR", "dims: index*", attrs.DimsToTensorAttrs, "shape_helper", shape_rules.dims_to_tensor,
            kernel="shape_helpers:dims_to_tensor", decay="decay:decay_dims_to_tensor", emitted=False),
    declare("EXPAND_DIMS", "input: tensor", attrs.IndicesAttrs, "shape_helper layout", shape_rules.expand_dims,
            kernel="shape_helpers:expand_dims", decay="decay:decay_expand_dims", emitted=False),
    declare("COLLAPSE_DIMS", "input: tensor", attrs.IndicesAttrs, "shape_helper layout", shape_rules.collapse_dims,
            kernel="shape_helpers:collapse_dims", decay="decay:decay_collapse_dims", emitted=False),
    declare("INDEX_ADD", "lhs: index, rhs: index", attrs.NoAttrs, "shape_helper index_arith",
            shape_rules.index_binary(add), kernel="shape_helpers:index_add", emitted=False, index_fn=add),
    declare("INDEX_SUB", "lhs: index, rhs: index", attrs.NoAttrs, "shape_helper index_arith",
            shape_rules.index_binary(sub), kernel="shape_helpers:index_sub", emitted=False, index_fn=sub),
    declare("INDEX_MUL", "lhs: index, rhs: index", attrs.NoAttrs, "shape_helper index_arith",
            shape_rules.index_binary(mul), kernel="shape_helpers:index_mul", emitted=False, index_fn=mul),
    declare("INDEX_FLOORDIV", "lhs: index, rhs: index", attrs.NoAttrs, "shape_helper index_arith",
            shape_rules.index_binary(floordiv), kernel="shape_helpers:index_floordiv", emitted=False,
            index_fn=floordiv),
    declare("INDEX_MOD", "lhs: index, rhs: index", attrs.NoAttrs, "shape_helper index_arith",
            shape_rules.index_binary(mod), kernel="shape_helpers:index_mod", emitted=False, index_fn=mod),
    declare("INDEX_MIN", "lhs: index, rhs: index", attrs.NoAttrs, "shape_helper index_arith",
            shape_rules.index_binary(dmin), kernel="shape_helpers:index_min", emitted=False, index_fn=dmin),
    declare("INDEX_MAX", "lhs: index, rhs: index", attrs.NoAttrs, "shape_helper index_arith",
            shape_rules.index_binary(dmax), kernel="shape_helpers:index_max", emitted=False, index_fn=dmax),

    # -- data-dependent ops that decay to static TOSA once their Index operands are known
    declare("DYN_SLICE", "input: tensor, start: index*, size: index*", attrs.NoAttrs, "data_dependent",
            shape_rules.dyn_slice, kernel="shape_helpers:dyn_slice", decay="decay:decay_dyn_slice", emitted=False),
    declare("DYN_TILE", "input: tensor, multiples: index*", attrs.NoAttrs, "data_dependent", shape_rules.dyn_tile,
            kernel="shape_helpers:dyn_tile", decay="decay:decay_dyn_tile", emitted=False),
    declare("IOTA", "length: index", attrs.IotaAttrs, "data_dependent", shape_rules.iota,
            kernel="shape_helpers:iota", decay="decay:decay_iota", emitted=False),
    declare("COUNT_RESCALE", "input: tensor, count: index", attrs.CountRescaleAttrs, "data_dependent",
            shape_rules.count_rescale, kernel="type_conversion:count_rescale", decay="decay:decay_count_rescale",
            emitted=False),
    declare("INTERP_MATRIX", "in_size: index, out_size: index", attrs.InterpMatrixAttrs, "data_dependent",
            shape_rules.interp_matrix, kernel="interpolation:interp_matrix", decay="decay:decay_interp_matrix",
            emitted=False),
    declare("RECURRENT", "x: tensor, w: tensor, r: tensor, optional: tensor*", attrs.RecurrentAttrs,
            "data_dependent", shape_rules.recurrent, kernel="recurrent:recurrent",
            decay="decay_recurrent:decay_recurrent", emitted=False),
    declare("NONZERO", "input: tensor", attrs.NonZeroAttrs, "data_dependent", shape_rules.nonzero,
            kernel="data_dependent:nonzero", decay="decay_data:decay_nonzero", emitted=False),
    declare("DYN_PAD", "input: tensor, padding: index*", attrs.DynPadAttrs, "data_dependent", shape_rules.dyn_pad,
            kernel="shape_helpers:dyn_pad", decay="decay_pad:decay_dyn_pad", emitted=False),

    # -- control flow: ops holding regions (ONNX If/Loop/Scan; see region_rules.py)
    declare("COND_IF", "condition: tensor, inputs: any*", attrs.CondIfAttrs, "region", region_rules.cond_if,
            kernel="control_flow:cond_if", decay="decay_control:decay_cond_if", codec="codecs:RegionCodec"),
    declare("WHILE_LOOP", "inputs: any*", attrs.WhileLoopAttrs, "region", region_rules.while_loop,
            kernel="control_flow:while_loop", decay="decay_control:decay_while_loop", codec="codecs:RegionCodec"),
    declare("IF", "condition: index, inputs: any*", attrs.CondIfAttrs, "data_dependent region",
            region_rules.index_if, kernel="control_flow:index_if", decay="decay_control:decay_if", emitted=False),
    declare("LOOP", "trip_count: index, inputs: any*", attrs.LoopAttrs, "data_dependent region", region_rules.loop,
            kernel="control_flow:loop", decay="decay_control:decay_loop", emitted=False),

    # -- state (TOSA 1.0 EXT-VARIABLE; see variable_rules.py): not PURE, so no pass drops or folds them
    # (passes keep the op order, so reads and writes stay in sequence)
    declare("VARIABLE", "", attrs.VariableAttrs, "", variable_rules.variable, kernel="variables:variable",
            codec="codecs:StateCodec", stateful=True),
    declare("VARIABLE_READ", "", attrs.VariableRefAttrs, "", variable_rules.variable_read,
            kernel="variables:variable_read", codec="codecs:StateCodec", stateful=True),
    declare("VARIABLE_WRITE", "input1: tensor", attrs.VariableRefAttrs, "", variable_rules.variable_write,
            kernel="variables:variable_write", codec="codecs:StateCodec", stateful=True),

    # -- TOSA 1.0 EXT-FFT (see fft_rules.py)
    declare("FFT2D", "input_real: tensor, input_imag: tensor", attrs.Fft2dAttrs, "", fft_rules.fft2d,
            kernel="fft:fft2d", codec="codecs:FftCodec"),
    declare("RFFT2D", "input_real: tensor", attrs.Rfft2dAttrs, "", fft_rules.rfft2d, kernel="fft:rfft2d",
            codec="codecs:FftCodec"),
)


# TOSA ops we deliberately do not produce yet, with the reason (the completeness test reads this).
UNSUPPORTED_TOSA = {
    "CUSTOM": "custom ops are rejected at import",
}


def _by_name(table: tuple[OpDef, ...]) -> dict[str, OpDef]:
    ops: dict[str, OpDef] = {}
    for op in table:
        if op.name in ops:
            raise ValueError(f"op {op.name} declared twice")
        ops[op.name] = op
    return ops


OPS: dict[str, OpDef] = _by_name(TABLE)
Op = SimpleNamespace(**OPS)   # Op.CONV2D and so on
