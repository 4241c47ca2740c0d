"""ONNX Einsum against onnxruntime on symbolic dims fed at two sizes:
transposes, reductions, outer products, matmuls, batched matmuls, implicit
outputs, ellipses, three operands and integer operands (MUL + REDUCE_SUM
instead of MATMUL). Equations with a repeated index within one operand
(diagonals) and malformed equations are refused with a clear message.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.diagnostics import ConversionError

from .harness import F32, I32, check_with_onnxruntime, convert, info, one_node, rand

# equation, symbolic dims of each operand, sizes of the symbols at two bindings
CASES = [
    ("ij->ji", [["N", 3]], ({"N": 2}, {"N": 5})),
    ("ij->i", [["N", "M"]], ({"N": 2, "M": 3}, {"N": 1, "M": 4})),
    ("ijk->", [["N", 2, "M"]], ({"N": 2, "M": 3}, {"N": 3, "M": 1})),
    ("i,j->ij", [["N"], ["M"]], ({"N": 2, "M": 3}, {"N": 4, "M": 1})),
    ("i,i", [["N"], ["N"]], ({"N": 2}, {"N": 6})),
    ("ij,jk->ik", [["N", 4], [4, "M"]], ({"N": 2, "M": 3}, {"N": 5, "M": 1})),
    ("ij,jk", [["N", "K"], ["K", 3]], ({"N": 2, "K": 3}, {"N": 1, "K": 5})),
    ("bij,bjk->bik", [["B", "N", 4], ["B", 4, 3]], ({"B": 2, "N": 3}, {"B": 1, "N": 2})),
    ("bij,bjk->bki", [["B", 2, "K"], ["B", "K", 3]], ({"B": 3, "K": 4}, {"B": 2, "K": 1})),
    ("...ij,...jk->...ik", [["B", 2, 3, 4], ["B", 2, 4, "M"]], ({"B": 2, "M": 3}, {"B": 1, "M": 2})),
    ("...ij,jk->...ik", [["B", 2, 3, 4], [4, "M"]], ({"B": 2, "M": 3}, {"B": 1, "M": 2})),
    ("ij,jk,kl->il", [["N", 3], [3, 4], [4, "M"]], ({"N": 2, "M": 3}, {"N": 3, "M": 1})),
    ("ijk,jl->il", [["N", 3, "K"], [3, 2]], ({"N": 2, "K": 4}, {"N": 1, "K": 2})),
    ("bhqd,bhkd->bhqk", [["B", 2, "Q", 4], ["B", 2, "Q", 4]], ({"B": 1, "Q": 3}, {"B": 2, "Q": 5})),
]


def _feeds(dims_list, sizes, dtype, seed):
    out = {}
    for n, dims in enumerate(dims_list):
        shape = tuple(sizes[d] if isinstance(d, str) else d for d in dims)
        x = rand(*shape, seed=seed + n) if dtype == np.float32 else \
            np.random.default_rng(seed + n).integers(-5, 5, shape)
        out[f"x{n}"] = x.astype(dtype)
    return out


@pytest.mark.parametrize("equation,dims,bindings", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("elem,dtype", [(F32, np.float32), (I32, np.int32)], ids=["f32", "i32"])
def test_einsum(equation, dims, bindings, elem, dtype):
    inputs = [info(f"x{n}", elem, d) for n, d in enumerate(dims)]
    model = one_node("Einsum", inputs, [info("y", elem, None)], opset=12, equation=equation)
    check_with_onnxruntime(model, [_feeds(dims, b, dtype, i) for i, b in enumerate(bindings)])


def test_float_contraction_is_one_matmul():
    model = one_node("Einsum", [info("a", F32, ["B", "N", 4]), info("b", F32, ["B", 4, 3])], [info("y", F32, None)],
                     opset=12, equation="bij,bjk->bik")
    assert convert(model).histogram().get("MATMUL") == 1


@pytest.mark.parametrize("equation,message", [
    ("ii->i", "operand 0 repeats index 'i': attribute equation = an index repeated within one operand or the "
              "output \\(a diagonal"),
    ("bii,bj->bj", "operand 0 repeats index 'i'"),
    ("ij->ii", "output repeats index 'i'"),
    ("ij->k", "each output index must appear once and in some operand"),
    ("i1->i", "is not a valid subscript list"),
])
def test_unsupported_equations_are_refused(equation, message):
    ranks = [len(p.replace("...", "")) for p in equation.split("->")[0].split(",")]
    inputs = [info(f"x{n}", F32, [3] * r) for n, r in enumerate(ranks)]
    model = one_node("Einsum", inputs, [info("y", F32, None)], opset=12, equation=equation)
    with pytest.raises(ConversionError, match=message):
        convert(model)
