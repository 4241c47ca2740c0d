"""Shape rules: result types from operand types and attributes.

Each rule is a pure function ``rule(types, attrs) -> list[ValueType]``. Rules
raise :class:`ShapeRuleError` for impossible shapes; they never consult
bindings and never guess. Broadcasting follows seed 002: only a literal 1
broadcasts statically, a static size c > 1 against a symbol gives c, and two
different symbols give ``max(a, b)``, which is exact under the broadcastable
constraint the broadcast-check pass records.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from ..symbolic.expr import Dim, add, dmax, floordiv, is_static, mul, product, same, sub, sym
from . import attrs as A
from .attrs import NoAttrs
from .dtypes import DType, from_numpy
from .types import IndexType, TensorType, ValueType


class ShapeRuleError(ValueError):
    """Operand types or attributes that no binding could make valid."""


def broadcast_dim(a: Dim, b: Dim) -> Dim:
    if same(a, b) or same(b, 1):
        return a
    if same(a, 1):
        return b
    if is_static(a) and is_static(b):
        raise ShapeRuleError(f"dims {a} and {b} cannot be broadcast (only a literal 1 broadcasts)")
    if is_static(a):
        return a
    if is_static(b):
        return b
    return dmax(a, b)


def broadcast_shapes(shapes: Sequence[Sequence[Dim]]) -> tuple[Dim, ...]:
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    out = []
    for axis in range(rank):
        d = padded[0][axis]
        for s in padded[1:]:
            try:
                d = broadcast_dim(d, s[axis])
            except ShapeRuleError as e:
                raise ShapeRuleError(
                    f"shapes {' and '.join(_shape_text(s) for s in shapes)} are not broadcast-compatible "
                    f"at axis {axis}: {e}") from None
        out.append(d)
    return tuple(out)


def _tensor(t: ValueType, what: str) -> TensorType:
    """``t`` where the op table declares a tensor operand (an Index value there is a malformed op)."""
    if not isinstance(t, TensorType):
        raise ShapeRuleError(f"{what} must be a tensor, got {t}")
    return t


def _index(t: ValueType, what: str) -> Dim:
    """The value of ``t`` where the op table declares an Index operand."""
    if not isinstance(t, IndexType):
        raise ShapeRuleError(f"{what} must be an Index value, got {t}")
    return t.value


def _shape_text(shape: Sequence[Dim]) -> str:
    return "<" + "x".join(str(d) for d in shape) + ">"


def same_as_first(types: Sequence[TensorType], attrs: A.ClampAttrs | A.NegateAttrs | A.NoAttrs) -> list[ValueType]:
    return [types[0]]


def elementwise(types: Sequence[TensorType], attrs: A.ArithmeticRightShiftAttrs | A.NanModeAttrs | A.NoAttrs) -> list[ValueType]:
    return [TensorType(types[0].dtype, broadcast_shapes([t.shape for t in types]))]


def elementwise_bool(types: Sequence[TensorType], attrs: A.NoAttrs) -> list[ValueType]:
    return [TensorType(DType.BOOL, broadcast_shapes([t.shape for t in types]))]


def elementwise_mul(types: Sequence[TensorType], attrs: A.MulAttrs) -> list[ValueType]:
    dtype = types[0].dtype
    if dtype in (DType.INT8, DType.INT16):
        dtype = DType.INT32
    return [TensorType(dtype, broadcast_shapes([t.shape for t in types]))]


def select(types: Sequence[TensorType], attrs: A.NoAttrs) -> list[ValueType]:
    return [TensorType(types[1].dtype, broadcast_shapes([t.shape for t in types]))]


def cast(types: Sequence[TensorType], attrs: A.CastAttrs) -> list[ValueType]:
    return [types[0].with_dtype(attrs.dtype)]


def const(types: Sequence[TensorType], attrs: A.ConstAttrs) -> list[ValueType]:
    dtype = DType.INT48 if attrs.int48 else DType(attrs.element_type) if attrs.element_type else \
        from_numpy(attrs.values.dtype)
    return [TensorType(dtype, tuple(int(d) for d in attrs.values.shape))]


def table(types: Sequence[TensorType], attrs: A.TableAttrs) -> list[ValueType]:
    out = DType.INT8 if types[0].dtype == DType.INT8 else DType.INT32
    return [types[0].with_dtype(out)]


def rescale(types: Sequence[TensorType], attrs: A.RescaleAttrs) -> list[ValueType]:
    return [types[0].with_dtype(attrs.output_dtype)]


def reduce_axis(types: Sequence[TensorType], attrs: A.AxisAttrs | A.AxisNanAttrs) -> list[ValueType]:
    t = types[0]
    _check_axis(attrs.axis, t.rank)
    shape = list(t.shape)
    shape[attrs.axis] = 1
    return [t.with_shape(shape)]


def argmax(types: Sequence[TensorType], attrs: A.AxisNanAttrs) -> list[ValueType]:
    t = types[0]
    _check_axis(attrs.axis, t.rank)
    return [TensorType(DType.INT32, t.shape[:attrs.axis] + t.shape[attrs.axis + 1:])]


def _check_axis(axis: int, rank: int) -> None:
    if not 0 <= axis < max(rank, 1):
        raise ShapeRuleError(f"axis {axis} is out of range for rank {rank}")


def concat(types: Sequence[TensorType], attrs: A.AxisAttrs) -> list[ValueType]:
    first = types[0]
    _check_axis(attrs.axis, first.rank)
    total: Dim = 0
    for t in types:
        if t.rank != first.rank:
            raise ShapeRuleError("CONCAT operands must have equal ranks")
        total = add(total, t.shape[attrs.axis])
    shape = list(first.shape)
    shape[attrs.axis] = total
    return [first.with_shape(shape)]


def transpose(types: Sequence[TensorType], attrs: A.TransposeAttrs) -> list[ValueType]:
    t = types[0]
    if sorted(attrs.perms) != list(range(t.rank)):
        raise ShapeRuleError(f"perms {list(attrs.perms)} is not a permutation of rank {t.rank}")
    return [t.with_shape([t.shape[p] for p in attrs.perms])]


def reshape(types: Sequence[ValueType], attrs: A.ReshapeAttrs) -> list[ValueType]:
    t, symbols = _tensor(types[0], "RESHAPE's input"), types[1:]
    dims: list[Dim] = []
    k = 0
    for d in attrs.new_shape:   # a symbolic entry (rank equalization writes them) is a dim as it stands
        if isinstance(d, int) and d == -1:
            if k >= len(symbols):
                raise ShapeRuleError("RESHAPE has fewer shape_symbols than -1 entries in new_shape")
            dims.append(_index(symbols[k], "a RESHAPE shape_symbol"))
            k += 1
        elif isinstance(d, int) and d < 0:
            raise ShapeRuleError(f"RESHAPE new_shape entry {d} is invalid")
        else:
            dims.append(d)
    if k != len(symbols):
        raise ShapeRuleError("RESHAPE has more shape_symbols than -1 entries in new_shape")
    _check_elements(t.shape, dims)
    return [t.with_shape(dims)]


def _check_elements(src: Sequence[Dim], dst: Sequence[Dim]) -> None:
    a, b = product(src), product(dst)
    if is_static(a) and is_static(b) and a != b:
        raise ShapeRuleError(f"cannot reshape {a} elements into {_shape_text(dst)} ({b} elements)")


def slice_(types: Sequence[TensorType], attrs: A.SliceAttrs) -> list[ValueType]:
    t = types[0]
    if len(attrs.start) != t.rank or len(attrs.size) != t.rank:
        raise ShapeRuleError("SLICE start and size must have one entry per dim")
    return [t.with_shape(attrs.size)]


def pad(types: Sequence[TensorType], attrs: A.PadAttrs) -> list[ValueType]:
    t = types[0]
    p = attrs.padding
    if len(p) != 2 * t.rank:
        raise ShapeRuleError("PAD padding must have two entries per dim")
    return [t.with_shape([add(add(d, p[2 * i]), p[2 * i + 1]) for i, d in enumerate(t.shape)])]


def tile(types: Sequence[TensorType], attrs: A.TileAttrs) -> list[ValueType]:
    t = types[0]
    return [t.with_shape([mul(d, m) for d, m in zip(t.shape, attrs.multiples)])]


def reverse(types: Sequence[TensorType], attrs: A.AxisAttrs) -> list[ValueType]:
    _check_axis(attrs.axis, types[0].rank)
    return [types[0]]


def matmul(types: Sequence[TensorType], attrs: A.MatMulAttrs) -> list[ValueType]:
    a, b = types[0], types[1]
    if a.rank != 3 or b.rank != 3:
        raise ShapeRuleError("MATMUL operands must be rank 3 ([N,H,C] x [N,C,W])")
    dtype = DType.INT32 if a.dtype == DType.INT8 else (DType.INT48 if a.dtype == DType.INT16 else a.dtype)
    return [TensorType(dtype, (broadcast_dim(a.shape[0], b.shape[0]), a.shape[1], b.shape[2]))]


def _out_dim(size: Dim, k: Dim, pad_a: int, pad_b: int, stride: int, dilation: int = 1) -> Dim:
    span = add(mul(sub(k, 1), dilation), 1)
    return add(floordiv(sub(add(size, pad_a + pad_b), span), stride), 1)


def _acc_out(dtype: DType, acc: DType) -> DType:
    if dtype.is_float:
        return dtype
    return DType.INT48 if acc == DType.INT48 else DType.INT32


def conv2d(types: Sequence[TensorType], attrs: A.Conv2dAttrs) -> list[ValueType]:
    x, w = types[0], types[1]
    n, h, wd, _ = x.shape
    o, kh, kw, _ = w.shape
    oh = _out_dim(h, kh, attrs.pad[0], attrs.pad[1], attrs.stride[0], attrs.dilation[0])
    ow = _out_dim(wd, kw, attrs.pad[2], attrs.pad[3], attrs.stride[1], attrs.dilation[1])
    return [TensorType(_acc_out(x.dtype, attrs.acc_type), (n, oh, ow, o))]


def depthwise_conv2d(types: Sequence[TensorType], attrs: A.Conv2dAttrs) -> list[ValueType]:
    x, w = types[0], types[1]
    n, h, wd, c = x.shape
    kh, kw, _, m = w.shape
    oh = _out_dim(h, kh, attrs.pad[0], attrs.pad[1], attrs.stride[0], attrs.dilation[0])
    ow = _out_dim(wd, kw, attrs.pad[2], attrs.pad[3], attrs.stride[1], attrs.dilation[1])
    return [TensorType(_acc_out(x.dtype, attrs.acc_type), (n, oh, ow, mul(c, m)))]


def transpose_conv2d(types: Sequence[TensorType], attrs: A.TransposeConv2dAttrs) -> list[ValueType]:
    x, w = types[0], types[1]
    n, h, wd, _ = x.shape
    o, kh, kw, _ = w.shape
    oh = add(mul(sub(h, 1), attrs.stride[0]), attrs.out_pad[0] + attrs.out_pad[1] + kh)
    ow = add(mul(sub(wd, 1), attrs.stride[1]), attrs.out_pad[2] + attrs.out_pad[3] + kw)
    return [TensorType(_acc_out(x.dtype, attrs.acc_type), (n, oh, ow, o))]


def pool2d(types: Sequence[TensorType], attrs: A.AvgPool2dAttrs | A.MaxPool2dAttrs) -> list[ValueType]:
    x = types[0]
    n, h, w, c = x.shape
    oh = _out_dim(h, attrs.kernel[0], attrs.pad[0], attrs.pad[1], attrs.stride[0])
    ow = _out_dim(w, attrs.kernel[1], attrs.pad[2], attrs.pad[3], attrs.stride[1])
    return [x.with_shape((n, oh, ow, c))]


def resize(types: Sequence[TensorType], attrs: A.ResizeAttrs) -> list[ValueType]:
    x = types[0]
    n, h, w, c = x.shape
    sy_n, sy_d, sx_n, sx_d = attrs.scale
    oh = add(floordiv(add(mul(sub(h, 1), sy_n), attrs.border[0] - attrs.offset[0]), sy_d), 1)
    ow = add(floordiv(add(mul(sub(w, 1), sx_n), attrs.border[1] - attrs.offset[1]), sx_d), 1)
    out = x.with_shape((n, oh, ow, c))
    if attrs.mode == "BILINEAR" and x.dtype in _WIDE_BILINEAR:   # scaled integer sums: i8 -> i32, i16 -> i48
        out = out.with_dtype(_WIDE_BILINEAR[x.dtype])
    return [out]


_WIDE_BILINEAR = {DType.INT8: DType.INT32, DType.INT16: DType.INT48}


def gather(types: Sequence[TensorType], attrs: A.NoAttrs) -> list[ValueType]:
    values, indices = types[0], types[1]
    return [values.with_shape((values.shape[0], indices.shape[1], values.shape[2]))]


def scatter(types: Sequence[TensorType], attrs: A.NoAttrs) -> list[ValueType]:
    return [types[0]]


# -- helper ops ----------------------------------------------------------------

def index_const(types: Sequence[TensorType], attrs: A.IndexConstAttrs) -> list[ValueType]:
    return [IndexType(attrs.value)]


def get_dim(types: Sequence[TensorType], attrs: A.DimIndexAttrs) -> list[ValueType]:
    t = types[0]
    _check_axis(attrs.dim_index, t.rank)
    return [IndexType(t.shape[attrs.dim_index])]


def dims_to_tensor(types: Sequence[ValueType], attrs: A.DimsToTensorAttrs) -> list[ValueType]:
    return [TensorType(attrs.dtype, (len(types),))]


def _sorted_unique(indices: Sequence[int]) -> bool:
    return list(indices) == sorted(set(indices))


def expand_dims(types: Sequence[TensorType], attrs: A.IndicesAttrs) -> list[ValueType]:
    t = types[0]
    if not _sorted_unique(attrs.indices):
        raise ShapeRuleError("EXPAND_DIMS indices must be sorted and unique")
    shape = list(t.shape)
    for i in attrs.indices:
        shape.insert(i, 1)
    return [t.with_shape(shape)]


def collapse_dims(types: Sequence[TensorType], attrs: A.IndicesAttrs) -> list[ValueType]:
    t = types[0]
    if not _sorted_unique(attrs.indices):
        raise ShapeRuleError("COLLAPSE_DIMS indices must be sorted and unique")
    for i in attrs.indices:
        if not same(t.shape[i], 1):
            raise ShapeRuleError(f"COLLAPSE_DIMS can only remove a literal 1, not dim {i} = {t.shape[i]}")
    return [t.with_shape([d for i, d in enumerate(t.shape) if i not in attrs.indices])]


def index_binary(fn: Callable[[Dim, Dim], Dim]) -> Callable[[Sequence[IndexType], NoAttrs], list[IndexType]]:
    def rule(types: Sequence[IndexType], attrs: NoAttrs) -> list[IndexType]:
        return [IndexType(fn(types[0].value, types[1].value))]
    return rule


def dyn_slice(types: Sequence[ValueType], attrs: A.NoAttrs) -> list[ValueType]:
    t = _tensor(types[0], "DYN_SLICE's input")
    r = t.rank
    if len(types) != 1 + 2 * r:
        raise ShapeRuleError(f"DYN_SLICE on rank {r} takes {r} start and {r} size indices")
    return [t.with_shape([_index(s, "a DYN_SLICE size") for s in types[1 + r:]])]


def dyn_tile(types: Sequence[ValueType], attrs: A.NoAttrs) -> list[ValueType]:
    t = _tensor(types[0], "DYN_TILE's input")
    if len(types) != 1 + t.rank:
        raise ShapeRuleError(f"DYN_TILE on rank {t.rank} takes {t.rank} multiples")
    return [t.with_shape([mul(d, _index(m, "a DYN_TILE multiple")) for d, m in zip(t.shape, types[1:])])]


def iota(types: Sequence[ValueType], attrs: A.IotaAttrs) -> list[ValueType]:
    return [TensorType(attrs.dtype, (_index(types[0], "IOTA's size"),))]


def count_rescale(types: Sequence[ValueType], attrs: A.CountRescaleAttrs) -> list[ValueType]:
    if len(types) != 2:
        raise ShapeRuleError("COUNT_RESCALE takes an int32 tensor and one count index")
    return [_tensor(types[0], "COUNT_RESCALE's input").with_dtype(attrs.output_dtype)]


def extract_dim_rule(types: Sequence[TensorType], attrs: A.DimIndexAttrs) -> list[ValueType]:
    raise AssertionError("EXTRACT_DIM results are typed by the builder (data-dependent value)")


def recurrent(types: Sequence[TensorType], attrs: A.RecurrentAttrs) -> list[ValueType]:
    """RECURRENT (ONNX LSTM/GRU/RNN): Y, Y_h and, for LSTM, Y_c in the op's layout."""
    x, w = types[0], types[1]
    if x.rank != 3 or w.rank != 3:
        raise ShapeRuleError(f"RECURRENT takes a rank 3 X and W, got {_shape_text(x.shape)} and {_shape_text(w.shape)}")
    seq, batch = (x.shape[1], x.shape[0]) if attrs.layout else (x.shape[0], x.shape[1])
    dirs, hidden = (2 if attrs.direction == "bidirectional" else 1), attrs.hidden_size
    y = (batch, seq, dirs, hidden) if attrs.layout else (seq, dirs, batch, hidden)
    state = TensorType(x.dtype, (batch, dirs, hidden) if attrs.layout else (dirs, batch, hidden))
    cell = state.with_dtype(DType.INT16) if getattr(attrs, "int_plan", None) is not None else state  # Q3.12
    out: list[ValueType] = [TensorType(x.dtype, y), state]
    return out + ([cell] if attrs.cell == "LSTM" else [])


def conv3d(types: Sequence[TensorType], attrs: A.Conv3dAttrs) -> list[ValueType]:
    """CONV3D: input [N, D, H, W, C], weight [O, KD, KH, KW, C]; pad [d0, d1, top, bottom, left, right]."""
    x, w = types[0], types[1]
    if x.rank != 5 or w.rank != 5:
        raise ShapeRuleError(f"CONV3D takes a rank 5 input and weight, got {_shape_text(x.shape)} and "
                             f"{_shape_text(w.shape)}")
    n, spatial, o = x.shape[0], x.shape[1:4], w.shape[0]
    out = [_out_dim(spatial[i], w.shape[1 + i], attrs.pad[2 * i], attrs.pad[2 * i + 1], attrs.stride[i],
                    attrs.dilation[i]) for i in range(3)]
    return [TensorType(_acc_out(x.dtype, attrs.acc_type), (n, *out, o))]


def interp_matrix(types: Sequence[ValueType], attrs: A.InterpMatrixAttrs) -> list[ValueType]:
    """INTERP_MATRIX: the ``[1, in, out]`` weights of a 1-D resize (a MATMUL's right operand)."""
    return [TensorType(attrs.dtype, (1, _index(types[0], "the input size"), _index(types[1], "the output size")))]


def nonzero(types: Sequence[TensorType], attrs: A.NonZeroAttrs) -> list[ValueType]:
    """NONZERO: ``[rank, count]`` INT32 coordinates; ``count`` is the data-dependent symbol its attrs name."""
    t = types[0]
    if t.rank < 1:
        raise ShapeRuleError("NONZERO needs an input of rank >= 1")
    return [TensorType(DType.INT32, (t.rank, sym(attrs.count)))]


def dyn_pad(types: Sequence[ValueType], attrs: A.DynPadAttrs) -> list[ValueType]:
    """DYN_PAD: each dim grows by its (before, after) Index operands, which come interleaved per dim."""
    t = _tensor(types[0], "DYN_PAD's input")
    if len(types) != 1 + 2 * t.rank:
        raise ShapeRuleError(f"DYN_PAD on rank {t.rank} takes {2 * t.rank} pad amounts, got {len(types) - 1}")
    pads = [_index(p, "a DYN_PAD amount") for p in types[1:]]
    return [t.with_shape([add(add(d, pads[2 * i]), pads[2 * i + 1]) for i, d in enumerate(t.shape)])]
