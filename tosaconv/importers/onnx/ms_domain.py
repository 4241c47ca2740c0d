"""The ``com.microsoft`` ops tosaconv converts, declared for the registry (``onnx.defs`` has none).

Each row is one op of onnxruntime's contrib op set (documented in
onnxruntime's ``docs/ContribOperators.md`` and in the schemas the installed
onnxruntime reports): its version and its attributes with their defaults,
so :class:`~.reader.NodeReader` fills defaults as it does for ONNX ops.
These are the ops onnxruntime's quantizer writes for QOperator models
(``quant_format=QuantFormat.QOperator``) and for QDQ models with 16-bit
types or ``UseQDQContribOps``. The contrib QuantizeLinear and
DequantizeLinear have ONNX's semantics with a per-tensor default; when the
scale is 1-D, onnxruntime's kernel takes axis 1 unless ``axis`` is set, as
ONNX's own ops do.
"""
from __future__ import annotations

from .registry import REQUIRED, declare

MS = "com.microsoft"

_POOL = {"auto_pad": "NOTSET", "ceil_mode": 0, "channels_last": 0, "count_include_pad": 0,
         "kernel_shape": REQUIRED, "pads": None, "strides": None}

_OPS = {
    "QuantizeLinear": {"axis": 1},
    "DequantizeLinear": {"axis": 1},
    "QLinearAdd": {},
    "QLinearMul": {},
    "QLinearSigmoid": {},
    "QLinearLeakyRelu": {"alpha": 0.01},
    "QLinearSoftmax": {"opset": REQUIRED, "axis": -1},
    "QLinearConcat": {"axis": REQUIRED},
    "QLinearWhere": {},
    "QLinearGlobalAveragePool": {"channels_last": 0},
    "QLinearAveragePool": _POOL,
    "QLinearReduceMean": {"axes": REQUIRED, "keepdims": REQUIRED},
    "QGemm": {"alpha": 1.0, "transA": 0, "transB": 0},
}

for _op, _attrs in _OPS.items():
    declare(MS, _op, 1, _attrs)
