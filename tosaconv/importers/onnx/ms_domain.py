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

The float ops after them are those onnxruntime's graph optimizer
(``onnxruntime.transformers.optimizer``, and its session-level fusions saved
with ``optimized_model_filepath``) writes into the models people ship: the
fused Conv/Gemm/MatMul, the Gelu family, the skip/simplified layer
normalizations, Attention and MultiHeadAttention, and the dynamically
quantized MatMul and LSTM. Their defaults are those of onnxruntime's schemas
(``onnxruntime.capi.onnxruntime_pybind11_state.get_all_operator_schema()``).
onnxruntime also defines two ops in the *default* domain that ONNX lacks at
the opsets it writes them at: ``LayerNormalization`` version 1 (ONNX's came
at opset 17, with the same attributes) and ``SimplifiedLayerNormalization``
(RMS normalization); they are declared with domain "" and are found when
``onnx.defs`` has no schema of that name at the model's opset.
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

_ACTIVATION = {"activation": None}
_FLOAT_OPS = {
    "FusedConv": {**_ACTIVATION, "activation_params": None, "group": 1, "auto_pad": "NOTSET", "pads": None,
                  "strides": None, "dilations": None, "kernel_shape": None},
    "FusedGemm": {**_ACTIVATION, "activation_alpha": None, "activation_beta": None, "activation_gamma": None,
                  "alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0},
    "FusedMatMul": {"alpha": 1.0, "transA": 0, "transB": 0, "transBatchA": 0, "transBatchB": 0},
    "Gelu": {}, "FastGelu": {}, "BiasGelu": {}, "QuickGelu": {"alpha": 1.702}, "BiasAdd": {},
    "SkipLayerNormalization": {"epsilon": 1e-12},
    "SkipSimplifiedLayerNormalization": {"epsilon": 1e-12},
    "EmbedLayerNormalization": {"epsilon": 1e-12, "mask_index_type": None},
    "Attention": {"num_heads": REQUIRED, "unidirectional": 0, "scale": None, "mask_filter_value": None,
                  "do_rotary": 0, "past_present_share_buffer": 0, "qkv_hidden_sizes": None,
                  "rotary_embedding_dim": None},
    "MultiHeadAttention": {"num_heads": REQUIRED, "unidirectional": 0, "scale": None, "mask_filter_value": None},
    "DynamicQuantizeMatMul": {},
    "DynamicQuantizeLSTM": {"hidden_size": REQUIRED, "direction": "forward", "activations": None,
                            "activation_alpha": None, "activation_beta": None, "clip": None, "input_forget": 0},
}
_LAYER_NORM = {"axis": -1, "epsilon": 1e-5, "stash_type": 1}
ORT_DEFAULT_DOMAIN_OPS = {"LayerNormalization": _LAYER_NORM, "SimplifiedLayerNormalization": _LAYER_NORM}

for _op, _attrs in {**_OPS, **_FLOAT_OPS}.items():
    declare(MS, _op, 1, _attrs)
for _op, _attrs in ORT_DEFAULT_DOMAIN_OPS.items():
    declare("", _op, 1, _attrs)
