"""ONNX GatherElements, GatherND, ScatterElements, ScatterND and ReverseSequence
against onnxruntime, on symbolic dims fed at two sizes (the harness runs the
symbolic program and the specialized, emitted, read-back one).

Covers every axis (negative too), negative indices, indices smaller than the
data on the other axes, GatherND's ``batch_dims``, every scatter reduction
with duplicate indices (the comparison-matrix construction), scatters without
a reduction (one TOSA SCATTER), int and bool data, and the refusals. A few
of the emitted programs also run on the official reference model.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tosaconv.diagnostics import TosaconvError
from tosaconv.emit import read_tosa

from .harness import (BOOL, F32, I32, I64, check_reference_model, check_with_onnxruntime, convert, info, make_model,
                      one_node, rand, run_graph, specialize_and_emit)

RNG = np.random.default_rng


def _ints(shape, low, high, seed):
    return RNG(seed).integers(low, high, shape).astype(np.int64)


# -- GatherElements ---------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_gather_elements(axis):
    model = one_node("GatherElements", [info("x", F32, ["N", 4, "W"]), info("i", I64, ["N", 3, "W"])],
                     [info("y", F32, None)], axis=axis)
    feeds = []
    for seed, (n, w) in enumerate([(2, 5), (3, 1)]):
        dim = (n, 4, w)[axis]
        feeds.append({"x": rand(n, 4, w, seed=seed), "i": _ints((n, 3, w), -dim, dim, seed)})
    check_with_onnxruntime(model, feeds)


@pytest.mark.parametrize("elem,dtype", [(I32, np.int32), (BOOL, np.bool_)])
def test_gather_elements_int_and_bool_data_with_smaller_indices(elem, dtype):
    model = one_node("GatherElements", [info("x", elem, ["N", 5]), info("i", I64, [2, 3])],
                     [info("y", elem, None)], axis=1)
    feeds = [{"x": _ints((n, 5), -9, 9, n).astype(dtype), "i": _ints((2, 3), -5, 5, n)} for n in (2, 4)]
    check_with_onnxruntime(model, feeds)


# -- GatherND ---------------------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 2])
def test_gather_nd(k):
    model = one_node("GatherND", [info("x", F32, ["N", 3, 4]), info("i", I64, ["M", k])], [info("y", F32, None)])
    feeds = []
    for seed, (n, m) in enumerate([(2, 3), (5, 1)]):
        cols = [_ints((m, 1), -d, d, seed + j) for j, d in enumerate((n, 3)[:k])]
        feeds.append({"x": rand(n, 3, 4, seed=seed), "i": np.concatenate(cols, axis=1)})
    check_with_onnxruntime(model, feeds)


def test_gather_nd_batch_dims():
    model = one_node("GatherND", [info("x", F32, ["B", 3, 4, 2]), info("i", I64, ["B", 5, 2])],
                     [info("y", F32, None)], batch_dims=1)
    feeds = [{"x": rand(b, 3, 4, 2, seed=b),
              "i": np.stack([_ints((b, 5), -3, 3, b), _ints((b, 5), -4, 4, b + 9)], axis=-1)} for b in (1, 3)]
    check_with_onnxruntime(model, feeds)


def test_gather_nd_needs_a_static_index_depth():
    model = one_node("GatherND", [info("x", F32, [3, 4]), info("i", I64, [2, "K"])], [info("y", F32, None)])
    with pytest.raises(TosaconvError, match="GatherND needs the last dim of its indices to be static"):
        convert(model)


# -- ScatterElements --------------------------------------------------------------------

def _scatter_elements(reduction, axis=1, elem=F32, upd_dims=("N", 3)):
    attrs = {"axis": axis} if reduction is None else {"axis": axis, "reduction": reduction}
    inputs = [info("x", elem, ["N", 5]), info("i", I64, list(upd_dims)), info("u", elem, list(upd_dims))]
    return one_node("ScatterElements", inputs, [info("y", elem, None)], opset=18, **attrs)


def _unique_rows(n, per_row, dim, seed):
    rng = RNG(seed)
    return np.stack([rng.permutation(dim)[:per_row] - dim * rng.integers(0, 2, per_row) for _ in range(n)])


def test_scatter_elements_without_reduction_is_one_scatter():
    feeds = [{"x": rand(n, 5, seed=n), "i": _unique_rows(n, 3, 5, n), "u": rand(n, 3, seed=n + 7)}
             for n in (2, 4)]
    graph = check_with_onnxruntime(_scatter_elements(None), feeds)
    assert graph.histogram().get("SCATTER") == 1


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
def test_scatter_elements_reductions_with_duplicates(reduction):
    feeds = [{"x": rand(n, 5, seed=n), "i": _ints((n, 3), -5, 2, n), "u": rand(n, 3, seed=n + 7)}
             for n in (2, 4)]
    check_with_onnxruntime(_scatter_elements(reduction), feeds)


@pytest.mark.parametrize("reduction", ["add", "max"])
def test_scatter_elements_reductions_on_axis_0_with_a_corner_of_updates(reduction):
    model = _scatter_elements(reduction, axis=0, elem=I32, upd_dims=(2, 4))
    feeds = [{"x": _ints((n, 5), -9, 9, n).astype(np.int32), "i": _ints((2, 4), -n, n, n),
              "u": _ints((2, 4), -9, 9, n + 3).astype(np.int32)} for n in (3, 5)]
    check_with_onnxruntime(model, feeds)


def test_scatter_elements_mul_on_ints_is_refused():
    with pytest.raises(TosaconvError, match="reduction 'mul' on i32 data is not supported"):
        convert(_scatter_elements("mul", elem=I32))


def test_scatter_opset_11_bool_data():
    model = one_node("ScatterElements", [info("x", BOOL, [4, "W"]), info("i", I64, [4, 1]),
                                         info("u", BOOL, [4, 1])], [info("y", BOOL, None)], opset=11, axis=1)
    feeds = [{"x": np.zeros((4, w), bool), "i": _ints((4, 1), 0, w, w), "u": np.ones((4, 1), bool)} for w in (2, 6)]
    check_with_onnxruntime(model, feeds)


# -- ScatterND ---------------------------------------------------------------------------

def _scatter_nd(reduction, k):
    attrs = {} if reduction is None else {"reduction": reduction}
    inputs = [info("x", F32, ["N", 4, 3]), info("i", I64, ["M", k]), info("u", F32, ["M"] + [4, 3][k - 1:])]
    return one_node("ScatterND", inputs, [info("y", F32, None)], opset=18, **attrs)


@pytest.mark.parametrize("k", [1, 2])
def test_scatter_nd_without_reduction(k):
    feeds = []
    for n, m in ((3, 2), (5, 4)):
        rows = RNG(n).permutation(n * 4)[:m]
        idx = np.stack([rows // 4, rows % 4], axis=1)[:, :k] if k == 2 else (rows[:m, None] % n)
        idx = np.unique(idx, axis=0) if k == 1 else idx
        u_shape = (len(idx),) + ((4, 3)[k - 1:])
        feeds.append({"x": rand(n, 4, 3, seed=n), "i": idx.astype(np.int64), "u": rand(*u_shape, seed=n + 1)})
    m_values = {f["i"].shape[0] for f in feeds}
    assert len(m_values) == 2
    check_with_onnxruntime(_scatter_nd(None, k), feeds)


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("k", [1, 2])
def test_scatter_nd_reductions_with_duplicates(reduction, k):
    feeds = []
    for n, m in ((2, 5), (4, 3)):
        idx = np.stack([_ints(m, -n, n, n), _ints(m, -4, 4, n + 1)], axis=1)[:, :k]
        u_shape = (m,) + ((4, 3)[k - 1:])
        feeds.append({"x": rand(n, 4, 3, seed=n), "i": idx, "u": rand(*u_shape, seed=n + 2)})
    check_with_onnxruntime(_scatter_nd(reduction, k), feeds)


# -- ReverseSequence ----------------------------------------------------------------------

@pytest.mark.parametrize("batch_axis,time_axis", [(0, 1), (1, 0)])
def test_reverse_sequence(batch_axis, time_axis):
    dims = ["B", "T", 3] if batch_axis == 0 else ["T", "B", 3]
    model = one_node("ReverseSequence", [info("x", F32, dims), info("lens", I64, ["B"])], [info("y", F32, None)],
                     batch_axis=batch_axis, time_axis=time_axis)
    feeds = []
    for seed, (b, t) in enumerate([(2, 5), (3, 1)]):
        shape = (b, t, 3) if batch_axis == 0 else (t, b, 3)
        feeds.append({"x": rand(*shape, seed=seed), "lens": _ints(b, 1, t + 1, seed)})
    check_with_onnxruntime(model, feeds)


def test_gather_elements_feeding_a_reshape_keeps_symbolic_shapes():
    nodes = [helper.make_node("GatherElements", ["x", "i"], ["g"], axis=0),
             helper.make_node("Flatten", ["g"], ["y"], axis=0)]
    model = make_model(nodes, [info("x", F32, ["N", 2]), info("i", I64, ["M", 2])], [info("y", F32, None)])
    feeds = [{"x": rand(n, 2, seed=n), "i": _ints((m, 2), 0, n, n)} for n, m in ((3, 2), (2, 5))]
    check_with_onnxruntime(model, feeds)


def _reference_cases():
    bool_gather = one_node("GatherElements", [info("x", BOOL, ["N", 5]), info("i", I64, [2, 3])],
                           [info("y", BOOL, None)], axis=1)
    yield bool_gather, {"x": _ints((2, 5), 0, 2, 1).astype(bool), "i": _ints((2, 3), -5, 5, 2)}
    yield _scatter_elements("max", axis=0, elem=I32, upd_dims=(2, 4)), {
        "x": _ints((3, 5), -9, 9, 3).astype(np.int32), "i": _ints((2, 4), -3, 3, 4),
        "u": _ints((2, 4), -9, 9, 5).astype(np.int32)}
    yield _scatter_nd("min", 2), {"x": rand(3, 4, 3), "i": np.stack([_ints(5, -3, 3, 6), _ints(5, -4, 4, 7)], 1),
                                  "u": rand(5, 3)}


@pytest.mark.parametrize("index", range(3))
def test_reference_model_runs_the_emitted_programs(index, tmp_path):
    model, feeds = list(_reference_cases())[index]
    static, tosa = specialize_and_emit(convert(model), {k: np.shape(v) for k, v in feeds.items()})
    check_reference_model(tosa, static, feeds, run_graph(read_tosa(tosa), feeds), tmp_path)
