"""Typed attributes: one frozen dataclass per TOSA attribute table.

Field names follow the TOSA specification and schema (``pad``, ``stride``,
``dilation``, ``acc_type``, ``input_zp``). Parameters that TOSA 1.0 passes as
constant operands (zero points, MUL's shift, RESHAPE/SLICE/PAD/TILE shapes,
TABLE's table, RESCALE's multiplier and shift) are attributes here; the
emitter materializes them as CONST/CONST_SHAPE operands and the reader folds
them back. That keeps passes and kernels free of constant chasing.
Defaults are filled by the readers that build these, not at call sites.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Union, get_origin, get_type_hints

from ..records import dataclass   # the standard classes, built without per-class exec (start-up, issue 13)
from ..symbolic.expr import Dim, Expr  # noqa: F401  (Expr: Dim's forward reference, for get_type_hints)
from .dtypes import DType
from .graph import Graph   # regions; graph.py imports nothing of the op table, so no cycle

if TYPE_CHECKING:
    from numpy.typing import NDArray
else:
    # At run time too, for get_type_hints (the printer reads the field types as their classes): the
    # class itself, since importing numpy.typing costs ~7 ms of start-up (issue 13).
    from numpy import ndarray as NDArray


@dataclass(frozen=True)
class NoAttrs:
    pass


@dataclass(frozen=True, eq=False)
class ConstAttrs:
    values: NDArray[Any]
    int48: bool = False             # int64 values that are INT48 data (numpy has no 48-bit type)
    # The element type's DType value when numpy cannot tell it: "i4" (int8 values in [-7, 7]), "bf16"
    # (float32 values), "index" (a TOSA shape value from CONST_SHAPE, rank-1 int64); "" = from the values.
    element_type: str = ""


@dataclass(frozen=True, eq=False)
class TableAttrs:
    table: NDArray[Any]


@dataclass(frozen=True)
class ClampAttrs:
    min_val: float
    max_val: float
    nan_mode: str = "PROPAGATE"


@dataclass(frozen=True)
class NanModeAttrs:
    nan_mode: str = "PROPAGATE"


@dataclass(frozen=True)
class MulAttrs:
    shift: int = 0


@dataclass(frozen=True)
class ArithmeticRightShiftAttrs:
    round: bool = False


@dataclass(frozen=True)
class NegateAttrs:
    input_zp: int = 0
    output_zp: int = 0


@dataclass(frozen=True)
class CastAttrs:
    dtype: DType


@dataclass(frozen=True)
class AxisAttrs:
    axis: int


@dataclass(frozen=True)
class AxisNanAttrs:
    axis: int
    nan_mode: str = "PROPAGATE"


@dataclass(frozen=True)
class TransposeAttrs:
    perms: tuple[int, ...]


@dataclass(frozen=True)
class ReshapeAttrs:
    """``new_shape`` spells every output dim; -1 marks a dim given by the next shape_symbols operand."""

    new_shape: tuple[Dim, ...]


@dataclass(frozen=True)
class SliceAttrs:
    start: tuple[Dim, ...]
    size: tuple[Dim, ...]


@dataclass(frozen=True)
class PadAttrs:
    padding: tuple[Dim, ...]  # [d0_before, d0_after, d1_before, ...]
    pad_const: float = 0.0


@dataclass(frozen=True)
class TileAttrs:
    multiples: tuple[Dim, ...]


@dataclass(frozen=True)
class MatMulAttrs:
    a_zp: int = 0
    b_zp: int = 0


@dataclass(frozen=True)
class Conv2dAttrs:
    pad: tuple[int, ...]        # [top, bottom, left, right]
    stride: tuple[int, ...]     # [y, x]
    dilation: tuple[int, ...]   # [y, x]
    acc_type: DType
    input_zp: int = 0
    weight_zp: int = 0
    local_bound: bool = False


@dataclass(frozen=True)
class TransposeConv2dAttrs:
    out_pad: tuple[int, ...]    # [top, bottom, left, right]
    stride: tuple[int, ...]
    acc_type: DType
    input_zp: int = 0
    weight_zp: int = 0
    local_bound: bool = False


@dataclass(frozen=True)
class AvgPool2dAttrs:
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    pad: tuple[int, ...]
    acc_type: DType
    input_zp: int = 0
    output_zp: int = 0


@dataclass(frozen=True)
class MaxPool2dAttrs:
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    pad: tuple[int, ...]
    nan_mode: str = "PROPAGATE"


@dataclass(frozen=True)
class ResizeAttrs:
    scale: tuple[int, ...]      # [scale_y_n, scale_y_d, scale_x_n, scale_x_d]
    offset: tuple[int, ...]     # [offset_y, offset_x]
    border: tuple[int, ...]     # [border_y, border_x]
    mode: str         # NEAREST | BILINEAR


@dataclass(frozen=True)
class RescaleAttrs:
    multiplier: tuple[int, ...]
    shift: tuple[int, ...]
    input_zp: int = 0
    output_zp: int = 0
    scale32: bool = True
    rounding_mode: str = "SINGLE_ROUND"
    per_channel: bool = False
    input_unsigned: bool = False
    output_unsigned: bool = False
    output_dtype: DType = DType.INT8  # the result element type (TOSA carries it on the output tensor)


# -- shape helper and data-dependent ops (seed 001) --------------------------

@dataclass(frozen=True)
class CountRescaleAttrs:
    """COUNT_RESCALE: RESCALE (DOUBLE_ROUND) of an int32 sum by ``multiplier * 2**(exponent - 31)`` divided by
    the Index operand ``count``, folded into the multiplier as TFLite's QuantizedMeanOrSum folds ``1 / n``
    (see :mod:`tosaconv.ir.count_rescale`); ``output_zp`` is added and the result saturates to ``output_dtype``."""

    multiplier: int
    exponent: int
    output_zp: int
    output_dtype: DType


@dataclass(frozen=True)
class IndexConstAttrs:
    value: int


@dataclass(frozen=True)
class DimIndexAttrs:
    dim_index: int


@dataclass(frozen=True)
class DimsToTensorAttrs:
    dtype: DType


@dataclass(frozen=True)
class IndicesAttrs:
    indices: tuple[int, ...]


@dataclass(frozen=True)
class IotaAttrs:
    dtype: DType


@dataclass(frozen=True)
class InterpMatrixAttrs:
    """INTERP_MATRIX: ONNX Resize's 1-D interpolation weights for one axis, as a ``[1, in, out]`` tensor.

    ``scale`` is ONNX's scale for the axis (0.0: ``out / in``, when Resize was given sizes), held as
    the reference holds it (``scale_dtype`` float32 for a ``scales`` input, float64 otherwise).
    """

    mode: str                  # nearest | linear | cubic
    coordinate_mode: str       # ONNX coordinate_transformation_mode (not tf_crop_and_resize)
    nearest_mode: str
    cubic_a: float
    exclude_outside: bool
    antialias: bool
    scale: float
    scale_dtype: str
    dtype: DType


@dataclass(frozen=True)
class Conv3dAttrs:
    pad: tuple[int, ...]        # [d0, d1, top, bottom, left, right]
    stride: tuple[int, ...]     # [d, y, x]
    dilation: tuple[int, ...]   # [d, y, x]
    acc_type: DType
    input_zp: int = 0
    weight_zp: int = 0
    local_bound: bool = False


@dataclass(frozen=True)
class RecurrentAttrs:
    """ONNX LSTM/GRU/RNN as one data-dependent op (unrolled by :mod:`tosaconv.passes.decay_recurrent`).

    ``cell`` is LSTM, GRU or RNN; ``direction`` forward, reverse or bidirectional; ``layout`` ONNX's
    (0: [seq, batch, ...], 1: [batch, seq, ...]). ``activations`` lists every function of every
    direction in ONNX order (f, g[, h] for the forward direction, then the reverse one), each as
    ``Name(alpha,beta)`` joined by ``;`` with the importer's resolved alpha and beta (see
    :func:`activations_text`). ``clip`` 0 means no clipping. The ``has_*`` flags say which optional
    operands follow X, W and R, in ONNX order: B, sequence_lens, initial_h, initial_c, P.
    """

    cell: str
    direction: str
    hidden_size: int
    activations: str
    clip: float = 0.0
    input_forget: bool = False
    linear_before_reset: bool = False
    layout: int = 0
    has_bias: bool = False
    has_sequence_lens: bool = False
    has_initial_h: bool = False
    has_initial_c: bool = False
    has_peepholes: bool = False


def activations_text(items: Iterable[tuple[str, float, float]]) -> str:
    """``RecurrentAttrs.activations`` from ``(name, alpha, beta)`` triples."""
    return ";".join(f"{name}({float(alpha)!r},{float(beta)!r})" for name, alpha, beta in items)


def parse_activations(text: str) -> list[tuple[str, float, float]]:
    """The ``(name, alpha, beta)`` triples of ``RecurrentAttrs.activations``."""
    out: list[tuple[str, float, float]] = []
    for item in text.split(";"):
        name, _, args = item.partition("(")
        alpha, beta = (float(v) for v in args.rstrip(")").split(","))
        out.append((name, alpha, beta))
    return out


def attr_items(attrs: "Attrs") -> list[tuple[str, Any]]:
    """``(name, value)`` pairs of an attribute dataclass, in declaration order."""
    return [(f.name, getattr(attrs, f.name)) for f in fields(attrs)]


# -- control flow: ops that hold regions (IR graphs isolated from above) -----------


@dataclass(frozen=True, eq=False)
class CondIfAttrs:
    """COND_IF (tensor condition) and IF (Index condition): inputs are the op's operands after the condition."""

    then_graph: Graph
    else_graph: Graph


@dataclass(frozen=True, eq=False)
class WhileLoopAttrs:
    cond_graph: Graph
    body_graph: Graph


@dataclass(frozen=True, eq=False)
class LoopAttrs:
    """LOOP (ONNX Loop and Scan until the trip count is bound): the body runs ``iterations`` times.

    Operands: trip_count (Index), the initial condition when ``has_cond``, ``num_state`` loop-carried
    values, one tensor per scan input, then captured values. Body inputs: the iteration number
    (Index), the condition when ``has_cond``, the state, one slice per scan input, the captures. Body
    outputs: the condition when ``has_cond``, the state, one slice per scan output. ``*_reverse``
    entries are 1 for a scan that runs from the end of its axis.
    """

    body: Graph
    num_state: int
    scan_input_axes: tuple[int, ...]
    scan_input_reverse: tuple[int, ...]
    scan_output_axes: tuple[int, ...]
    scan_output_reverse: tuple[int, ...]
    iterations: tuple[Dim, ...]          # one dim: how many iterations run (the scan outputs' length)
    has_cond: bool = False


@dataclass(frozen=True)
class NonZeroAttrs:
    """``count`` names the symbol of the result's second dim: how many elements are non-zero."""

    count: str


# -- state: TOSA 1.0 VARIABLE / VARIABLE_READ / VARIABLE_WRITE (EXT-VARIABLE) ---------------
@dataclass(frozen=True, eq=False)
class VariableAttrs:
    """VARIABLE declares the program state ``name`` (one tensor of ``dtype`` and static ``shape``) that
    persists from one run of the program to the next; it holds ``initial`` before the first run."""

    name: str
    dtype: DType
    shape: tuple[int, ...]
    initial: NDArray[Any]


@dataclass(frozen=True)
class VariableRefAttrs:
    """VARIABLE_READ / VARIABLE_WRITE: the variable they access and its type (as declared)."""

    name: str
    dtype: DType
    shape: tuple[int, ...]


@dataclass(frozen=True)
class DynPadAttrs:
    """DYN_PAD: a pad whose amounts are Index operands (computed from shapes). ``mode`` is constant,
    edge, reflect, wrap (ONNX) or symmetric (TFLite MIRROR_PAD); a negative amount crops, as in ONNX.
    It decays to SLICE/PAD/CONCAT once bound."""

    mode: str = "constant"
    pad_const: float = 0.0


# -- TOSA 1.0 EXT-FFT: FFT2D / RFFT2D ------------------------------------------------------------
@dataclass(frozen=True)
class Fft2dAttrs:
    """FFT2D: ``inverse`` flips the sign of the exponent (no normalization either way)."""

    inverse: bool = False
    local_bound: bool = False


@dataclass(frozen=True)
class Rfft2dAttrs:
    """RFFT2D: a forward FFT2D of real input that keeps the ``W/2 + 1`` non-redundant columns."""

    local_bound: bool = False


# Every attribute class: the type of ``Operation.attrs`` (the op table says which one an op takes).
Attrs = Union[
    NoAttrs, ConstAttrs, TableAttrs, ClampAttrs, NanModeAttrs, MulAttrs, ArithmeticRightShiftAttrs,
    NegateAttrs, CastAttrs, AxisAttrs, AxisNanAttrs, TransposeAttrs, ReshapeAttrs, SliceAttrs, PadAttrs,
    TileAttrs, MatMulAttrs, Conv2dAttrs, TransposeConv2dAttrs, AvgPool2dAttrs, MaxPool2dAttrs, ResizeAttrs,
    RescaleAttrs, CountRescaleAttrs, IndexConstAttrs, DimIndexAttrs, DimsToTensorAttrs, IndicesAttrs,
    IotaAttrs, InterpMatrixAttrs, Conv3dAttrs, RecurrentAttrs, CondIfAttrs, WhileLoopAttrs, LoopAttrs,
    NonZeroAttrs, VariableAttrs, VariableRefAttrs, DynPadAttrs, Fft2dAttrs, Rfft2dAttrs,
]


@functools.lru_cache(maxsize=None)
def field_types(attrs_class: type) -> tuple[tuple[str, Any], ...]:
    """``(name, type)`` of each field of an attribute dataclass, in declaration order; a generic type
    stands as its class (``tuple[int, ...]`` as ``tuple``, ``NDArray[Any]`` as ``np.ndarray``).
    Here, not in the printer, so the verifier's static check does not import the printer (start-up, issue 13)."""
    hints = get_type_hints(attrs_class)
    return tuple((f.name, get_origin(hints[f.name]) or hints[f.name]) for f in fields(attrs_class))


@functools.lru_cache(maxsize=None)
def tuple_fields(attrs_class: type) -> tuple[str, ...]:
    """The fields of an attribute dataclass declared as tuples: those :func:`field_types` gives as ``tuple``,
    read from the annotations' text without evaluating them all (``get_type_hints`` cost the verifier's
    static check ~0.1 ms per attribute class in every conversion, start-up, issue 13)."""
    return tuple(f.name for f in fields(attrs_class) if _declares_tuple(f.type))


def _declares_tuple(annotation: object) -> bool:
    if isinstance(annotation, str):   # ``from __future__ import annotations``: the text as written
        return annotation == "tuple" or annotation.startswith("tuple[")
    return (get_origin(annotation) or annotation) is tuple
