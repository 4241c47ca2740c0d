"""TFLite IF and WHILE: COND_IF and WHILE_LOOP over the converted subgraphs.

Models are built with ModelBuilder's subgraphs and compared with LiteRT's
reference kernels: float ones through the symbolic program and the emitted
``.tosa`` read back, integer ones also through the official reference model
running the emitted ``.tosa`` (``check_exact_with_litert``), at every
condition value and, for dynamic inputs, at two sizes.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.onnx.harness import specialize_and_emit
from tests.importers.tflite.harness import ModelBuilder, check_exact_with_litert, check_with_litert, convert
from tosaconv.diagnostics import TosaconvError
from tosaconv.ir.ops import Op

Q = ([0.1], [-4], 0)


def _branch(m, name: str, op: str, options: str, shape, dtype="FLOAT32", signature=None, quant=None):
    """A subgraph computing ``op(a, b)`` of its two inputs."""
    sub = m.subgraph(name)
    a, b = sub.input("a", shape, dtype, signature, quant), sub.input("b", shape, dtype, signature, quant)
    out = sub.tensor("out", shape, dtype, signature, quant)
    sub.op(op, [a, b], [out], options)
    sub.output(out)
    return sub


def if_model(shape, dtype="FLOAT32", signature=None, const_cond=None) -> bytes:
    m = ModelBuilder()
    c = m.input("c", [], "BOOL") if const_cond is None else m.const("c", np.array(const_cond))
    a, b = m.input("a", shape, dtype, signature), m.input("b", shape, dtype, signature)
    y = m.tensor("y", shape, dtype, signature)
    then = _branch(m, "then", "ADD", "AddOptions", shape, dtype, signature)
    other = _branch(m, "else", "SUB", "SubOptions", shape, dtype, signature)
    m.op("IF", [c, a, b], [y], "IfOptions", ThenSubgraphIndex=then.index, ElseSubgraphIndex=other.index)
    m.output(y)
    return m.finish()


def while_model(shape, dtype="FLOAT32", signature=None) -> bytes:
    """while i < n: i += 1; x = x * 2 + b (i, n int32 scalars; b of shape [1, C] broadcasts)."""
    m = ModelBuilder()
    row = [1, shape[1]]
    i, n = m.input("i", [], "INT32"), m.input("n", [], "INT32")
    x, b = m.input("x", shape, dtype, signature), m.input("b", row, dtype)
    outs = [m.tensor(f"{k}_out", s, t, sig) for k, s, t, sig in
            (("i", [], "INT32", None), ("n", [], "INT32", None), ("x", shape, dtype, signature),
             ("b", row, dtype, None))]
    cond = m.subgraph("cond")
    ci, cn = cond.input("ci", [], "INT32"), cond.input("cn", [], "INT32")
    cond.input("cx", shape, dtype, signature), cond.input("cb", row, dtype)
    less = cond.tensor("less", [], "BOOL")
    cond.op("LESS", [ci, cn], [less])
    cond.output(less)
    body = m.subgraph("body")
    bi, bn = body.input("bi", [], "INT32"), body.input("bn", [], "INT32")
    bx, bb = body.input("bx", shape, dtype, signature), body.input("bb", row, dtype)
    i1, x2, x3 = body.tensor("i1", [], "INT32"), body.tensor("x2", shape, dtype, signature), \
        body.tensor("x3", shape, dtype, signature)
    body.op("ADD", [bi, body.const("one", np.array(1, np.int32))], [i1], "AddOptions")
    body.op("ADD", [bx, bx], [x2], "AddOptions")
    body.op("ADD", [x2, bb], [x3], "AddOptions")
    body.output(i1, bn, x3, bb)
    m.op("WHILE", [i, n, x, b], outs, "WhileOptions", CondSubgraphIndex=cond.index, BodySubgraphIndex=body.index)
    m.output(*outs[:3])
    return m.finish()


def nested_model() -> bytes:
    """while i < n: i += 1; x = IF(i is odd, x + b, x - b): an IF inside the WHILE body."""
    m = ModelBuilder()
    sh, i32 = [2, 2], "INT32"
    ins = [m.input(k, s, i32) for k, s in (("i", []), ("n", []), ("x", sh), ("b", sh))]
    outs = [m.tensor(f"{k}_out", s, i32) for k, s in (("i", []), ("n", []), ("x", sh), ("b", sh))]
    cond = m.subgraph("cond")
    ci, cn = cond.input("ci", [], i32), cond.input("cn", [], i32)
    cond.input("cx", sh, i32), cond.input("cb", sh, i32)
    less = cond.tensor("less", [], "BOOL")
    cond.op("LESS", [ci, cn], [less])
    cond.output(less)
    then, other = _branch(m, "then", "ADD", "AddOptions", sh, i32), _branch(m, "else", "SUB", "SubOptions", sh, i32)
    body = m.subgraph("body")
    bi, bn, bx, bb = (body.input(k, s, i32) for k, s in (("bi", []), ("bn", []), ("bx", sh), ("bb", sh)))
    i1, r, odd = body.tensor("i1", [], i32), body.tensor("r", [], i32), body.tensor("odd", [], "BOOL")
    x2 = body.tensor("x2", sh, i32)
    body.op("ADD", [bi, body.const("one", np.array(1, np.int32))], [i1], "AddOptions")
    body.op("FLOOR_MOD", [i1, body.const("two", np.array(2, np.int32))], [r])
    body.op("EQUAL", [r, body.const("one_", np.array(1, np.int32))], [odd])
    body.op("IF", [odd, bx, bb], [x2], "IfOptions", ThenSubgraphIndex=then.index, ElseSubgraphIndex=other.index)
    body.output(i1, bn, x2, bb)
    m.op("WHILE", ins, outs, "WhileOptions", CondSubgraphIndex=cond.index, BodySubgraphIndex=body.index)
    m.output(*outs[:3])
    return m.finish()


def _ints(shape, seed, low=-1000, high=1000):
    return np.random.default_rng(seed).integers(low, high, shape).astype(np.int32)


def _floats(shape, seed):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float32)


def test_if_on_data_becomes_cond_if_and_matches_litert_bit_exactly(tmp_path):
    data = if_model([2, 3], "INT32")
    feeds = [{"c": np.array(c), "a": _ints((2, 3), 1), "b": _ints((2, 3), 2)} for c in (True, False)]
    graph = check_exact_with_litert(data, feeds, tmp_path)
    assert [op.op for op in graph.ops].count(Op.COND_IF) == 1


def test_if_with_dynamic_dims_at_two_sizes():
    data = if_model([1, 4], signature=[-1, 4])
    feeds = [{"c": np.array(c), "a": _floats((n, 4), n), "b": _floats((n, 4), n + 9)}
             for c in (True, False) for n in (1, 5)]
    check_with_litert(data, feeds)


@pytest.mark.parametrize("cond", [True, False])
def test_if_on_a_constant_is_decided_at_import(cond):
    data = if_model([3], const_cond=cond)
    graph = check_with_litert(data, [{"a": _floats((3,), 3), "b": _floats((3,), 4)}])
    ops = [op.op for op in graph.ops]
    assert Op.COND_IF not in ops and (Op.ADD if cond else Op.SUB) in ops


def test_if_on_a_shape_is_decided_when_the_graph_is_specialized():
    """c = SHAPE(a)[0] > 2 with a dynamic batch: a COND_IF that becomes the taken branch once bound."""
    m = ModelBuilder()
    a, b = m.input("a", [1, 3], signature=[-1, 3]), m.input("b", [1, 3], signature=[-1, 3])
    shp, d0, c = m.tensor("shp", [2], "INT32"), m.tensor("d0", [1], "INT32"), m.tensor("c", [1], "BOOL")
    y = m.tensor("y", [1, 3], signature=[-1, 3])
    m.op("SHAPE", [a], [shp], "ShapeOptions", OutType=2)
    ends = [m.const(f"s{k}", np.array([k], np.int32)) for k in (0, 1)]
    m.op("STRIDED_SLICE", [shp, ends[0], ends[1], ends[1]], [d0], "StridedSliceOptions")
    m.op("GREATER", [d0, m.const("two", np.array([2], np.int32))], [c])
    then = _branch(m, "then", "ADD", "AddOptions", [1, 3], signature=[-1, 3])
    other = _branch(m, "else", "SUB", "SubOptions", [1, 3], signature=[-1, 3])
    m.op("IF", [c, a, b], [y], "IfOptions", ThenSubgraphIndex=then.index, ElseSubgraphIndex=other.index)
    m.output(y)
    feeds = [{"a": _floats((n, 3), n), "b": _floats((n, 3), n + 1)} for n in (1, 4)]
    graph = check_with_litert(m.finish(), feeds)
    assert Op.COND_IF in [op.op for op in graph.ops]
    for n, kept in ((1, Op.SUB), (4, Op.ADD)):
        static, _ = specialize_and_emit(graph, {"a": (n, 3), "b": (n, 3)})
        assert [op.op for op in static.ops] == [kept]


def test_while_becomes_while_loop_and_matches_litert_bit_exactly(tmp_path):
    data = while_model([2, 2], "INT32")
    feeds = [{"i": np.array(0, np.int32), "n": np.array(n, np.int32), "x": _ints((2, 2), n),
              "b": _ints((1, 2), n + 1)} for n in (0, 1, 6)]
    graph = check_exact_with_litert(data, feeds, tmp_path)
    assert [op.op for op in graph.ops].count(Op.WHILE_LOOP) == 1


def test_while_with_dynamic_dims_at_two_sizes():
    data = while_model([1, 3], signature=[-1, 3])
    feeds = [{"i": np.array(0, np.int32), "n": np.array(3, np.int32), "x": _floats((k, 3), k),
              "b": _floats((1, 3), k + 1)} for k in (1, 4)]
    check_with_litert(data, feeds)


def test_if_nested_in_a_while_body(tmp_path):
    feeds = [{"i": np.array(0, np.int32), "n": np.array(k, np.int32), "x": _ints((2, 2), k),
              "b": _ints((2, 2), k + 5)} for k in (0, 3, 4)]
    graph = check_exact_with_litert(nested_model(), feeds, tmp_path)
    (loop,) = graph.ops
    assert [op.op for op in loop.attrs.body_graph.ops].count(Op.COND_IF) == 1


def test_int8_operands_pass_through_if(tmp_path):
    """IF is encoding-agnostic: quantized operands reach branches that compute on them (here a RESHAPE)."""
    m = ModelBuilder()
    c, x, y = m.input("c", [], "BOOL"), m.input("x", [2, 2], "INT8", quant=Q), m.tensor("y", [4], "INT8", quant=Q)
    subs = []
    for name in ("then", "else"):
        sub = m.subgraph(name)
        sx, so = sub.input("sx", [2, 2], "INT8", quant=Q), sub.tensor("so", [4], "INT8", quant=Q)
        sub.op("RESHAPE", [sx, sub.const("shape", np.array([4], np.int32))], [so])
        sub.output(so)
        subs.append(sub)
    m.op("IF", [c, x], [y], "IfOptions", ThenSubgraphIndex=subs[0].index, ElseSubgraphIndex=subs[1].index)
    m.output(y)
    x = np.array([[-128, 127], [-4, 9]], np.int8)
    check_exact_with_litert(m.finish(), [{"c": np.array(True), "x": x}, {"c": np.array(False), "x": x}], tmp_path)


def refused(data: bytes, *words) -> TosaconvError:
    """Converting ``data`` fails with a tosaconv error whose text holds every one of ``words``."""
    with pytest.raises(TosaconvError) as e:
        convert(data)
    for w in words:
        assert w in str(e.value), str(e.value)
    return e.value


def same_branch_if(fill) -> bytes:
    """IF(c, x) whose then and else are one subgraph ``fill(sub, tx)`` fills and returns the output of."""
    m = ModelBuilder()
    c, x, y = m.input("c", [], "BOOL"), m.input("x", [2]), m.tensor("y", [2])
    then = m.subgraph("then")
    then.output(fill(then, then.input("tx", [2])))
    m.op("IF", [c, x], [y], "IfOptions", ThenSubgraphIndex=then.index, ElseSubgraphIndex=then.index)
    m.output(y)
    return m.finish()


def test_while_whose_body_grows_a_tensor_is_refused():
    m = ModelBuilder()
    x, y = m.input("x", [2]), m.tensor("y", [2])
    cond = m.subgraph("cond")
    cond.input("cx", [2])
    cb = cond.tensor("cb", [], "BOOL")
    cond.op("LESS", [cond.const("z", np.array(0.0, np.float32)),
                     cond.const("o", np.array(1.0, np.float32))], [cb])
    cond.output(cb)
    body = m.subgraph("body")
    bx, bo = body.input("bx", [2]), body.tensor("bo", [4])
    body.op("CONCATENATION", [bx, bx], [bo], "ConcatenationOptions", Axis=0)
    body.output(bo)
    m.op("WHILE", [x], [y], "WhileOptions", CondSubgraphIndex=cond.index, BodySubgraphIndex=body.index)
    m.output(y)
    refused(m.finish(), "changes loop value", "data-dependent shapes")


def test_if_whose_branches_return_different_shapes_is_refused():
    m = ModelBuilder()
    c, x, y = m.input("c", [], "BOOL"), m.input("x", [2]), m.tensor("y", [2])
    then = m.subgraph("then")
    tx = then.input("tx", [2])
    then.output(tx)
    other = m.subgraph("else")
    ex, eo = other.input("ex", [2]), other.tensor("eo", [4])
    other.op("CONCATENATION", [ex, ex], [eo], "ConcatenationOptions", Axis=0)
    other.output(eo)
    m.op("IF", [c, x], [y], "IfOptions", ThenSubgraphIndex=then.index, ElseSubgraphIndex=other.index)
    m.output(y)
    refused(m.finish(), "TOSA COND_IF needs both branches to return the same type")


def test_unsupported_ops_inside_subgraphs_are_listed():
    def fill(sub, tx):
        to = sub.tensor("to", [2])
        sub.custom_op("MyCustomThing", [tx], [to])
        return to
    (diag,) = refused(same_branch_if(fill), "MyCustomThing").diagnostics
    assert diag.location.name == "to"


def test_a_subgraph_index_out_of_range_is_a_clear_error():
    m = ModelBuilder()
    c, x, y = m.input("c", [], "BOOL"), m.input("x", [2]), m.tensor("y", [2])
    m.op("IF", [c, x], [y], "IfOptions", ThenSubgraphIndex=7, ElseSubgraphIndex=7)
    m.output(y)
    refused(m.finish(), "calls subgraph 7")
