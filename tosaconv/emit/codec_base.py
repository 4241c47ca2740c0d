"""The codec protocol shared by every op's attribute encoder.

A codec converts one IR op's typed attributes into TOSA 1.0 constant operands
plus the fields of its attribute table, and back. This base class is the
codec of ops with neither (ADD, SELECT, GATHER...); ``codecs.py`` and
``layout_codecs.py`` hold the others. ``roles`` names the constant operands,
in the order they follow the data operands, so the reader knows how many
trailing operands to fold.
"""
from __future__ import annotations

from typing import Mapping, Sequence
import numpy as np

from ..ir import attrs as A
from ..ir.types import TensorType
from . import params as P
from .schema import NAN_MODES

TypeList = Sequence[TensorType]                 # the data operands' tensor types
Fields = Mapping[str, object]                   # an attribute table's fields by name
Params = Mapping[str, np.ndarray]               # the folded constant operands by role
Encoded = tuple[list[P.Param], dict[str, object]]   # extra operands and the attribute table's fields


class Codec:
    """No constant operands, an empty attribute table, ``NoAttrs``."""

    roles: tuple = ()
    multi_result: bool = False   # the TOSA form has several outputs (FFT2D, RFFT2D)

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [], {}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.NoAttrs()


def nan_code(attrs: A.Attrs) -> int:
    return P.enum_code(NAN_MODES, attrs.nan_mode, "nan_mode")


def nan_name(fields: Fields) -> str:
    return P.enum_name(NAN_MODES, fields.get("nan_mode", 0), "nan_mode", default="PROPAGATE")
