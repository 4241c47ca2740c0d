"""The onnx package's node test cases for the tensor and indexing ops: Pad, Tile,
DepthToSpace, SpaceToDepth, GatherElements, GatherND, ScatterElements,
ScatterND, Scatter, TopK, CumSum, Trilu, OneHot, EyeLike, Einsum,
ReverseSequence, NonZero and Compress.

Most run through import, specialization, emission and the interpreter and
must match the cases' expected outputs (a sample also runs on the official
reference model). Two kinds are refused on purpose, and are tested as such:
Einsum equations with a repeated index (a diagonal) are refused at import, and
NonZero/Compress of data the bindings do not determine run correctly as
symbolic programs but cannot be specialized (their output size is only known
when the model runs).
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv import api
from tosaconv.diagnostics import ConversionError, ShapeError

from .harness import (assert_close, case_arrays, convert, freeze_shape_operands, node_cases, run_graph,
                      run_node_case, run_or_refuse)

OPS = ["Pad", "Tile", "DepthToSpace", "SpaceToDepth", "GatherElements", "GatherND", "ScatterElements",
       "ScatterND", "Scatter", "TopK", "CumSum", "Trilu", "OneHot", "EyeLike", "Einsum", "ReverseSequence"]
DATA_DEPENDENT = ["NonZero", "Compress"]
REFUSED = {"test_einsum_batch_diagonal": "repeats index 'i' \\(a diagonal\\)"}
CASES = [c for op in OPS for c in node_cases(op) if c.name not in REFUSED]
REFERENCE_SAMPLE = ["test_edge_pad", "test_reflect_pad", "test_tile", "test_depthtospace_crd_mode_example",
                    "test_gather_elements_negative_indices", "test_gathernd_example_int32_batch_dim1",
                    "test_scatter_elements_with_duplicate_indices", "test_scatternd_max", "test_top_k_smallest",
                    "test_cumsum_1d_reverse_exclusive", "test_tril_neg", "test_onehot_with_axis",
                    "test_eyelike_populate_off_main_diagonal", "test_einsum_batch_matmul",
                    "test_reversesequence_time"]


def test_every_op_has_cases():
    assert {op for op in OPS + DATA_DEPENDENT if node_cases(op)} == set(OPS + DATA_DEPENDENT)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_node_case(case):
    run_or_refuse(case)


@pytest.mark.parametrize("name", REFERENCE_SAMPLE)
def test_reference_model_agrees(name, tmp_path):
    case = next(c for op in OPS for c in node_cases(op) if c.name == name)
    run_node_case(case, tmp_path)


@pytest.mark.parametrize("name,message", sorted(REFUSED.items()))
def test_refused_case_says_why(name, message):
    case = next(c for c in node_cases("Einsum") if c.name == name)
    with pytest.raises(ConversionError, match=message):
        run_node_case(case)


def _data_dependent_cases():
    return [c for op in DATA_DEPENDENT for c in node_cases(op)]


@pytest.mark.parametrize("case", _data_dependent_cases(), ids=lambda c: c.name)
def test_data_dependent_case_runs_symbolically_and_refuses_to_specialize(case):
    inputs, outputs = case_arrays(case)
    feeds = {vi.name: a for vi, a in zip(case.model.graph.input, inputs)}
    model, feeds = freeze_shape_operands(case.model, feeds)
    graph = convert(model)
    for i, (got, want) in enumerate(zip(run_graph(graph, feeds), outputs)):
        assert_close(got, want, 1e-6, 0, f"{case.name} output {i}")
    bindings = api.solve_bindings(graph, {k: np.shape(v) for k, v in feeds.items()})
    with pytest.raises(ShapeError, match="the count of non-zeros .* is only known when the model runs"):
        api.specialize(graph, bindings)
