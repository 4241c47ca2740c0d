"""The codec protocol shared by every op's attribute encoder.

A codec converts one IR op's typed attributes into TOSA 1.0 constant operands
plus the fields of its attribute table, and back. This base class is the
codec of ops with neither (ADD, SELECT, GATHER...); ``codecs.py`` and
``layout_codecs.py`` hold the others. ``roles`` names the constant operands,
in the order they follow the data operands, so the reader knows how many
trailing operands to fold.
"""
from __future__ import annotations

from ..ir import attrs as A
from . import params as P
from .schema import NAN_MODES


class Codec:
    """No constant operands, an empty attribute table, ``NoAttrs``."""

    roles: tuple = ()
    multi_result: bool = False   # the TOSA form has several outputs (FFT2D, RFFT2D)

    def encode(self, attrs, ins, out):
        return [], {}

    def decode(self, fields, params, ins, out):
        return A.NoAttrs()


def nan_code(attrs) -> int:
    return P.enum_code(NAN_MODES, attrs.nan_mode, "nan_mode")


def nan_name(fields) -> str:
    return P.enum_name(NAN_MODES, fields.get("nan_mode", 0), "nan_mode", default="PROPAGATE")
