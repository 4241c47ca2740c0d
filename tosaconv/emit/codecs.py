"""One codec per op: IR attributes ↔ TOSA 1.0 constant operands + attribute table.

``encode(attrs, ins, out)`` returns the extra operands (:class:`Param`, in the
spec's operand order, after the data operands) and the attribute table's
fields by name. ``decode(fields, params, ins, out)`` is its inverse: it gets
the folded constant operands by role. ``ins`` are the data operands' tensor
types and ``out`` the result type, since some operand dtypes (zero points) and
attributes (CAST's target) live there. :data:`CODECS` maps op names to codecs;
the op names of the IR and of TOSA are the same. It is read off the op table
(each row's ``codec`` pointer names its codec class), one instance per class.
"""
from __future__ import annotations

import numpy as np

from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.ops import OPS, resolve
from . import params as P
from ..ir.types import TensorType
from .codec_base import Codec, Encoded, Fields, Params, TypeList, nan_code, nan_name
from .schema import ROUNDING_MODES
from .tensor_data import from_le_bytes, to_le_bytes

class NanCodec(Codec):
    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [], {"nan_mode": nan_code(attrs)}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.NanModeAttrs(nan_name(fields))


class AxisCodec(Codec):
    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [], {"axis": attrs.axis}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.AxisAttrs(fields.get("axis", 0))


class AxisNanCodec(Codec):
    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [], {"axis": attrs.axis, "nan_mode": nan_code(attrs)}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.AxisNanAttrs(fields.get("axis", 0), nan_name(fields))


class ShiftCodec(Codec):
    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [], {"round": attrs.round}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.ArithmeticRightShiftAttrs(fields.get("round", False))


class MulCodec(Codec):
    roles = ("shift",)

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [P.scalar_param("shift", attrs.shift, DType.INT8)], {}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.MulAttrs(P.int_value(params["shift"], "shift"))


class NegateCodec(Codec):
    roles = ("input_zp", "output_zp")

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [P.scalar_param("input_zp", attrs.input_zp, ins[0].dtype),
                P.scalar_param("output_zp", attrs.output_zp, out.dtype)], {}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.NegateAttrs(P.int_value(params["input_zp"], "input_zp"),
                             P.int_value(params["output_zp"], "output_zp"))


class ClampCodec(Codec):
    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        dtype = ins[0].dtype
        return [], {"min_val": _bound_bytes(attrs.min_val, dtype, "min_val"),
                    "max_val": _bound_bytes(attrs.max_val, dtype, "max_val"), "nan_mode": nan_code(attrs)}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        dtype = ins[0].dtype
        return A.ClampAttrs(_bound_value(fields.get("min_val"), dtype, "min_val"),
                            _bound_value(fields.get("max_val"), dtype, "max_val"), nan_name(fields))


_BOUNDS: dict[tuple[type, str, DType], bytes] = {}   # (exact type and text of a bound, dtype) -> its bytes: a model repeats a few bounds


def _bound_bytes(value: float, dtype: DType, role: str) -> bytes:
    key = (type(value), repr(value), dtype)
    found = _BOUNDS.get(key)
    if found is None:
        if len(_BOUNDS) >= 4096:    # a long-lived process converting many models keeps it small
            _BOUNDS.clear()
        found = _BOUNDS[key] = _encode_bound(value, dtype, role)
    return found


def _encode_bound(value: float, dtype: DType, role: str) -> bytes:
    if not dtype.is_float and not float(value).is_integer():
        raise ValueError(f"CLAMP {role} {value} is not an integer but the input is {dtype.name}")
    arr = np.array([value], dtype=np.float64 if dtype.is_float else np.int64)
    with np.errstate(over="ignore"):   # a float bound beyond the type's range is its infinity (IEEE rounding)
        return to_le_bytes(arr, dtype).tobytes()


def _bound_value(data: object, dtype: DType, role: str) -> float | int:
    if data is None:
        raise ValueError(f"CLAMP has no {role}")
    value = from_le_bytes(data, dtype, (1,))[0]
    return float(value) if dtype.is_float else int(value)


class CastCodec(Codec):
    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        if attrs.dtype != out.dtype:
            raise ValueError(f"CAST to {attrs.dtype.name} has a {out.dtype.name} result")
        return [], {}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.CastAttrs(out.dtype)


class TableCodec(Codec):
    roles = ("table",)

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [P.Param("table", ins[0].dtype, np.asarray(attrs.table).reshape(-1))], {}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.TableAttrs(params["table"])


class RescaleCodec(Codec):
    roles = ("multiplier", "shift", "input_zp", "output_zp")

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        mult_type = DType.INT32 if attrs.scale32 else DType.INT16
        if len(attrs.multiplier) != len(attrs.shift):
            raise ValueError("RESCALE multiplier and shift differ in length")
        params = [P.vector_param("multiplier", attrs.multiplier, mult_type),
                  P.vector_param("shift", attrs.shift, DType.INT8),
                  P.scalar_param("input_zp", attrs.input_zp, ins[0].dtype, attrs.input_unsigned),
                  P.scalar_param("output_zp", attrs.output_zp, out.dtype, attrs.output_unsigned)]
        fields = {"scale32": attrs.scale32, "per_channel": attrs.per_channel,
                  "rounding_mode": P.enum_code(ROUNDING_MODES, attrs.rounding_mode, "rounding_mode"),
                  "input_unsigned": attrs.input_unsigned, "output_unsigned": attrs.output_unsigned}
        return params, fields

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        in_u, out_u = fields.get("input_unsigned", False), fields.get("output_unsigned", False)
        return A.RescaleAttrs(
            P.int_tuple(params["multiplier"]), P.int_tuple(params["shift"]),
            P.int_value(params["input_zp"], "input_zp", in_u),
            P.int_value(params["output_zp"], "output_zp", out_u),
            fields.get("scale32", False),
            P.enum_name(ROUNDING_MODES, fields.get("rounding_mode", 0), "rounding_mode", "SINGLE_ROUND"),
            fields.get("per_channel", False), in_u, out_u, out.dtype)


class MatMulCodec(Codec):
    roles = ("a_zp", "b_zp")

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [P.scalar_param("a_zp", attrs.a_zp, ins[0].dtype),
                P.scalar_param("b_zp", attrs.b_zp, ins[1].dtype)], {}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.MatMulAttrs(P.int_value(params["a_zp"], "a_zp"), P.int_value(params["b_zp"], "b_zp"))


def _conv_zps(attrs: A.Attrs, ins: TypeList) -> list[P.Param]:
    return [P.scalar_param("input_zp", attrs.input_zp, ins[0].dtype),
            P.scalar_param("weight_zp", attrs.weight_zp, ins[1].dtype)]


def _zps(params: Params) -> tuple[int, int]:
    return P.int_value(params["input_zp"], "input_zp"), P.int_value(params["weight_zp"], "weight_zp")


class ConvCodec(Codec):
    roles = ("input_zp", "weight_zp")

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        fields = {"pad": attrs.pad, "stride": attrs.stride, "dilation": attrs.dilation,
                  "local_bound": attrs.local_bound, "acc_type": P.acc_code(attrs.acc_type)}
        return _conv_zps(attrs, ins), fields

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.Conv2dAttrs(fields.get("pad", ()), fields.get("stride", ()), fields.get("dilation", ()),
                             P.acc_dtype(fields.get("acc_type", 0)), *_zps(params),
                             fields.get("local_bound", False))


class Conv3dCodec(ConvCodec):
    """CONV3D: CONV2D's operands and table, with three-axis stride and dilation and six pads."""

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.Conv3dAttrs(fields.get("pad", ()), fields.get("stride", ()), fields.get("dilation", ()),
                             P.acc_dtype(fields.get("acc_type", 0)), *_zps(params),
                             fields.get("local_bound", False))


class RegionCodec(Codec):
    """COND_IF / WHILE_LOOP: no constant operands; the writer lowers the regions and fills the table
    with their names, and the reader lifts them back (neither goes through this codec's tables)."""


class TransposeConvCodec(Codec):
    roles = ("input_zp", "weight_zp")

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        fields = {"out_pad": attrs.out_pad, "stride": attrs.stride,
                  "local_bound": attrs.local_bound, "acc_type": P.acc_code(attrs.acc_type)}
        return _conv_zps(attrs, ins), fields

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.TransposeConv2dAttrs(fields.get("out_pad", ()), fields.get("stride", ()),
                                      P.acc_dtype(fields.get("acc_type", 0)), *_zps(params),
                                      fields.get("local_bound", False))


class AvgPoolCodec(Codec):
    roles = ("input_zp", "output_zp")

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        params = [P.scalar_param("input_zp", attrs.input_zp, ins[0].dtype),
                  P.scalar_param("output_zp", attrs.output_zp, out.dtype)]
        return params, {"kernel": attrs.kernel, "stride": attrs.stride, "pad": attrs.pad,
                        "acc_type": P.acc_code(attrs.acc_type)}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.AvgPool2dAttrs(fields.get("kernel", ()), fields.get("stride", ()), fields.get("pad", ()),
                                P.acc_dtype(fields.get("acc_type", 0)),
                                P.int_value(params["input_zp"], "input_zp"),
                                P.int_value(params["output_zp"], "output_zp"))


class MaxPoolCodec(Codec):
    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        return [], {"kernel": attrs.kernel, "stride": attrs.stride, "pad": attrs.pad, "nan_mode": nan_code(attrs)}

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        return A.MaxPool2dAttrs(fields.get("kernel", ()), fields.get("stride", ()), fields.get("pad", ()),
                                nan_name(fields))


class StateCodec(Codec):
    """VARIABLE / VARIABLE_READ / VARIABLE_WRITE: no constant operands and empty tables; the writer and
    the reader go through :mod:`.variables` (a variable is a tensor, its accesses IDENTITY ops)."""


class FftCodec(Codec):
    """FFT2D / RFFT2D (EXT-FFT): attribute table only (``inverse`` for FFT2D, ``local_bound``)."""

    multi_result = True

    def encode(self, attrs: A.Attrs, ins: TypeList, out: TensorType) -> Encoded:
        fields = {"local_bound": attrs.local_bound}
        if isinstance(attrs, A.Fft2dAttrs):
            fields["inverse"] = attrs.inverse
        return [], fields

    def decode(self, fields: Fields, params: Params, ins: TypeList, out: TensorType) -> A.Attrs:
        if len(ins) == 2:
            return A.Fft2dAttrs(bool(fields.get("inverse", False)), bool(fields.get("local_bound", False)))
        return A.Rfft2dAttrs(bool(fields.get("local_bound", False)))


def codecs_from_table(ops: dict) -> dict:
    """TOSA op name -> codec, for every op whose table row points at a codec class (one instance per class).

    Called when this module has defined its classes, so the ``codecs:`` pointers resolve to them."""
    instances: dict = {}
    registry: dict = {}
    for op in ops.values():
        if op.codec is not None:
            if op.codec not in instances:
                instances[op.codec] = resolve(op.codec)()
            registry[op.tosa] = instances[op.codec]
    return registry


CODECS: dict = codecs_from_table(OPS)
# plain ops whose TOSA form has several outputs
MULTI_RESULT_OPS = frozenset(name for name, codec in CODECS.items() if codec.multi_result)
