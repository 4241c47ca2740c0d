"""The TFLite idioms of TensorFlow's audio front-ends (tf.signal.frame/stft, Keras Flatten), as
BirdNET's mel layer and word-activation-recognition's preprocessing write them.

* bounds computed from shapes: ``SHAPE -> SPLIT_V`` (with an empty piece), ``REDUCE_PROD`` of a shape
  (an element count), ``FLOOR_DIV``/``MUL``/``MAXIMUM``/``MINIMUM`` of those scalars, ``PACK``, then
  STRIDED_SLICE's end, SLICE's size and RANGE's limit: all index arithmetic, so the program stays
  symbolic and decays once the input length is bound;
* RFFT2D's complex result moved by RESHAPE, SQUEEZE, EXPAND_DIMS and TRANSPOSE before COMPLEX_ABS, and
  CAST to float32 (the real part, as LiteRT's cast.cc does).

Every model runs in LiteRT's reference kernels at two input lengths, against the symbolic program and
the specialized, emitted ``.tosa`` (harness), and the official reference model runs the emitted program.
Bounds read from tensor data are refused by name.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import (ModelBuilder, check_reference_model, check_with_litert, convert, rand,
                                            run_graph, specialize_and_emit)
from tosaconv.diagnostics import TosaconvError

I32 = np.int32
FFT_ATOL, FFT_RTOL = 2e-4, 1e-4     # as test_fft_ops.py: float32 DFTs of at most 64 terms


def _i32(m, name, op, inputs, options=None, shape=(), **fields):
    out = m.tensor(name, list(shape), "INT32")
    m.op(op, inputs, [out], options, **fields)
    return out


def _shape_parts(m, x):
    """SHAPE(x) split by SPLIT_V into [batch], [length] and an empty piece, as tf.signal.frame does."""
    s = _i32(m, "s", "SHAPE", [x], "ShapeOptions", shape=[2], OutType=2)
    pieces = [m.tensor(n, [k], "INT32") for n, k in (("outer", 1), ("framed", 1), ("inner", 0))]
    m.op("SPLIT_V", [s, m.const("splits", np.array([1, 1, 0], I32)), m.const("ax0", np.array(0, I32))], pieces,
         "SplitVOptions", NumSplits=3)
    length = _i32(m, "length", "RESHAPE", [pieces[1], m.const("scalar", np.zeros((0,), I32))])
    return s, pieces[0], length


def frame_model() -> bytes:
    """x [B, T] -> x[:, :2 * (T // 2)] by a STRIDED_SLICE whose end is PACKed from the shape."""
    m = ModelBuilder()
    x = m.input("x", [2, 9], signature=[-1, -1])
    _, outer, length = _shape_parts(m, x)
    two = m.const("two", np.array(2, I32))
    even = _i32(m, "even", "MUL", [_i32(m, "half", "FLOOR_DIV", [length, two]), two], "MulOptions")
    end = _i32(m, "end", "CONCATENATION", [outer, _i32(m, "even1", "RESHAPE", [even, m.const("one", np.array([1], I32))],
                                                        shape=[1])], "ConcatenationOptions", shape=[2], Axis=0)
    y = m.tensor("y", [2, 8], signature=[-1, -1])
    m.op("STRIDED_SLICE", [x, m.const("b", np.array([0, 0], I32)), end, m.const("st", np.array([1, 1], I32))], [y],
         "StridedSliceOptions")
    m.output(y)
    return m.finish()


def flatten_slice_model() -> bytes:
    """x [B, T] -> SLICE size [-1, 4 * (prod(shape) // B // 4)] (word-activation's framing)."""
    m = ModelBuilder()
    x = m.input("x", [2, 9], signature=[-1, -1])
    s, _, _ = _shape_parts(m, x)
    count = _i32(m, "count", "REDUCE_PROD", [s, m.const("ax", np.array(0, I32))], "ReducerOptions")
    batch = _i32(m, "batch", "STRIDED_SLICE", [s, m.const("b0", np.array([0], I32)), m.const("e1", np.array([1], I32)),
                                               m.const("s1", np.array([1], I32))], "StridedSliceOptions",
                 ShrinkAxisMask=1)
    four = m.const("four", np.array(4, I32))
    per_row = _i32(m, "per_row", "FLOOR_DIV", [count, batch])
    keep = _i32(m, "keep", "MUL", [_i32(m, "blocks", "FLOOR_DIV", [per_row, four]), four], "MulOptions")
    size = _i32(m, "size", "PACK", [m.const("all", np.array(-1, I32)), keep], "PackOptions", shape=[2],
                ValuesCount=2, Axis=0)
    y = m.tensor("y", [2, 8], signature=[-1, -1])
    m.op("SLICE", [x, m.const("begin", np.array([0, 0], I32)), size], [y])
    m.output(y)
    return m.finish()


def range_model() -> bytes:
    """RANGE(0, min(max((T - 6) // 2 + 1, 0), 4), 1) as float: frame starts, clamped like tf.signal.frame."""
    m = ModelBuilder()
    x = m.input("x", [1, 9], signature=[1, -1])
    _, _, length = _shape_parts(m, x)
    frames = _i32(m, "frames", "ADD", [_i32(m, "q", "FLOOR_DIV", [_i32(m, "d", "SUB", [length, m.const("six", np.array(
        6, I32))], "SubOptions"), m.const("two", np.array(2, I32))]), m.const("one", np.array(1, I32))], "AddOptions")
    clamped = _i32(m, "clamped", "MINIMUM", [_i32(m, "pos", "MAXIMUM", [frames, m.const("zero", np.array(0, I32))]),
                                             m.const("cap", np.array(4, I32))])
    r = m.tensor("r", [2], "INT32", signature=[-1])
    m.op("RANGE", [m.const("start", np.array(0, I32)), clamped, m.const("delta", np.array(1, I32))], [r])
    y = m.tensor("y", [2], signature=[-1])
    m.op("CAST", [r], [y])
    m.output(y)
    return m.finish()


@pytest.mark.parametrize("build,sizes", [(frame_model, ((2, 9), (3, 12))), (flatten_slice_model, ((2, 9), (1, 14))),
                                         (range_model, ((1, 9), (1, 13)))],
                         ids=["strided-slice-end", "slice-size", "range-limit"])
def test_bounds_computed_from_shapes(build, sizes, tmp_path):
    feeds = [{"x": rand(*s, seed=sum(s))} for s in sizes]
    graph = check_with_litert(build(), feeds, rtol=0, atol=0)
    for f in feeds:
        static, tosa = specialize_and_emit(graph, {"x": f["x"].shape})
        check_reference_model(tosa, static, f, run_graph(static, f), tmp_path / "x".join(map(str, f["x"].shape)))


def _stft_model(move: str) -> bytes:
    """x [B, 4, 16] -> EXPAND_DIMS -> RFFT2D [B, 4, 1, 9] -> ``move`` -> COMPLEX_ABS, or -> CAST float32."""
    m = ModelBuilder()
    x = m.input("x", [1, 4, 16], signature=[-1, 4, 16])
    x4 = m.tensor("x4", [1, 4, 1, 16], signature=[-1, 4, 1, 16])
    m.op("EXPAND_DIMS", [x, m.const("axis", np.array(-2, I32))], [x4])
    z = m.tensor("z", [1, 4, 1, 9], "COMPLEX64", signature=[-1, 4, 1, 9])
    m.op("RFFT2D", [x4, m.const("n", np.array([1, 16], I32))], [z], "Rfft2dOptions")
    shape, reader = {"SQUEEZE": [1, 4, 9], "RESHAPE": [1, 36], "EXPAND_DIMS": [1, 4, 1, 9, 1],
                     "TRANSPOSE": [1, 9, 1, 4], "CAST": [1, 4, 1, 9]}[move], "COMPLEX_ABS"
    sig = [-1] + shape[1:]
    moved = m.tensor("moved", shape, "COMPLEX64", signature=sig)
    if move == "SQUEEZE":
        m.op("SQUEEZE", [z], [moved], "SqueezeOptions", SqueezeDims=[2])
    elif move == "RESHAPE":
        m.op("RESHAPE", [z, m.const("shape", np.array([-1, 36], I32))], [moved])
    elif move == "EXPAND_DIMS":
        m.op("EXPAND_DIMS", [z, m.const("at", np.array(4, I32))], [moved])
    elif move == "TRANSPOSE":
        m.op("TRANSPOSE", [z, m.const("perm", np.array([0, 3, 2, 1], I32))], [moved])
    else:
        moved, reader = z, "CAST"
    y = m.tensor("y", shape, signature=sig)
    m.op(reader, [moved], [y])
    m.output(y)
    return m.finish()


@pytest.mark.parametrize("move", ["SQUEEZE", "RESHAPE", "EXPAND_DIMS", "TRANSPOSE", "CAST"])
def test_complex_results_move_part_by_part(move, tmp_path):
    feeds = [{"x": rand(b, 4, 16, seed=b)} for b in (1, 3)]
    graph = check_with_litert(_stft_model(move), feeds, rtol=FFT_RTOL, atol=FFT_ATOL)
    static, tosa = specialize_and_emit(graph, {"x": (3, 4, 16)})
    check_reference_model(tosa, static, feeds[1], run_graph(static, feeds[1]), tmp_path)


def test_slice_size_from_tensor_data_is_refused_by_name():
    m = ModelBuilder()
    x, size = m.input("x", [2, 9]), m.input("size", [2], "INT32")
    y = m.tensor("y", [2, 8])
    m.op("SLICE", [x, m.const("begin", np.array([0, 0], I32)), size], [y])
    m.output(y)
    with pytest.raises(TosaconvError, match=r"SLICE 'y'.*SLICE size must be a constant or computed from shapes"):
        convert(m.finish())


def test_range_limit_that_only_constant_folding_computes(tmp_path):
    """RANGE(0, REDUCE_MAX([3, 5, 2])): the limit is read from tensor data at import (a data-dependent
    symbol), then constant folding computes it; the symbol must stay defined until specialization binds
    it (it used to leave IOTA typed by an orphaned symbol: an internal 'IR invalid' error)."""
    m = ModelBuilder()
    m.input("x", [1, 4])   # unused: the model's one input
    limit = _i32(m, "limit", "REDUCE_MAX", [m.const("vals", np.array([3, 5, 2], I32)),
                                             m.const("ax", np.array([0], I32))], "ReducerOptions")
    r = m.tensor("r", [5], "INT32", signature=[-1])
    m.op("RANGE", [m.const("start", np.array(0, I32)), limit, m.const("delta", np.array(1, I32))], [r])
    y = m.tensor("y", [5], signature=[-1])
    m.op("CAST", [r], [y])
    m.output(y)
    feeds = {"x": rand(1, 4)}
    graph = check_with_litert(m.finish(), [feeds], rtol=0, atol=0)
    static, tosa = specialize_and_emit(graph, {"x": (1, 4)})
    check_reference_model(tosa, static, feeds, run_graph(static, feeds), tmp_path)


def test_slicing_a_shape_vector_at_a_symbolic_end_is_refused_by_name():
    """SHAPE(x)[0:x.0] picks a symbolic number of shape elements: no static vector length, so refused."""
    m = ModelBuilder()
    x = m.input("x", [2, 3], signature=[-1, 3])
    s = _i32(m, "s", "SHAPE", [x], "ShapeOptions", shape=[2], OutType=2)
    batch = _i32(m, "batch", "STRIDED_SLICE", [s, m.const("b0", np.array([0], I32)), m.const("e1", np.array([1], I32)),
                                               m.const("s1", np.array([1], I32))], "StridedSliceOptions", shape=[1])
    y = _i32(m, "y", "STRIDED_SLICE", [s, m.const("b", np.array([0], I32)), batch, m.const("st", np.array([1], I32))],
             "StridedSliceOptions", shape=[2])
    m.output(y)
    with pytest.raises(TosaconvError, match=r"STRIDED_SLICE 'y'.*of a shape vector needs constant begin and end"):
        convert(m.finish())
