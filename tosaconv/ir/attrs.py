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

from dataclasses import dataclass, fields

import numpy as np

from .dtypes import DType


@dataclass(frozen=True)
class NoAttrs:
    pass


@dataclass(frozen=True, eq=False)
class ConstAttrs:
    values: np.ndarray


@dataclass(frozen=True, eq=False)
class TableAttrs:
    table: np.ndarray


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
    perms: tuple


@dataclass(frozen=True)
class ReshapeAttrs:
    """``new_shape`` spells every output dim; -1 marks a dim given by the next shape_symbols operand."""

    new_shape: tuple


@dataclass(frozen=True)
class SliceAttrs:
    start: tuple
    size: tuple


@dataclass(frozen=True)
class PadAttrs:
    padding: tuple  # [d0_before, d0_after, d1_before, ...]
    pad_const: float = 0.0


@dataclass(frozen=True)
class TileAttrs:
    multiples: tuple


@dataclass(frozen=True)
class MatMulAttrs:
    a_zp: int = 0
    b_zp: int = 0


@dataclass(frozen=True)
class Conv2dAttrs:
    pad: tuple        # [top, bottom, left, right]
    stride: tuple     # [y, x]
    dilation: tuple   # [y, x]
    acc_type: DType
    input_zp: int = 0
    weight_zp: int = 0
    local_bound: bool = False


@dataclass(frozen=True)
class TransposeConv2dAttrs:
    out_pad: tuple    # [top, bottom, left, right]
    stride: tuple
    acc_type: DType
    input_zp: int = 0
    weight_zp: int = 0
    local_bound: bool = False


@dataclass(frozen=True)
class AvgPool2dAttrs:
    kernel: tuple
    stride: tuple
    pad: tuple
    acc_type: DType
    input_zp: int = 0
    output_zp: int = 0


@dataclass(frozen=True)
class MaxPool2dAttrs:
    kernel: tuple
    stride: tuple
    pad: tuple
    nan_mode: str = "PROPAGATE"


@dataclass(frozen=True)
class ResizeAttrs:
    scale: tuple      # [scale_y_n, scale_y_d, scale_x_n, scale_x_d]
    offset: tuple     # [offset_y, offset_x]
    border: tuple     # [border_y, border_x]
    mode: str         # NEAREST | BILINEAR


@dataclass(frozen=True)
class RescaleAttrs:
    multiplier: tuple
    shift: tuple
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
    indices: tuple


@dataclass(frozen=True)
class IotaAttrs:
    dtype: DType


def attr_items(attrs) -> list:
    """``(name, value)`` pairs of an attribute dataclass, in declaration order."""
    return [(f.name, getattr(attrs, f.name)) for f in fields(attrs)]
