"""Codecs of the data-layout ops whose parameters are SHAPE operands.

RESHAPE, PAD, SLICE, TILE and RESIZE take their shapes as ``!tosa.shape``
operands produced by CONST_SHAPE (int64 values; never a ``-1``), and PAD also
takes ``pad_const`` as a [1] tensor of the input type. TRANSPOSE is here too,
though its ``perms`` stay an attribute in TOSA 1.0.
"""
from __future__ import annotations

from ..ir import attrs as A
from . import params as P
from ..ir.types import TensorType
from .codec_base import Codec, Encoded, Fields, Params, TypeList
from .schema import RESIZE_MODES


class ReshapeCodec(Codec):
    roles = ("shape",)

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        if any(d < 0 for d in attrs.new_shape):
            raise ValueError(f"new_shape {list(attrs.new_shape)} still has symbolic (-1) entries")
        return [P.shape_param("shape", attrs.new_shape)], {}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.ReshapeAttrs(P.int_tuple(params["shape"]))


class PadCodec(Codec):
    roles = ("padding", "pad_const")

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [P.shape_param("padding", attrs.padding),
                P.scalar_param("pad_const", attrs.pad_const, ins[0].dtype)], {}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.PadAttrs(P.int_tuple(params["padding"]), P.scalar_value(params["pad_const"], "pad_const"))


class SliceCodec(Codec):
    roles = ("start", "size")

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [P.shape_param("start", attrs.start), P.shape_param("size", attrs.size)], {}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.SliceAttrs(P.int_tuple(params["start"]), P.int_tuple(params["size"]))


class TileCodec(Codec):
    roles = ("multiples",)

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [P.shape_param("multiples", attrs.multiples)], {}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.TileAttrs(P.int_tuple(params["multiples"]))


class TransposeCodec(Codec):
    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [], {"perms": attrs.perms}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.TransposeAttrs(tuple(fields.get("perms", ())))


class ResizeCodec(Codec):
    roles = ("scale", "offset", "border")

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        shapes = [P.shape_param("scale", attrs.scale), P.shape_param("offset", attrs.offset),
                  P.shape_param("border", attrs.border)]
        return shapes, {"mode": P.enum_code(RESIZE_MODES, attrs.mode, "mode")}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.ResizeAttrs(P.int_tuple(params["scale"]), P.int_tuple(params["offset"]),
                             P.int_tuple(params["border"]),
                             P.enum_name(RESIZE_MODES, fields.get("mode", 0), "mode"))

