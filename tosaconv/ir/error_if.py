"""The ERROR_IF rules of the TOSA 1.0 specification, one checker per op family.

:func:`error_if` returns why an op's operand types and attributes break a rule
of the specification (the reason, as text) or None when they do not. It never
raises: operands of the wrong kind or rank, attribute tuples of the wrong
length and symbolic dims all give an answer. A rule whose value depends on a
symbol is three-valued (DESIGN.md): its answer is "unknown", so it does not
reject here; the pass manager verifies the static program again after
specialization, where every dim is an int and the rule decides. The verifier
runs these checks before an op's shape rule, so a shape rule only ever sees
operands of the ranks and attribute lengths it expects.

The rules of the convolutions, pooling and RESIZE are in :mod:`.error_if_windows`.
They are read from the per-op pseudocode of the specification
(``pseudocode/operators/*.tosac``): exact divisions of convolution, pooling and
resize output sizes (``idiv_check``), kernel, stride, dilation and padding
limits, RESIZE's scale, offset, border and size limits, zero points allowed
only on 8-bit data (and RESCALE's unsigned 16-bit 32768), operand ranks and
the dims that two operands share (MATMUL's C, a convolution's IC, its bias).
MUL's shift range is a REQUIRE of the specification; a program breaking it is
refused the same way. Level limits (rank <= 6 and so on at level 8K) are
LEVEL_CHECKs, not ERROR_IFs, and live in :mod:`tosaconv.analysis.levels`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Sequence

import numpy as np

from . import error_if_windows  # noqa: F401  (registers the convolution, pooling and RESIZE rules)
from .dtypes import DType
from .ops import OPS
from .error_if_core import (RULES, Reason, _checked, _differ, _first, _ints, _static, _tensors,
                            _zero_point, operand_kinds, rule)
from .types import TensorType, ValueType

if TYPE_CHECKING:   # the op table imports the attribute classes; these are for the annotations only
    from . import attrs as A


def error_if(op_name: str, types: Sequence[ValueType], attrs: object) -> Reason:
    """Why ``types`` and ``attrs`` break an ERROR_IF rule of ``op_name`` (None: they break none)."""
    bad = operand_kinds(op_name, list(types))
    if bad:
        return bad
    expected = OPS[op_name].attrs    # operand_kinds found the op in the table
    if not isinstance(attrs, expected):
        return f"attributes are {type(attrs).__name__}, expected {expected.__name__}"
    fn = RULES.get(op_name)
    return None if fn is None else fn(list(types), attrs)


# -- elementwise ------------------------------------------------------------------------------

@rule("MUL")
def mul(types: list[ValueType], attrs: A.MulAttrs) -> Reason:
    shift = getattr(attrs, "shift", None)
    if not isinstance(shift, int) or not 0 <= shift <= 63:
        return f"MUL shift must be an integer in [0, 63], got {shift!r}"
    ts = _checked(types, None, None)
    if isinstance(ts, str):
        return ts
    if shift and ts[0].dtype is not DType.INT32:
        return f"MUL shift {shift} needs int32 operands, got {ts[0].dtype.name}"
    return None


@rule("CLAMP")
def clamp(types: list[ValueType], attrs: A.ClampAttrs) -> Reason:
    """ERROR_IF(max_val < min_val)."""
    bad = _tensors(types, None)
    lo, hi = getattr(attrs, "min_val", None), getattr(attrs, "max_val", None)
    if bad is None and isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and hi < lo:
        return f"max_val {hi} is below min_val {lo}"
    if bad is None and types and isinstance(types[0], TensorType):
        for role, bound in (("min_val", lo), ("max_val", hi)):
            problem = _bound_problem(role, bound, types[0].dtype)
            if problem:
                return problem
    return bad


def _bound_problem(role: str, bound: object, dtype: DType) -> Reason:
    """A CLAMP bound is of the input's type (in_out_t): an integer type's bound is an integer it holds. (A float
    bound beyond a float type's range is that type's infinity, as IEEE conversion rounds it.)"""
    if not isinstance(bound, (int, float)) or isinstance(bound, bool):
        return None
    if dtype in (DType.INT8, DType.INT16):   # the integer types TOSA 1.0 CLAMP takes
        info = np.iinfo(dtype.numpy)
        if not float(bound).is_integer() or not info.min <= bound <= info.max:
            return f"{role} {bound} is not an integer in the range of {dtype.name} [{info.min}, {info.max}]"
    return None


@rule("TABLE")
def table(types: list[ValueType], attrs: A.TableAttrs) -> Reason:
    """The table has 256 entries for int8 input and 513 for int16."""
    ts = _checked(types, None)
    if isinstance(ts, str):
        return ts
    want = {DType.INT8: 256, DType.INT16: 513}.get(ts[0].dtype)
    size = getattr(getattr(attrs, "table", None), "size", None)
    if want is not None and size != want:
        return f"a TABLE on {ts[0].dtype.name} needs {want} entries, got {size}"
    return None


@rule("SELECT")
def select(types: list[ValueType], attrs: A.NoAttrs) -> Reason:
    bad = _tensors(types, None, None, None)
    if bad is None and types[0].dtype is not DType.BOOL:
        return f"the SELECT condition must be bool, got {types[0]}"
    return bad


@rule("NEGATE")
def negate(types: list[ValueType], attrs: A.NegateAttrs) -> Reason:
    ts = _checked(types, None)
    if isinstance(ts, str):
        return ts
    dtype = ts[0].dtype
    return _first(_zero_point(getattr(attrs, "input_zp", 0), dtype, "input_zp"),
                  _zero_point(getattr(attrs, "output_zp", 0), dtype, "output_zp"))


@rule("RESCALE")
def rescale(types: list[ValueType], attrs: A.RescaleAttrs) -> Reason:
    ts = _checked(types, None)
    if isinstance(ts, str):
        return ts
    return _first(_rescale_zero_point(ts[0].dtype, attrs.input_zp, attrs.input_unsigned, "input"),
                  _rescale_zero_point(attrs.output_dtype, attrs.output_zp, attrs.output_unsigned, "output"),
                  _rescale_flags(ts[0], attrs), _rescale_ranges(attrs))


def _rescale_zero_point(dtype: DType, zp: int, unsigned: bool, side: str) -> Reason:
    if dtype is DType.INT16 and unsigned:
        return None if zp in (0, 32768) else f"{side}_zp of unsigned int16 data must be 0 or 32768, got {zp}"
    if dtype is not DType.INT8 and zp != 0:
        return f"{side}_zp is {zp}, but a zero point other than 0 needs int8 (or unsigned int16) data"
    return None


def _rescale_flags(t: TensorType, attrs: A.RescaleAttrs) -> Reason:
    in_t, out_t = t.dtype, attrs.output_dtype
    checks = (
        (attrs.scale32 and in_t is DType.INT48, "scale32 is not allowed on int48 input"),
        (not attrs.scale32 and attrs.rounding_mode == "DOUBLE_ROUND", "DOUBLE_ROUND needs scale32"),
        (attrs.input_unsigned and attrs.output_unsigned, "input and output cannot both be unsigned"),
        (attrs.input_unsigned and (out_t is DType.INT32 or in_t in (DType.INT32, DType.INT48)),
         f"an unsigned input is not allowed from {in_t.name} to {out_t.name}"),
        (attrs.output_unsigned and (out_t is DType.INT32 or in_t in (DType.INT32, DType.INT48)),
         f"an unsigned output is not allowed from {in_t.name} to {out_t.name}"),
        (attrs.per_channel and t.rank < 1, "per_channel needs an input of rank >= 1"),
        (len(attrs.multiplier) != len(attrs.shift), "multiplier and shift differ in length"),
        (not attrs.per_channel and len(attrs.multiplier) != 1, "without per_channel, multiplier holds one value"),
        (attrs.per_channel and t.rank >= 1 and _static(t.shape[-1]) and len(attrs.multiplier) != t.shape[-1],
         f"per_channel needs one multiplier per channel ({t.shape[-1] if t.rank else '?'})"),
    )
    return next((why for broken, why in checks if broken), None)


def _rescale_ranges(attrs: A.RescaleAttrs) -> Reason:
    """The spec's apply_scale_32/16: a multiplier fits i32_t (scale32) or i16_t and, by their
    REQUIRE(multiplier >= 0), is not negative; and 2 <= shift <= 62."""
    bits = 32 if attrs.scale32 else 16
    high = (1 << (bits - 1)) - 1
    for m in attrs.multiplier:
        if not isinstance(m, int) or not 0 <= m <= high:
            return (f"multiplier {m} is outside 0..{high} (a non-negative int{bits}) "
                    f"{'with' if attrs.scale32 else 'without'} scale32")
    for s in attrs.shift:
        if not isinstance(s, int) or not 2 <= s <= 62:
            return f"shift {s} is outside 2..62"
    return None


# -- data layout -------------------------------------------------------------------------------

@rule("TRANSPOSE")
def transpose(types: list[ValueType], attrs: A.TransposeAttrs) -> Reason:
    ts = _checked(types, None)
    if isinstance(ts, str):
        return ts
    perms, rank = getattr(attrs, "perms", None), ts[0].rank
    if not isinstance(perms, tuple) or not _ints(perms, rank) or sorted(perms) != list(range(rank)):
        return f"perms {perms!r} is not a permutation of 0..{rank - 1}"
    return None


@rule("REDUCE_ALL", "REDUCE_ANY", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PRODUCT", "REDUCE_SUM", "ARGMAX")
def axis_op(types: list[ValueType], attrs: A.AxisAttrs | A.AxisNanAttrs) -> Reason:
    """ERROR_IF(axis < 0 || axis >= rank(shape1))."""
    ts = _checked(types, None)
    if isinstance(ts, str):
        return ts
    axis, rank = getattr(attrs, "axis", None), ts[0].rank
    if not isinstance(axis, int) or not 0 <= axis < rank:
        return f"axis {axis!r} is outside [0, {rank})"
    return None


@rule("REVERSE")
def reverse(types: list[ValueType], attrs: A.AxisAttrs) -> Reason:
    """As :func:`axis_op`; a rank-0 REVERSE (axis 0) is the identity the importers may leave."""
    if _tensors(types, 0) is None and getattr(attrs, "axis", None) == 0:
        return None
    return axis_op(types, attrs)


@rule("GET_DIM")
def get_dim(types: list[ValueType], attrs: A.DimIndexAttrs) -> Reason:
    ts = _checked(types, None)
    if isinstance(ts, str):
        return ts
    index = getattr(attrs, "dim_index", None)
    if not (isinstance(index, int) and 0 <= index < ts[0].rank):
        return f"axis {index!r} is out of range for rank {ts[0].rank}"
    return None


def _indices(types: list[ValueType], attrs: A.IndicesAttrs, extra: int) -> Reason:
    ts = _checked(types, None)
    if isinstance(ts, str):
        return ts
    indices, limit = getattr(attrs, "indices", None), ts[0].rank + extra
    if not isinstance(indices, tuple) or not all(isinstance(i, int) and 0 <= i < limit for i in indices):
        return f"indices {indices!r} must be integers in [0, {limit})"
    return None


@rule("EXPAND_DIMS")
def expand_dims(types: list[ValueType], attrs: A.IndicesAttrs) -> Reason:
    return _indices(types, attrs, len(getattr(attrs, "indices", None) or ()))


@rule("COLLAPSE_DIMS")
def collapse_dims(types: list[ValueType], attrs: A.IndicesAttrs) -> Reason:
    return _indices(types, attrs, 0)


@rule("CONCAT")
def concat(types: list[ValueType], attrs: A.AxisAttrs) -> Reason:
    ts = [t for t in types if isinstance(t, TensorType)]
    if not types or len(ts) < len(types):
        return "CONCAT takes one or more tensors"
    first = ts[0]
    bad = axis_op(types[:1], attrs)
    if bad:
        return bad
    for t in ts[1:]:
        if t.rank != first.rank or t.dtype != first.dtype:
            return f"CONCAT operands {first} and {t} differ in rank or element type"
        if any(_differ(a, b) for k, (a, b) in enumerate(zip(first.shape, t.shape)) if k != attrs.axis):
            return f"CONCAT operands {first} and {t} differ outside axis {attrs.axis}"
    return None


@rule("SLICE")
def slice_(types: list[ValueType], attrs: A.SliceAttrs) -> Reason:
    ts = _checked(types, None)
    if isinstance(ts, str):
        return ts
    t, start, size = ts[0], getattr(attrs, "start", None), getattr(attrs, "size", None)
    if not (isinstance(start, tuple) and isinstance(size, tuple) and len(start) == len(size) == t.rank):
        return f"SLICE start and size need one entry per dim of {t}, got {start!r} and {size!r}"
    for axis, (s, n, d) in enumerate(zip(start, size, t.shape)):
        if not _static(s, n):
            continue
        if s < 0 or n <= 0 or (_static(d) and s + n > d):
            return f"SLICE start {list(start)} and size {list(size)} leave {t} at axis {axis}"
    return None


@rule("PAD")
def pad(types: list[ValueType], attrs: A.PadAttrs) -> Reason:
    ts = _checked(types, None)
    if isinstance(ts, str):
        return ts
    padding = getattr(attrs, "padding", None)
    if not isinstance(padding, tuple) or len(padding) != 2 * ts[0].rank:
        return f"padding must have two entries per dim of {ts[0]}, got {padding!r}"
    if _static(*padding) and min(padding, default=0) < 0:
        return f"padding {list(padding)} has a negative entry"
    return None


@rule("TILE")
def tile(types: list[ValueType], attrs: A.TileAttrs) -> Reason:
    ts = _checked(types, None)
    if isinstance(ts, str):
        return ts
    multiples = getattr(attrs, "multiples", None)
    if not isinstance(multiples, tuple) or len(multiples) != ts[0].rank:
        return f"multiples must have one entry per dim of {ts[0]}, got {multiples!r}"
    if _static(*multiples) and min(multiples, default=1) < 1:
        return f"multiples {list(multiples)} has an entry below 1"
    return None


@rule("GATHER")
def gather(types: list[ValueType], attrs: A.NoAttrs) -> Reason:
    ts = _checked(types, 3, 2)
    if isinstance(ts, str):
        return ts
    if _differ(ts[0].shape[0], ts[1].shape[0]):
        return f"GATHER values {ts[0]} and indices {ts[1]} differ in N"
    return None


@rule("SCATTER")
def scatter(types: list[ValueType], attrs: A.NoAttrs) -> Reason:
    ts = _checked(types, 3, 2, 3)
    if isinstance(ts, str):
        return ts
    values, indices, source = ts[:3]
    if _differ(values.shape[0], indices.shape[0]) or _differ(values.shape[0], source.shape[0]) or \
            _differ(indices.shape[1], source.shape[1]) or _differ(values.shape[2], source.shape[2]):
        return f"SCATTER values {values}, indices {indices} and input {source} do not fit"
    return None


@rule("CONST")
def const(types: list[ValueType], attrs: A.ConstAttrs) -> Reason:
    values, element = getattr(attrs, "values", None), getattr(attrs, "element_type", "")
    if not isinstance(values, np.ndarray):
        return f"CONST values must be an array, got {type(values).__name__}"
    if element and element not in {d.value for d in DType}:
        return f"CONST element_type {element!r} is not an element type"
    if not element and values.dtype not in _CONST_NUMPY:
        return f"CONST values of numpy type {values.dtype} have no TOSA element type"
    return None


_CONST_NUMPY = {np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.float16,
                                      np.float32, np.float64)}


@rule("COND_IF")
def cond_if(types: list[ValueType], attrs: A.CondIfAttrs) -> Reason:
    if not types or not isinstance(types[0], TensorType) or types[0].dtype is not DType.BOOL:
        return f"the COND_IF condition must be a bool tensor, got {types[0] if types else 'nothing'}"
    return None
