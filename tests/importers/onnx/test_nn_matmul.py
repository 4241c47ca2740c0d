"""ONNX MatMul and Gemm against onnxruntime: numpy batching (1-D operands,
broadcast batch dims on either side, a 2-D weight folded into rows) and Gemm's
transA, transB, alpha, beta and C (absent, scalar, vector, matrix, constant or
not), on symbolic dims run at two shapes. Also the IR (rank-3 MATMUL, the
ledger entries for inner and batch dims) and the errors for what TOSA MATMUL
cannot take.
"""
from __future__ import annotations

import pytest
from onnx import helper

from tosaconv.diagnostics import ConversionError, ShapeError
from tosaconv.ir.ops import Op
from tosaconv.ir.verifier import check

from .harness import F32, I32, check_with_onnxruntime, const, convert, info, make_model, rand

MATMUL = [
    # (A dims, B dims, A shapes, B shapes)
    (["B", "S", 8], ["B", 8, "T"], [(2, 3, 8), (1, 5, 8)], [(2, 8, 4), (1, 8, 2)]),
    (["B", 1, "S", 8], ["H", 8, "T"], [(2, 1, 3, 8), (1, 1, 5, 8)], [(4, 8, 4), (3, 8, 2)]),
    (["B", "H", "S", "D"], ["B", "H", "D", "S"], [(2, 3, 4, 5), (1, 2, 3, 4)], [(2, 3, 5, 4), (1, 2, 4, 3)]),
    (["M", 8], ["B", 8, "T"], [(3, 8), (5, 8)], [(2, 8, 4), (1, 8, 2)]),
    (["B", "S", 8], [1, 8, "T"], [(2, 3, 8), (3, 5, 8)], [(1, 8, 4), (1, 8, 2)]),
    ([8], ["B", 8, "T"], [(8,), (8,)], [(2, 8, 4), (1, 8, 2)]),
    (["B", "S", 8], [8], [(2, 3, 8), (1, 5, 8)], [(8,), (8,)]),
    ([8], [8], [(8,), (8,)], [(8,), (8,)]),
    (["M", "K"], ["K", "N"], [(3, 4), (5, 2)], [(4, 6), (2, 1)]),
]


def _matmul(a_dims, b_dims, b_const=None, opset=17):
    inputs, inits = [info("a", F32, a_dims)], []
    if b_const is None:
        inputs.append(info("b", F32, b_dims))
    else:
        inits.append(const("b", b_const))
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    return make_model([node], inputs, [info("y", F32, None)], inits, opset)


@pytest.mark.parametrize("a_dims,b_dims,a_shapes,b_shapes", MATMUL, ids=lambda v: str(v))
@pytest.mark.parametrize("opset", [11, 13, 21])
def test_matmul(a_dims, b_dims, a_shapes, b_shapes, opset):
    feeds = [{"a": rand(*sa, seed=1), "b": rand(*sb, seed=2)} for sa, sb in zip(a_shapes, b_shapes)]
    check(check_with_onnxruntime(_matmul(a_dims, b_dims, opset=opset), feeds))


@pytest.mark.parametrize("a_dims,shapes", [(["B", "S", 8], [(2, 3, 8), (1, 5, 8)]), ([8], [(8,), (8,)]),
                                           (["B", 2, "S", 8], [(2, 2, 3, 8), (1, 2, 5, 8)])], ids=str)
def test_matmul_by_a_weight_folds_the_batch_into_rows(a_dims, shapes):
    graph = check_with_onnxruntime(_matmul(a_dims, None, rand(8, 6, seed=9)),
                                   [{"a": rand(*s, seed=i)} for i, s in enumerate(shapes)])
    mm = next(o for o in graph.ops if o.op is Op.MATMUL)
    assert mm.operands[0].type.shape[0] == 1 and mm.operands[1].type.shape == (1, 8, 6)


def test_matmul_records_inner_and_batch_dims_in_the_ledger():
    graph = convert(_matmul(["B", "S", "K"], ["C", "J", "T"]))
    texts = {c.text() for c in graph.ledger.entries}
    assert {"B == C", "K == J"} <= texts
    reasons = {c.provenance.reason for c in graph.ledger.entries}
    assert "MatMul inner dims" in reasons


def test_matmul_inner_dims_that_never_match_are_a_shape_error():
    with pytest.raises(ShapeError, match="MatMul inner dims"):
        convert(_matmul(["S", 8], [6, "T"]))


def test_integer_matmul_is_refused():
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    model = make_model([node], [info("a", I32, [2, 3]), info("b", I32, [3, 2])], [info("y", I32, None)])
    with pytest.raises(ConversionError, match="TOSA MATMUL takes"):
        convert(model)


# -- Gemm ----------------------------------------------------------------------------------

def _gemm(c_shape, consts=(), c_dims=None, opset=13, **attrs):
    """Gemm with A [M, 4] (or [4, M]), B [4, 5] (or [5, 4]), and C of ``c_shape`` (None = absent)."""
    a_dims = [4, "M"] if attrs.get("transA") else ["M", 4]
    b_shape = (5, 4) if attrs.get("transB") else (4, 5)
    spec = {"a": (a_dims, None), "b": (list(b_shape), b_shape)}
    if c_shape is not None:
        spec["c"] = (c_dims or list(c_shape), c_shape)
    inputs = [info(n, F32, d) for n, (d, _) in spec.items() if n not in consts]
    inits = [const(n, rand(*s, seed=ord(n))) for n, (_, s) in spec.items() if n in consts]
    node = helper.make_node("Gemm", list(spec), ["y"], name="gemm", **attrs)
    return make_model([node], inputs, [info("y", F32, None)], inits, opset)


def _gemm_feeds(model, ms=(3, 6)):
    feeds = []
    for m in ms:
        shapes = {vi.name: [m if d.dim_param else d.dim_value for d in vi.type.tensor_type.shape.dim]
                  for vi in model.graph.input}
        feeds.append({n: rand(*s, seed=ord(n)) for n, s in shapes.items()})
    return feeds


GEMM = [
    dict(),
    dict(transA=1),
    dict(transB=1),
    dict(transA=1, transB=1, alpha=0.25, beta=3.0),
    dict(alpha=2.0),
    dict(beta=0.5),
]


C_SHAPES = [None, (), (5,), (1, 5), (1, 1), (3, 1)]


@pytest.mark.parametrize("attrs", GEMM, ids=str)
@pytest.mark.parametrize("c_shape", C_SHAPES, ids=str)
@pytest.mark.parametrize("consts", [(), ("b", "c")], ids=str)
def test_gemm(attrs, c_shape, consts):
    model = _gemm(c_shape, consts, **attrs)
    ms = (3,) if c_shape == (3, 1) else (3, 6)     # C [3, 1] broadcasts over N but fixes M
    check(check_with_onnxruntime(model, _gemm_feeds(model, ms)))


@pytest.mark.parametrize("attrs", GEMM, ids=str)
@pytest.mark.parametrize("opset", [11, 13, 21])
def test_gemm_with_a_full_symbolic_bias(attrs, opset):
    model = _gemm((3, 5), c_dims=["M", 5], opset=opset, **attrs)
    check(check_with_onnxruntime(model, _gemm_feeds(model)))


def test_gemm_folds_alpha_and_beta_into_constants():
    graph = convert(_gemm((5,), ("b", "c"), alpha=0.5, beta=2.0, transB=1))
    assert "MUL" not in graph.histogram() and "TRANSPOSE" not in graph.histogram()
    mm = next(o for o in graph.ops if o.op is Op.MATMUL)
    assert mm.operands[1].type.shape == (1, 4, 5)
