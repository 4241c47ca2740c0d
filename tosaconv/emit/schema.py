"""Enum codes, table slots and attribute layouts of the TOSA flatbuffer.

Everything here follows ``schemas/tosa.fbs`` (whose wire format equals the
official schema; ``tests/emit/test_schema.py`` checks both that and this
module against it). We write and read tables directly with ``flatbuffers``
instead of generated code, so a table field is addressed by its *slot*: its
position in the table's field list, counting a union field as two slots
(its type id, then its table). Enum values are positions in the enum.
Attribute tables are described by :data:`ATTR_LAYOUTS`: the fields of each
operator's table, in slot order, with a kind that says how they are encoded.
"""
from __future__ import annotations

from ..ir.dtypes import SHAPE_DTYPE_CODE, TOSA_DTYPE_CODE, DType

FILE_IDENTIFIER = b"TOSA"

# enum Op, in code order (code = position). Union Attribute member N pairs with code N.
OP_NAMES = (
    "UNKNOWN", "ARGMAX", "AVG_POOL2D", "CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "FFT2D", "MATMUL",
    "MAX_POOL2D", "RFFT2D", "TRANSPOSE_CONV2D", "CLAMP", "ERF", "SIGMOID", "TANH", "ADD",
    "ARITHMETIC_RIGHT_SHIFT", "BITWISE_AND", "BITWISE_OR", "BITWISE_XOR", "INTDIV", "LOGICAL_AND",
    "LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT", "LOGICAL_OR", "LOGICAL_XOR", "MAXIMUM", "MINIMUM",
    "MUL", "POW", "SUB", "TABLE", "ABS", "BITWISE_NOT", "CEIL", "CLZ", "COS", "EXP", "FLOOR", "LOG",
    "LOGICAL_NOT", "NEGATE", "RECIPROCAL", "RSQRT", "SIN", "SELECT", "EQUAL", "GREATER",
    "GREATER_EQUAL", "REDUCE_ALL", "REDUCE_ANY", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PRODUCT",
    "REDUCE_SUM", "CONCAT", "PAD", "RESHAPE", "REVERSE", "SLICE", "TILE", "TRANSPOSE", "GATHER",
    "SCATTER", "RESIZE", "CAST", "RESCALE", "CONST", "IDENTITY", "CUSTOM", "COND_IF", "WHILE_LOOP",
    "VARIABLE", "VARIABLE_WRITE", "VARIABLE_READ", "CONST_SHAPE", "MATMUL_T_BLOCK_SCALED",
    "CAST_FROM_BLOCK_SCALED", "CAST_TO_BLOCK_SCALED", "DIM", "CONCAT_SHAPE", "ADD_SHAPE", "SUB_SHAPE",
    "MUL_SHAPE", "SLICE_SHAPE", "EXP2_SHAPE", "LOG2_CEIL_SHAPE", "LOG2_FLOOR_SHAPE", "MAX_SHAPE",
    "MIN_SHAPE", "MOD_SHAPE", "DIV_CEIL_SHAPE", "DIV_FLOOR_SHAPE", "ASSERT_EQUAL_SHAPE",
    "CONV2D_BLOCK_SCALED", "MAX_POOL2D_ADAPTIVE", "AVG_POOL2D_ADAPTIVE", "RESHAPE_BLOCK_SCALED",
    "ROW_GATHER_BLOCK_SCALED", "ROW_GATHER", "MATMUL_T",
)
OP_CODE = {name: code for code, name in enumerate(OP_NAMES)}

# enum DType: the IR's codes come from ir.dtypes; SHAPE marks shape values.
DTYPE_CODE = dict(TOSA_DTYPE_CODE)
DTYPE_FROM_CODE = {code: dt for dt, code in DTYPE_CODE.items()}
SHAPE_CODE = SHAPE_DTYPE_CODE

RESIZE_MODES = ("UNKNOWN", "NEAREST", "BILINEAR")
NAN_MODES = ("UNKNOWN", "PROPAGATE", "IGNORE")
ROUNDING_MODES = ("UNKNOWN", "SINGLE_ROUND", "INEXACT_ROUND", "DOUBLE_ROUND")

# The TOSA versions we accept on reading: (major, minor, patch, draft).
WRITE_VERSION = (1, 0, 0, False)
WRITE_VERSION_SHAPE = (1, 1, 0, True)   # a symbolic program: EXT-SHAPE operators and -1 dims (1.1 draft)
READ_VERSIONS = ((1, 0, 0, False), (1, 1, 0, True))


class GraphSlot:
    VERSION, REGIONS, SOFTWARE_VERSION, COMPATIBILITY = range(4)
    COUNT = 4


class VersionSlot:
    MAJOR, MINOR, PATCH, DRAFT = range(4)
    COUNT = 4
    DEFAULTS = (-1, -1, -1, True)


class RegionSlot:
    NAME, BLOCKS = range(2)
    COUNT = 2


class BlockSlot:
    NAME, OPERATORS, TENSORS, INPUTS, OUTPUTS, SHAPES = range(6)
    COUNT = 6


class OperatorSlot:
    OP, ATTRIBUTE_TYPE, ATTRIBUTE, INPUTS, OUTPUTS, LOCATION = range(6)
    COUNT = 6


class TensorSlot:
    NAME, SHAPE, TYPE, DATA, VARIABLE, IS_UNRANKED, VARIABLE_NAME, OFFSET, SIZE = range(9)
    SCALE_TYPE, SCALE_DATA, BLOCK_SHAPE, SCALE_OFFSET, SCALE_SIZE = range(9, 14)
    COUNT = 14


class ShapeSlot:
    NAME, RANK, DATA = range(3)
    COUNT = 3


class LocationSlot:
    TEXT = 0
    COUNT = 1


# Field kinds of attribute tables.
INT32, BOOL, ENUM, INT32_VEC, BYTES = "int32", "bool", "enum", "int32[]", "ubyte[]"
STRING = "string"  # a region's name (COND_IF and WHILE_LOOP name their graphs)

_CONV = (("pad", INT32_VEC), ("stride", INT32_VEC), ("dilation", INT32_VEC),
         ("local_bound", BOOL), ("acc_type", ENUM))
_AXIS = (("axis", INT32),)
_AXIS_NAN = (("axis", INT32), ("nan_mode", ENUM))
_NAN = (("nan_mode", ENUM),)

# Fields of each operator's attribute table, in slot order. Ops not listed have an empty table.
ATTR_LAYOUTS = {
    "ARGMAX": _AXIS_NAN,
    "AVG_POOL2D": (("kernel", INT32_VEC), ("stride", INT32_VEC), ("pad", INT32_VEC), ("acc_type", ENUM)),
    "CONV2D": _CONV,
    "CONV3D": _CONV,
    "DEPTHWISE_CONV2D": _CONV,
    "FFT2D": (("inverse", BOOL), ("local_bound", BOOL)),
    "MAX_POOL2D": (("kernel", INT32_VEC), ("stride", INT32_VEC), ("pad", INT32_VEC), ("nan_mode", ENUM)),
    "RFFT2D": (("local_bound", BOOL),),
    "TRANSPOSE_CONV2D": (("out_pad", INT32_VEC), ("stride", INT32_VEC), ("local_bound", BOOL),
                         ("acc_type", ENUM)),
    "CLAMP": (("min_val", BYTES), ("max_val", BYTES), ("nan_mode", ENUM)),
    "ARITHMETIC_RIGHT_SHIFT": (("round", BOOL),),
    "MAXIMUM": _NAN,
    "MINIMUM": _NAN,
    "REDUCE_ALL": _AXIS,
    "REDUCE_ANY": _AXIS,
    "REDUCE_MAX": _AXIS_NAN,
    "REDUCE_MIN": _AXIS_NAN,
    "REDUCE_PRODUCT": _AXIS,
    "REDUCE_SUM": _AXIS,
    "CONCAT": _AXIS,
    "REVERSE": _AXIS,
    "TRANSPOSE": (("perms", INT32_VEC),),
    "RESIZE": (("mode", ENUM),),
    "RESCALE": (("scale32", BOOL), ("rounding_mode", ENUM), ("per_channel", BOOL),
                ("input_unsigned", BOOL), ("output_unsigned", BOOL)),
    "DIM": _AXIS,
    "COND_IF": (("then_graph", STRING), ("else_graph", STRING)),
    "WHILE_LOOP": (("cond_graph", STRING), ("body_graph", STRING)),
    "ASSERT_EQUAL_SHAPE": (("allow_broadcast", BOOL),),
}


def attr_layout(op_name: str) -> tuple:
    return ATTR_LAYOUTS.get(op_name, ())


def dtype_code(dtype: DType) -> int:
    if dtype not in DTYPE_CODE:
        raise ValueError(f"element type {dtype.name} has no TOSA flatbuffer code")
    return DTYPE_CODE[dtype]
