"""Rewriting MediaPipe's Convolution2DTransposeBias into builtin ops, so LiteRT can judge tosaconv on it.

LiteRT's pip interpreter has no MediaPipe custom ops. ``Convolution2DTransposeBias``
is TFLite's reference TRANSPOSE_CONV plus a bias (see
``tosaconv/importers/tflite/ops/custom.py``), and builtin TRANSPOSE_CONV
version 3 takes the bias as a fourth input: :func:`to_builtin` copies a model
op by op through :class:`ModelBuilder` and turns each such custom op into
TRANSPOSE_CONV(output_shape, weights, input, bias) with the output size the
custom op computes itself. tosaconv converts the original file; LiteRT runs
the rewritten one.

:class:`CustomOptionsBuilder` is a ModelBuilder that also writes an
operator's ``custom_options`` bytes (MediaPipe stores a C struct there), for
the one-op tests.
"""
from __future__ import annotations

import struct

import numpy as np
import tflite

from tosaconv.importers.tflite import builder as _builder
from tosaconv.importers.tflite.builder import ModelBuilder
from tosaconv.importers.tflite.node import _OPTION_TYPES
from tosaconv.importers.tflite.ops.custom import read_custom_options, transpose_conv_params
from tosaconv.importers.tflite.reader import read_model

TRANSPOSE_CONV_BIAS = "Convolution2DTransposeBias"
_PADDING_CODES = {"SAME": tflite.Padding.SAME, "VALID": tflite.Padding.VALID}


def transpose_conv_bias_options(padding: str, stride_h: int, stride_w: int) -> bytes:
    """The custom options MediaPipe's converter writes: TfLiteTransposeConvParams (padding 1 SAME / 2 VALID)."""
    return struct.pack("<iii", {"SAME": 1, "VALID": 2}[padding], stride_w, stride_h)


def to_builtin(data: bytes) -> bytes:
    """``data`` with every Convolution2DTransposeBias as builtin TRANSPOSE_CONV (v3, with bias)."""
    model = read_model(data)
    options = read_custom_options(data)
    m = ModelBuilder("tosaconv test: custom ops rewritten into builtin ops")
    for t in model.tensors:
        quant = None if t.quant is None else (t.quant.scale.tolist(), t.quant.zero_point.tolist(), t.quant.axis)
        if t.data is not None:
            m.const(t.name, t.data, t.type_name, quant=quant)
        else:
            m.tensor(t.name, t.shape, t.type_name, t.signature, quant)
    m.inputs, m.outputs = list(model.inputs), list(model.outputs)
    for op in model.ops:
        if op.custom and op.op_type == TRANSPOSE_CONV_BIAS:
            _transpose_conv(m, model, op, options.get(op.index, b""))
        elif op.custom:
            raise ValueError(f"custom op {op.op_type} has no builtin equivalent to rewrite it into")
        else:
            name = _OPTION_TYPES.get(op.options_type) if op.options is not None else None
            m.op(op.op_type, op.inputs, op.outputs, name, op.version, **_fields(name, op.options))
    if model.input_names or model.output_names:
        m.sign([model.input_names.get(i, model.tensors[i].name) for i in model.inputs],
               [model.output_names.get(i, model.tensors[i].name) for i in model.outputs])
    return m.finish()


def _transpose_conv(m: ModelBuilder, model, op, options: bytes):
    padding, stride_h, stride_w = transpose_conv_params(options, TRANSPOSE_CONV_BIAS)
    x, w, b = op.inputs
    out_shape = model.tensors[op.outputs[0]].shape
    shape = m.const(f"{model.tensors[op.outputs[0]].name}/output_shape", np.asarray(out_shape, np.int32))
    m.op("TRANSPOSE_CONV", [shape, w, x, b], op.outputs, "TransposeConvOptions", 3,
         Padding=_PADDING_CODES[padding], StrideH=stride_h, StrideW=stride_w)


def _fields(name, table) -> dict:
    """Every field of a builtin options table, as ModelBuilder's ``op(**fields)`` takes them."""
    if name is None:
        return {}
    obj = getattr(tflite, name)()
    obj.Init(table.Bytes, table.Pos)
    prefix = f"{name}Add"
    fields = {}
    for adder in (a for a in dir(tflite) if a.startswith(prefix)):
        field = adder[len(prefix):]
        vector = getattr(obj, f"{field}AsNumpy", None)
        value = vector() if vector is not None else getattr(obj, field)()
        if not isinstance(value, (int, float, np.ndarray)):
            raise ValueError(f"{name}.{field} is not a scalar or an int vector; the copier cannot write it")
        fields[field] = [int(v) for v in value] if isinstance(value, np.ndarray) else value
    return {k: v for k, v in fields.items() if not (isinstance(v, list) and not v)}


class CustomOptionsBuilder(ModelBuilder):
    """A ModelBuilder whose ``custom_op`` also takes the operator's ``custom_options`` bytes."""

    def custom_op(self, custom_code: str, inputs, outputs, options: bytes = b""):
        super().custom_op(custom_code, inputs, outputs)
        self.ops[-1].fields["custom_options"] = bytes(options)

    def finish(self) -> bytes:
        plain = _builder._operator

        def operator(b, op) -> int:
            custom = op.fields.get("custom_options") if not op.options else None
            return plain(b, op) if not custom else _custom_operator(b, op, custom)
        _builder._operator = operator
        try:
            return super().finish()
        finally:
            _builder._operator = plain


def _custom_operator(b, op, options: bytes) -> int:
    inputs, outputs = _builder._ints(b, op.inputs), _builder._ints(b, op.outputs)
    custom = b.CreateNumpyVector(np.frombuffer(options, np.uint8))
    tflite.OperatorStart(b)
    tflite.OperatorAddOpcodeIndex(b, op.code)
    tflite.OperatorAddInputs(b, inputs)
    tflite.OperatorAddOutputs(b, outputs)
    tflite.OperatorAddCustomOptions(b, custom)
    return tflite.OperatorEnd(b)
