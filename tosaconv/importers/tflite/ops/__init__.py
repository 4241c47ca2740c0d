"""TFLite op converters, one small function per builtin op, grouped by family.

Each family module registers its converters with ``@converter`` when it is imported. The tables
below list every family module with the ops it has converters for (there is no scanning), and the
registry imports an op's families when the op is first resolved (:func:`load`): a conversion
imports the few families its model uses, not all thirty-three with the lowerings they pull in
(start-up, issue 13). :func:`load_all` imports every family (``tosaconv ops``, the support table).
tests/importers/tflite/test_family_tables.py checks the tables against what the modules register.
"""
from __future__ import annotations

import importlib

# family module -> the ops it converts in their float form (or in any form: layout ops, shapes, control flow)
FLOAT_FAMILIES: dict[str, tuple[str, ...]] = {
    "activation": ("ELU", "GELU", "HARD_SWISH", "L2_NORMALIZATION", "LEAKY_RELU", "LOCAL_RESPONSE_NORMALIZATION",
                   "LOGISTIC", "LOG_SOFTMAX", "PRELU", "RELU", "RELU6", "RELU_0_TO_1", "RELU_N1_TO_1", "SOFTMAX",
                   "TANH"),
    "conv_transpose": ("TRANSPOSE_CONV",),
    "elementwise": ("ABS", "ADD", "ADD_N", "CAST", "CEIL", "COS", "DIV", "EQUAL", "EXP", "FLOOR", "FLOOR_DIV",
                    "FLOOR_MOD", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "LOG", "LOGICAL_AND",
                    "LOGICAL_NOT", "LOGICAL_OR", "MAXIMUM", "MINIMUM", "MUL", "NEG", "NOT_EQUAL", "POW", "ROUND",
                    "RSQRT", "SELECT", "SELECT_V2", "SIN", "SQRT", "SQUARE", "SQUARED_DIFFERENCE", "SUB"),
    "indexing": ("ARG_MAX", "ARG_MIN", "BROADCAST_TO", "CUMSUM", "FILL", "GATHER", "GATHER_ND", "RANGE", "TILE",
                 "ZEROS_LIKE"),
    "layout": ("BATCH_TO_SPACE_ND", "DEPTH_TO_SPACE", "MIRROR_PAD", "REVERSE_V2", "SPACE_TO_BATCH_ND",
               "SPACE_TO_DEPTH"),
    "nn": ("AVERAGE_POOL_2D", "BATCH_MATMUL", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MAX_POOL_2D"),
    "resize": ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"),
    "shape": ("CONCATENATION", "DENSIFY", "DEQUANTIZE", "EXPAND_DIMS", "PACK", "RESHAPE", "SHAPE", "SQUEEZE",
              "TRANSPOSE", "UNPACK"),
    "slicing": ("MEAN", "PAD", "PADV2", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "SLICE", "SPLIT", "SPLIT_V",
                "STRIDED_SLICE", "SUM"),
    "control": ("IF", "WHILE"),
    "variables": ("ASSIGN_VARIABLE", "CALL_ONCE", "READ_VARIABLE", "VAR_HANDLE"),
    "fft": ("COMPLEX_ABS", "IMAG", "REAL", "RFFT2D"),   # RFFT2D and REAL, IMAG, COMPLEX_ABS of its result
}

# family module -> the ops it converts in their quantized form (int8, uint8, int16 with scales)
QUANTIZED_FAMILIES: dict[str, tuple[str, ...]] = {
    "q_lut": ("ELU", "EXP", "GELU", "LOG", "LOGISTIC", "TANH"),   # activations as TABLE lookups
    "q_lut_fixed": ("HARD_SWISH", "LEAKY_RELU", "RSQRT"),         # ... as TABLEs from fixed-point math
    "q_softmax": ("SOFTMAX",),                                    # SOFTMAX in integer ops
    "q_conv": ("CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV"),
    "q_matmul": ("BATCH_MATMUL", "FULLY_CONNECTED"),
    "q_prelu": ("PRELU",),
    "quantize": ("DEQUANTIZE", "QUANTIZE"),                       # QUANTIZE, requantize and DEQUANTIZE
    "q_arith": ("ADD", "MUL", "SQUARED_DIFFERENCE", "SUB"),       # in int32
    "q_unary": ("ABS", "NEG", "RELU", "RELU6", "RELU_0_TO_1", "RELU_N1_TO_1"),
    "q_compare": ("EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "MAXIMUM", "MINIMUM", "NOT_EQUAL",
                  "SELECT", "SELECT_V2"),
    "q_data": ("ARG_MAX", "ARG_MIN", "CONCATENATION", "PAD", "PADV2", "SPACE_TO_BATCH_ND"),
    "q_pool": ("AVERAGE_POOL_2D", "MAX_POOL_2D"),
    "q_reduce": ("MEAN", "REDUCE_MAX", "REDUCE_MIN", "SUM"),
    "q_resize": ("RESIZE_BILINEAR",),                             # in TFLite's 10-bit fixed point
    "q_prod": ("REDUCE_PROD",),                                   # requantized per multiply
    "q_misc": ("FILL",),                                          # a copy of the stored value
    "q_logsoftmax": ("LOG_SOFTMAX",),
    "q_l2norm": ("L2_NORMALIZATION",),
    "q_div": ("DIV",),                            # as LiteRT's x86-64 reference kernel runs it
    "q_sqrt": ("SQRT",),                          # LiteRT's truncating float kernel as a TABLE or GATHER
}

# family module -> the custom codes it converts (custom ops whose semantics are public)
CUSTOM_FAMILIES: dict[str, tuple[str, ...]] = {
    "custom": ("Convolution2DTransposeBias",),    # MediaPipe's
}


def _homes(table: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """op -> the family modules of ``table`` that convert it."""
    out: dict[str, tuple[str, ...]] = {}
    for module, ops in table.items():
        for op in ops:
            out[op] = out.get(op, ()) + (module,)
    return out


_FLOAT_HOMES = _homes(FLOAT_FAMILIES)
_QUANTIZED_HOMES = _homes(QUANTIZED_FAMILIES)
_CUSTOM_HOMES = _homes(CUSTOM_FAMILIES)


def _import(modules: tuple[str, ...]) -> None:
    for module in modules:
        importlib.import_module(f"{__name__}.{module}")


def load(op_type: str, quantized: bool) -> None:
    """Import the families that convert ``op_type`` in the given form; an op no family converts imports
    nothing. A quantized op with a quantized converter needs only its quantized families (an op has a
    quantized or an "any" form converter, never both: the registry refuses the pair); any other imports
    the float families, whose "any" form converters also serve a quantized op."""
    quantized_homes = _QUANTIZED_HOMES.get(op_type, ()) if quantized else ()
    _import(quantized_homes or _FLOAT_HOMES.get(op_type, ()))


def load_custom(custom_code: str) -> None:
    """Import the family that converts the custom op ``custom_code``, if any."""
    _import(_CUSTOM_HOMES.get(custom_code, ()))


def load_all() -> None:
    """Import every family: every converter registered."""
    for table in (FLOAT_FAMILIES, QUANTIZED_FAMILIES, CUSTOM_FAMILIES):
        _import(tuple(table))
