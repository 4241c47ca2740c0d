"""ONNX op converters, one small function per source op, grouped by family.

Importing this package registers nothing, so a helper here (``qtypes``) can be imported on its
own without pulling every converter in. Each family module registers its converters with
``@converter`` when it is imported. The tables below list every family module with the ops it
has converters for (there is no scanning); the registry imports an op's families when the op
is first resolved (:func:`load`), so a conversion imports the few families its model uses,
not all thirty-seven with the lowerings they pull in (start-up, issue 13). :func:`load_all`
imports every family (``tosaconv ops``, :mod:`..converters`).
tests/importers/onnx/test_family_tables.py checks the tables against what the modules register.
"""
from __future__ import annotations

import importlib

MS = "com.microsoft"   # as ..ms_domain.MS (not imported here: that module imports the registry)

# family module -> the ops of the default domain ("" or "ai.onnx") it converts
DEFAULT_FAMILIES: dict[str, tuple[str, ...]] = {
    "elementwise": ("Abs", "Add", "Cast", "Ceil", "Clip", "Cos", "Div", "Equal", "Erf", "Exp", "Floor", "Greater",
                    "LeakyRelu", "Less", "Log", "Max", "Mean", "Min", "Mul", "Neg", "Not", "Pow", "Reciprocal",
                    "Relu", "Sigmoid", "Sin", "Sqrt", "Sub", "Sum", "Tanh", "Where"),
    "shape": ("Constant", "ConstantOfShape", "Expand", "Flatten", "Identity", "Range", "Reshape", "Shape", "Size"),
    "tensor": ("Concat", "Gather", "Slice", "Split", "Squeeze", "Transpose", "Unsqueeze"),
    "normalize": ("BatchNormalization", "LayerNormalization", "LogSoftmax", "Softmax"),
    "reduce": ("GlobalMaxPool", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
               "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare"),
    "conv": ("Conv",),
    "matmul": ("Gemm", "MatMul"),
    "pool": ("AveragePool", "GlobalAveragePool", "LpPool", "MaxPool"),
    "resize": ("Resize",),
    "conv_transpose": ("ConvTranspose",),
    "recurrent": ("GRU", "LSTM", "RNN"),
    "activation": ("Celu", "Dropout", "Elu", "Gelu", "HardSigmoid", "HardSwish", "Mish", "PRelu", "Selu", "Shrink",
                   "Softplus", "Softsign", "ThresholdedRelu"),
    "argmax": ("ArgMax", "ArgMin", "Hardmax"),
    "arith": ("Mod", "Round", "Sign"),
    "logic": ("And", "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "GreaterOrEqual", "IsInf", "IsNaN",
              "LessOrEqual", "Or", "Xor"),
    "norms": ("GroupNormalization", "InstanceNormalization", "LRN", "LpNormalization", "MeanVarianceNormalization"),
    "einsum": ("Einsum",),
    "indexing": ("GatherElements", "GatherND", "ReverseSequence"),
    "layout": ("DepthToSpace", "SpaceToDepth"),
    "masks": ("CumSum", "EyeLike", "OneHot", "Trilu"),
    "nonzero": ("Compress", "NonZero"),
    "pad": ("Pad", "Tile"),
    "scatter": ("Scatter", "ScatterElements", "ScatterND"),
    "topk": ("TopK",),
    "dynamic_quant": ("DynamicQuantizeLinear",),
    "qlinear": ("ConvInteger", "MatMulInteger", "QLinearConv", "QLinearMatMul"),
    "quant": ("DequantizeLinear", "QuantizeLinear"),
    "ms_norms": ("SimplifiedLayerNormalization",),   # onnxruntime's, declared in the default domain (..ms_domain)
    "control": ("If",),
    "loops": ("Loop", "Scan"),
    "dft": ("DFT", "STFT"),
}

# family module -> the com.microsoft ops it converts (declared in ..ms_domain)
MS_FAMILIES: dict[str, tuple[str, ...]] = {
    "quant": ("DequantizeLinear", "QuantizeLinear"),
    "qgemm": ("QGemm",),
    "qlinear_ms": ("QLinearAdd", "QLinearAveragePool", "QLinearConcat", "QLinearGlobalAveragePool",
                   "QLinearLeakyRelu", "QLinearMul", "QLinearReduceMean", "QLinearSigmoid", "QLinearSoftmax",
                   "QLinearWhere"),
    "ms_activation": ("BiasAdd", "BiasGelu", "FastGelu", "Gelu", "QuickGelu"),
    "ms_attention": ("Attention", "MultiHeadAttention"),
    "ms_dynamic_quant": ("DynamicQuantizeLSTM", "DynamicQuantizeMatMul"),
    "ms_fused": ("FusedConv", "FusedGemm", "FusedMatMul"),
    "ms_norms": ("EmbedLayerNormalization", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization"),
}


def _homes() -> dict[tuple[str, str], tuple[str, ...]]:
    """(domain, op) -> the family modules that convert it (domain "" for the default domain)."""
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for domain, table in (("", DEFAULT_FAMILIES), (MS, MS_FAMILIES)):
        for module, ops in table.items():
            for op in ops:
                out[(domain, op)] = out.get((domain, op), ()) + (module,)
    return out


_HOMES = _homes()


def load(op_type: str, domain: str) -> None:
    """Import the com.microsoft declarations and the families that convert ``domain``'s ``op_type``
    (``domain`` "" for the default domain); an op no family converts imports no family."""
    importlib.import_module("..ms_domain", __name__)
    for module in _HOMES.get((domain, op_type), ()):
        importlib.import_module(f"{__name__}.{module}")


def load_all() -> None:
    """Import every family: every converter registered."""
    importlib.import_module("..ms_domain", __name__)
    for module in dict.fromkeys([*DEFAULT_FAMILIES, *MS_FAMILIES]):
        importlib.import_module(f"{__name__}.{module}")
