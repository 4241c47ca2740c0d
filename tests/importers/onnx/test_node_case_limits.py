"""Published limits and the refusals that come from them, checked on the onnx package's node cases.

Each claimed op publishes what it does not handle (``tosaconv ops``). Here:
a sample of node cases run *as written* (shape operands fed at run time, as
the onnx backend runner feeds them) is either passed or refused with a note
naming a limit that very op publishes (its message quotes the limit's text)
or that every op publishes (the model's input types and dims, empty results); the inputs the scoreboard freezes
into constants are all covered by a published limit; and a refusal that used
to be a wrong answer (Split sizes given at run time) now comes from a limit.
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest

from tosaconv.cli.info import onnx_limits, supported_ops
from tosaconv.diagnostics import ConversionError, TosaconvError
from tosaconv.importers.onnx.registry import publish, published_limits
from tosaconv.lowering.limits import SIZE_FROM_DATA, Limit, LimitError, LimitKind, limit_note

from .harness import F32, I64, SHAPE_OPERANDS, const, convert, info, node_cases, one_node, run_node_case
from .scoreboard import matching_limit

PUBLISHED = {r["op_type"]: {lim["key"]: lim for lim in r["limits"]}
             for r in supported_ops() if r["domain"] == "ai.onnx"}
LIMITED_OPS = sorted(op for op, limits in PUBLISHED.items() if limits)


def _sample(op: str, n: int = 4) -> list:
    """Up to ``n`` node cases of ``op``: those with run-time shape operands first, then the rest."""
    cases = node_cases(op)
    fed = [c for c in cases if _fed_shape_operands(c)]
    return (fed + [c for c in cases if c not in fed])[:n]


def _fed_shape_operands(case) -> list:
    node = case.model.graph.node[0]
    return [node.input[i] for i in SHAPE_OPERANDS.get(node.op_type, ()) if i < len(node.input) and node.input[i]]


@pytest.mark.parametrize("op", LIMITED_OPS)
def test_every_refusal_of_a_sampled_case_names_a_published_limit_of_its_op(op):
    for case in _sample(op):
        try:
            run_node_case(case, freeze=False)
        except TosaconvError as e:
            key = matching_limit(op, e)
            assert key, f"{case.name} is refused without naming a published limit of {op} or of every op: {e}"
            if key in PUBLISHED[op] and key != SIZE_FROM_DATA:   # specialization names the value it reads instead
                assert PUBLISHED[op][key]["text"] in str(e), f"{case.name}: {e}"


def test_the_scoreboard_freezes_only_inputs_a_published_limit_covers():
    """The harness gives these inputs as constants; each must be the subject of a published input limit
    (a freeze is the published workaround, never a hidden one)."""
    for op, positions in SHAPE_OPERANDS.items():
        if op not in PUBLISHED:
            continue   # an op tosaconv does not claim at opsets 11-21 (Upsample)
        names = [p.name for p in onnx.defs.get_schema(op).inputs]
        covered = {s for lim in PUBLISHED[op].values() if lim["kind"] == "input" for s in lim["subject"].split(" or ")}
        for i in positions:
            assert names[i] in covered, f"{op} input {i} ('{names[i]}') is frozen but no published limit covers it"


def test_a_refusal_carries_the_note_of_the_limit_and_quotes_its_text():
    model = one_node("Einsum", [info("x", F32, [3, 3])], [info("y", F32, [3])], equation="ii->i")
    with pytest.raises(ConversionError) as err:
        convert(model)
    d = err.value.diagnostics[0]
    limit = PUBLISHED["Einsum"]["diagonal"]
    assert d.code == "E-CONVERT" and d.location.name == "einsum_node"
    assert d.notes == (limit_note("diagonal"),)
    assert f"{limit['text']} is not supported: {limit['reason']}; {limit['hint']}" in d.message
    assert matching_limit("Einsum", err.value) == "diagonal"
    assert matching_limit("MatMul", err.value) == ""   # a limit counts only for the op that publishes it


def test_split_sizes_given_at_run_time_are_refused_from_a_published_limit():
    """They used to be ignored (an equal split: a wrong answer); the static output sizes are their values."""
    model = one_node("Split", [info("x", F32, [6]), info("split", I64, [2])],
                     [info("a", F32, None), info("b", F32, None)], opset=13)
    with pytest.raises(ConversionError) as err:
        convert(model)
    d = err.value.diagnostics[0]
    assert d.notes == (limit_note("split-from-data"),) and "Split input 'split'" in d.message
    assert "input split computed from tensor data at run time is not supported" in d.message


def test_split_sizes_given_as_constants_still_split_unevenly():
    from .harness import run_graph
    model = one_node("Split", [info("x", F32, [6])], [info("a", F32, None), info("b", F32, None)],
                     [const("split", np.array([2, 4], np.int64))], opset=13)
    a, b = run_graph(convert(model), {"x": np.arange(6, dtype=np.float32)})
    assert a.tolist() == [0, 1] and b.tolist() == [2, 3, 4, 5]


def test_a_model_input_without_a_tosa_type_is_refused_from_a_limit_of_every_op():
    model = one_node("Abs", [info("x", onnx.TensorProto.BFLOAT16, [2])], [info("y", onnx.TensorProto.BFLOAT16, [2])])
    with pytest.raises(ConversionError) as err:
        convert(model)
    d = err.value.diagnostics[0]
    assert d.code == "E-INPUT-TYPE" and "element type BFLOAT16, which TOSA has no tensors for" in d.message
    assert d.notes == (limit_note("input-type"),) and matching_limit("Abs", err.value) == "input-type"
    every = {lim["key"]: lim for lim in onnx_limits()}
    assert "BFLOAT16" in every["input-type"]["values"] and "FLOAT" not in every["input-type"]["values"]


def test_an_empty_slice_is_refused_from_a_limit_of_every_op():
    model = one_node("Slice", [info("x", F32, [4])], [info("y", F32, None)],
                     [const("starts", np.array([9], np.int64)), const("ends", np.array([10], np.int64))])
    with pytest.raises(ConversionError) as err:
        convert(model)
    d = err.value.diagnostics[0]
    assert "the slice is empty on axis 0: output with a dim of size 0 (an empty tensor) is not supported" in d.message
    assert d.notes == (limit_note("empty-result"),)


def test_a_limit_error_says_what_why_and_what_to_do():
    limit = Limit("k", LimitKind.ATTRIBUTE, "mode", ("'x'", "'y'"), "no TOSA op does it", "use mode 'z'")
    e = limit.refuse("Op 'n' has mode 'x'")
    assert isinstance(e, LimitError) and e.limit is limit
    assert str(e) == "Op 'n' has mode 'x': attribute mode = 'x' or 'y' is not supported: no TOSA op does it; use mode 'z'"


def test_a_limit_key_cannot_be_published_twice_for_one_op():
    with pytest.raises(ValueError, match="publishes limit 'axes-from-data' twice"):
        publish("ReduceSum", published_limits("ReduceSum")[0])
