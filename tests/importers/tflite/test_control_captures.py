"""TFLite IF/WHILE subgraphs that read a tensor of an enclosing subgraph (issue 11, class 5).

onnx-tf turns an ONNX If branch that reads an enclosing value into a TFLite
branch subgraph holding a tensor of the same name (``.../Squeeze``) that it
neither receives nor computes. tosaconv resolves it as the enclosing tensor
of that name: inline for an IF decided at import, a trailing COND_IF operand,
or an extra WHILE_LOOP value the body passes on, through two levels of
nesting too. LiteRT itself cannot run such a branch (it reports that the
input tensor lacks data; the first test pins that down), so the truth here is
numpy, computed from the model's definition: the symbolic program, the
specialized and emitted ``.tosa`` read back, and the official reference model
running it must all equal it exactly (int32 data), for dynamic dims at two
sizes. A tensor no enclosing subgraph computes is refused with a message
naming the subgraph and the tensor.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.onnx.harness import compare_both_paths, specialize_and_emit
from tests.importers.tflite.harness import ModelBuilder, check_reference_model, convert, run_graph, run_litert
from tosaconv.diagnostics import TosaconvError
from tosaconv.ir.ops import Op

I32 = "INT32"
ROW = 3


def _squeezed(m, signature=True):
    """x [N, 1, 3] -> 'enc/Squeeze' [N, 3] in the main subgraph (N dynamic when ``signature``)."""
    x = m.input("x", [2, 1, ROW], I32, [-1, 1, ROW] if signature else None)
    sq = m.tensor("enc/Squeeze", [2, ROW], I32, [-1, ROW] if signature else None)
    m.op("SQUEEZE", [x], [sq], "SqueezeOptions", SqueezeDims=[1])
    return sq


def _reader(m, name: str, op: str, options: str, captured: str = "enc/Squeeze"):
    """A branch ``out = op(a, <captured>)``: ``captured`` is read without being an input."""
    sub = m.subgraph(name)
    a = sub.input("a", [2, ROW], I32, [-1, ROW])
    cap = sub.tensor(captured, [2, ROW], I32, [-1, ROW])
    out = sub.tensor("out", [2, ROW], I32, [-1, ROW])
    sub.op(op, [a, cap], [out], options)
    sub.output(out)
    return sub


def _plain(m, name: str):
    """A branch ``out = a * a`` that captures nothing."""
    sub = m.subgraph(name)
    a = sub.input("a", [2, ROW], I32, [-1, ROW])
    out = sub.tensor("out", [2, ROW], I32, [-1, ROW])
    sub.op("MUL", [a, a], [out], "MulOptions")
    sub.output(out)
    return sub


def if_capture_model(const_cond=None, captured: str = "enc/Squeeze") -> bytes:
    """y = IF(c, then: b + enc/Squeeze, else: b * b) with b = enc/Squeeze + bias (bias [3] an input)."""
    m = ModelBuilder()
    c = m.input("c", [], "BOOL") if const_cond is None else m.const("c", np.array(const_cond))
    sq = _squeezed(m)
    bias, b = m.input("bias", [ROW], I32), m.tensor("b", [2, ROW], I32, [-1, ROW])
    m.op("ADD", [sq, bias], [b], "AddOptions")
    y = m.tensor("y", [2, ROW], I32, [-1, ROW])
    then, other = _reader(m, "then", "ADD", "AddOptions", captured), _plain(m, "else")
    m.op("IF", [c, b], [y], "IfOptions", ThenSubgraphIndex=then.index, ElseSubgraphIndex=other.index)
    m.output(y)
    return m.finish()


def _cond(m):
    cond = m.subgraph("cond")
    ci, cn = cond.input("ci", [], I32), cond.input("cn", [], I32)
    cond.input("cv", [2, ROW], I32, [-1, ROW])
    less = cond.tensor("less", [], "BOOL")
    cond.op("LESS", [ci, cn], [less])
    cond.output(less)
    return cond


def while_capture_model(nested: bool = False) -> bytes:
    """while i < n: i += 1; v = v + enc/Squeeze, or (``nested``) v = IF(i odd, v + enc/Squeeze, v * v),
    where the IF branch reads the main subgraph's tensor through the body."""
    m = ModelBuilder()
    sq = _squeezed(m)
    i, n = m.input("i", [], I32), m.input("n", [], I32)
    bias, v = m.input("bias", [ROW], I32), m.tensor("v", [2, ROW], I32, [-1, ROW])
    m.op("ADD", [sq, bias], [v], "AddOptions")   # v starts as enc/Squeeze + bias
    outs = [m.tensor("i_out", [], I32), m.tensor("n_out", [], I32), m.tensor("v_out", [2, ROW], I32, [-1, ROW])]
    cond = _cond(m)
    then, other = (_reader(m, "then", "ADD", "AddOptions"), _plain(m, "else")) if nested else (None, None)
    body = m.subgraph("body")
    bi, bn = body.input("bi", [], I32), body.input("bn", [], I32)
    bv = body.input("bv", [2, ROW], I32, [-1, ROW])
    i1, v1 = body.tensor("i1", [], I32), body.tensor("v1", [2, ROW], I32, [-1, ROW])
    body.op("ADD", [bi, body.const("one", np.array(1, np.int32))], [i1], "AddOptions")
    if nested:
        r, odd = body.tensor("r", [], I32), body.tensor("odd", [], "BOOL")
        body.op("FLOOR_MOD", [i1, body.const("two", np.array(2, np.int32))], [r])
        body.op("EQUAL", [r, body.const("one_", np.array(1, np.int32))], [odd])
        body.op("IF", [odd, bv], [v1], "IfOptions", ThenSubgraphIndex=then.index, ElseSubgraphIndex=other.index)
    else:
        cap = body.tensor("enc/Squeeze", [2, ROW], I32, [-1, ROW])
        body.op("ADD", [bv, cap], [v1], "AddOptions")
    body.output(i1, bn, v1)
    m.op("WHILE", [i, n, v], outs, "WhileOptions", CondSubgraphIndex=cond.index, BodySubgraphIndex=body.index)
    m.output(*outs)
    return m.finish()


def _ints(shape, seed, low=-9, high=9):
    return np.random.default_rng(seed).integers(low, high, shape).astype(np.int32)


def _check(data: bytes, feeds: dict, want: list, workdir):
    """Symbolic, emitted-and-read-back and official reference model runs all equal ``want`` exactly."""
    graph = convert(data)
    compare_both_paths(graph, feeds, want, 0.0, 0.0)
    static, tosa = specialize_and_emit(graph, {k: np.shape(v) for k, v in feeds.items()})
    check_reference_model(tosa, static, feeds, run_graph(static, feeds), workdir)
    return graph


def test_litert_cannot_run_a_branch_that_reads_an_enclosing_tensor():
    feeds = {"c": np.array(True), "x": _ints((2, 1, ROW), 1), "bias": _ints((ROW,), 2)}
    with pytest.raises(RuntimeError, match="lacks data"):
        run_litert(if_capture_model(), feeds)


@pytest.mark.parametrize("n", [1, 4])
@pytest.mark.parametrize("c", [True, False])
def test_if_on_data_passes_the_enclosing_tensor_to_cond_if(c, n, tmp_path):
    x, bias = _ints((n, 1, ROW), n), _ints((ROW,), n + 7)
    b = x[:, 0, :] + bias
    want = b + x[:, 0, :] if c else b * b
    graph = _check(if_capture_model(), {"c": np.array(c), "x": x, "bias": bias}, [want], tmp_path)
    cond_if = next(op for op in graph.ops if op.op is Op.COND_IF)
    assert len(cond_if.operands) == 3                    # condition, b, and the captured enc/Squeeze


@pytest.mark.parametrize("c", [True, False])
def test_if_decided_at_import_reads_the_enclosing_tensor_inline(c, tmp_path):
    x, bias = _ints((3, 1, ROW), 5), _ints((ROW,), 6)
    b = x[:, 0, :] + bias
    graph = _check(if_capture_model(const_cond=c), {"x": x, "bias": bias}, [b + x[:, 0, :] if c else b * b],
                   tmp_path)
    assert not any(op.op is Op.COND_IF for op in graph.ops)


@pytest.mark.parametrize("nested", [False, True])
def test_while_body_reads_the_enclosing_tensor(nested, tmp_path):
    for rows, count in ((1, 3), (4, 5)):
        x, bias = _ints((rows, 1, ROW), rows, -3, 3), _ints((ROW,), rows + 1, -3, 3)
        want_v = x[:, 0, :] + bias
        for step in range(1, count + 1):
            want_v = (want_v + x[:, 0, :]) if (not nested or step % 2) else want_v * want_v
        feeds = {"x": x, "i": np.array(0, np.int32), "n": np.array(count, np.int32), "bias": bias}
        want = [np.array(count, np.int32), np.array(count, np.int32), want_v]
        _check(while_capture_model(nested), feeds, want, tmp_path / f"{nested}{rows}")


def test_a_tensor_no_enclosing_subgraph_computes_is_refused_by_name():
    with pytest.raises(TosaconvError, match="subgraph 'then' .*reads tensor 'nowhere/Squeeze', which it neither "
                                            "receives as an input, computes, nor holds as a constant"):
        convert(if_capture_model(captured="nowhere/Squeeze"))
