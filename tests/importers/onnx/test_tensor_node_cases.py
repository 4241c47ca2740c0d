"""Extra checks on the tensor and indexing ops' node cases (test_node_cases.py runs them all):
a sample runs on the official reference model, and NonZero/Compress of data the bindings do
not determine run correctly as symbolic programs but cannot be specialized (their output
size is only known when the model runs).
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv import api
from tosaconv.diagnostics import ShapeError

from .harness import (assert_close, case_arrays, convert, node_cases, run_graph,
                      run_node_case)

OPS = ["Pad", "Tile", "DepthToSpace", "SpaceToDepth", "GatherElements", "GatherND", "ScatterElements",
       "ScatterND", "Scatter", "TopK", "CumSum", "Trilu", "OneHot", "EyeLike", "Einsum", "ReverseSequence"]
DATA_DEPENDENT = ["NonZero", "Compress"]
REFERENCE_SAMPLE = ["test_edge_pad", "test_reflect_pad", "test_tile", "test_depthtospace_crd_mode_example",
                    "test_gather_elements_negative_indices", "test_gathernd_example_int32_batch_dim1",
                    "test_scatter_elements_with_duplicate_indices", "test_scatternd_max", "test_top_k_smallest",
                    "test_cumsum_1d_reverse_exclusive", "test_tril_neg", "test_onehot_with_axis",
                    "test_eyelike_populate_off_main_diagonal", "test_einsum_batch_matmul",
                    "test_reversesequence_time"]


@pytest.mark.parametrize("name", REFERENCE_SAMPLE)
def test_reference_model_agrees(name, tmp_path):
    case = next(c for op in OPS for c in node_cases(op) if c.name == name)
    run_node_case(case, tmp_path)


def _data_dependent_cases():
    return [c for op in DATA_DEPENDENT for c in node_cases(op)]


@pytest.mark.parametrize("case", _data_dependent_cases(), ids=lambda c: c.name)
def test_data_dependent_case_runs_symbolically_and_refuses_to_specialize(case):
    inputs, outputs = case_arrays(case)
    feeds = {vi.name: a for vi, a in zip(case.model.graph.input, inputs)}
    graph = convert(case.model)   # as written: Compress's condition fed at run time (the scoreboard freezes it)
    for i, (got, want) in enumerate(zip(run_graph(graph, feeds), outputs)):
        assert_close(got, want, 1e-6, 0, f"{case.name} output {i}")
    bindings = api.solve_bindings(graph, {k: np.shape(v) for k, v in feeds.items()})
    with pytest.raises(ShapeError, match="the count of non-zeros .* is only known when the model runs"):
        api.specialize(graph, bindings)
