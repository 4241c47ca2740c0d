"""The answers shared between structurally equal ops, and the memos kept between checks, never go stale.

The verifier shares one verdict among ops with equal structural keys, keeps a
memo of ops that passed between the verify calls of a pipeline, the builder
reuses a shape rule's answer, and the ONNX registry remembers what it resolved.
Each test breaks or changes something after an answer was remembered and checks
that the change is still seen; the expected verdicts come from the rules
themselves (a fresh graph, a fresh rule call), never from a cached run.
"""
from __future__ import annotations

import numpy as np

from tosaconv.importers.onnx import registry
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op
from tosaconv.ir.structural import attrs_key
from tosaconv.ir.types import TensorType
from tosaconv.ir.verifier import verify
from tosaconv.symbolic.expr import sym
from tosaconv.symbolic.scope import SymbolInfo

from .graphs import F32, I8, I32, at, tensor


def _chain(n: int) -> Graph:
    """x:[s,4] -> n ADDs of a [1,4] constant, all structurally equal."""
    g = Graph()
    s = g.scope.declare(SymbolInfo("s", "input 'x' axis 0", input_name="x", axis=0))
    x = g.add_input("x", tensor(F32, s, 4))
    b = Builder(g, at("Add", "n"))
    c = b.const(np.ones((1, 4), np.float32), name="c")
    for _ in range(n):
        x = b.emit(Op.ADD, x, c)
    g.set_outputs([x], ["y"])
    return g


def test_a_wrong_op_among_equal_ones_is_still_reported():
    g = _chain(40)
    assert verify(g) == []
    wrong = g.ops[25].results[0]
    wrong.type = tensor(F32, 3, 4)          # the shape rule gives [s,4]
    problems = verify(g)
    assert len(problems) >= 1 and all("op 25 ADD" in p or "op 26 ADD" in p for p in problems)
    assert any("result 0 has type" in p and "op 25 ADD" in p for p in problems)


def test_attribute_values_with_different_types_do_not_share_a_verdict():
    """TRANSPOSE's ERROR_IF rule takes ints for perms, not bools: (True, False) must be reported even after
    (1, 0), which a plain value comparison (1 == True) would take for the same attributes."""
    g = Graph()
    x = g.add_input("x", tensor(F32, 2, 4))
    b = Builder(g, at("Transpose", "t"))
    good = b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs((1, 0)))
    bad = b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs((True, False)), result_type=tensor(F32, 4, 2))
    g.set_outputs([good, bad], ["good", "bad"])
    problems = verify(g)
    assert len(problems) == 1 and "op 1 TRANSPOSE" in problems[0] and "perms (True, False)" in problems[0]


def test_attrs_keys_are_exact():
    assert attrs_key(A.MulAttrs(1)) == attrs_key(A.MulAttrs(1))
    assert attrs_key(A.MulAttrs(1)) != attrs_key(A.MulAttrs(True))
    assert attrs_key(A.ClampAttrs(0.0, 1.0)) != attrs_key(A.ClampAttrs(-0.0, 1.0))
    assert attrs_key(A.ClampAttrs(1, 2)) != attrs_key(A.ClampAttrs(1.0, 2.0))
    assert attrs_key(A.ReshapeAttrs((sym("s"), 2))) == attrs_key(A.ReshapeAttrs((sym("s"), 2)))
    assert attrs_key(A.ReshapeAttrs((sym("s"), 2))) != attrs_key(A.ReshapeAttrs((sym("t"), 2)))
    assert attrs_key(A.ConstAttrs(np.zeros(2))) is None       # arrays have no value key


def test_the_memo_sees_an_op_changed_after_it_passed():
    g = _chain(10)
    memo: dict = {}
    assert verify(g, memo=memo) == []
    g.ops[5].results[0].type = tensor(F32, 3, 4)
    problems = verify(g, memo=memo)
    assert any("op 5 ADD" in p and "result 0 has type" in p for p in problems)


def test_the_memo_runs_a_check_asked_for_later():
    """An op that passed without the equal-ranks or static checks is put through them when a later call asks."""
    g = Graph()
    s = g.scope.declare(SymbolInfo("s", "input 'x' axis 0", input_name="x", axis=0))
    x = g.add_input("x", tensor(F32, s, 4))
    b = Builder(g, at("Add", "n"))
    y = b.emit(Op.ADD, x, b.const(np.ones((4,), np.float32)))     # ranks 2 and 1: broadcasting allows it
    g.set_outputs([y], ["y"])
    memo: dict = {}
    assert verify(g, memo=memo) == []
    assert any("operand ranks [2, 1] differ" in p for p in verify(g, require_equal_ranks=True, memo=memo))
    assert any("has symbolic dims" in p for p in verify(g, require_static=True, memo=memo))
    assert verify(g, memo=memo) == []


def test_the_builder_reuses_a_rule_answer_only_for_equal_ops():
    g = Graph()
    s = g.scope.declare(SymbolInfo("s", "input 'x' axis 0", input_name="x", axis=0))
    t = g.scope.declare(SymbolInfo("t", "input 'w' axis 0", input_name="w", axis=0))
    x, w = g.add_input("x", tensor(F32, s, 4)), g.add_input("w", tensor(F32, t, 4))
    i, j = g.add_input("i", tensor(I8, 2, 4)), g.add_input("j", tensor(I8, 2, 4))
    b = Builder(g, at("Mul", "m"))
    one = b.const(np.ones((1, 4), np.float32))
    cases = [(Op.ADD, (x, one), A.NoAttrs()), (Op.ADD, (x, one), A.NoAttrs()), (Op.ADD, (w, one), A.NoAttrs()),
             (Op.MUL, (x, one), A.MulAttrs(0)), (Op.MUL, (i, j), A.MulAttrs(0)), (Op.MUL, (i, j), A.MulAttrs(0)),
             (Op.SUB, (i, j), A.NoAttrs())]
    for op, operands, attrs in cases:
        made = b.emit(op, *operands, attrs=attrs).type
        fresh = op.shape_rule([v.type for v in operands], attrs)[0]   # the rule itself, nothing remembered
        assert isinstance(made, TensorType) and made == fresh, (op, made, fresh)
    assert [v.type for v in g.inputs] == [tensor(F32, s, 4), tensor(F32, t, 4), tensor(I8, 2, 4), tensor(I8, 2, 4)]
    assert g.ops[-3].results[0].type == tensor(I32, 2, 4) and g.ops[-1].results[0].type == tensor(I8, 2, 4)


def test_registry_answers_are_forgotten_when_a_converter_registers():
    domain, op_type = "tosaconv.test.cache", "Probe"
    assert registry.schema(op_type, 1, domain) is None and registry.resolve(op_type, 1, domain) is None
    try:
        registry.declare(domain, op_type, 1)
        assert registry.schema(op_type, 1, domain) is not None
        assert registry.resolve(op_type, 1, domain) is None          # declared, but no converter yet

        def probe(ctx, node):
            return None
        registry.converter(op_type, since=1, domain=domain)(probe)
        assert registry.resolve(op_type, 1, domain) is probe
    finally:
        registry._REGISTRY.pop((domain, op_type), None)
        registry._DECLARED.pop((domain, op_type), None)
        registry._forget_answers()
    assert registry.resolve(op_type, 1, domain) is None


def test_ops_on_the_same_type_objects_share_a_verdict_only_with_equal_attributes():
    """The verifier looks verdicts up by the identity of the types first: a CLAMP whose bounds are crossed,
    on the very type objects of good CLAMPs before it, is still reported (CLAMP's ERROR_IF: min <= max)."""
    g = Graph()
    x = g.add_input("x", tensor(F32, 2, 4))
    b = Builder(g, at("Clip", "c"))
    outs = [b.emit(Op.CLAMP, x, attrs=A.ClampAttrs(0.0, 6.0), result_type=x.type) for _ in range(3)]
    outs.append(b.emit(Op.CLAMP, x, attrs=A.ClampAttrs(6.0, 0.0), result_type=x.type))
    g.set_outputs(outs, ["a", "b", "c", "d"])
    problems = verify(g)
    assert len(problems) == 1 and "op 3 CLAMP" in problems[0], problems


def test_the_builder_tells_ops_on_the_same_type_objects_apart_by_their_attributes():
    """The builder's answers by type identity keep the attribute values in the key: two TRANSPOSEs of one
    value with other perms get the rule's own answers."""
    g = Graph()
    x = g.add_input("x", tensor(F32, 2, 3, 4))
    b = Builder(g, at("Transpose", "t"))
    for perms in [(0, 1, 2), (2, 0, 1), (0, 1, 2), (1, 2, 0)]:
        made = b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs(perms)).type
        assert made == Op.TRANSPOSE.shape_rule([x.type], A.TransposeAttrs(perms))[0] == tensor(
            F32, *[(2, 3, 4)[p] for p in perms])


def test_unique_names_are_the_first_free_suffix_as_fresh_name_gives():
    """Graph.unique_name remembers where each base's suffix search got to; the names are those the plain
    search (fresh_name, from the start every time) gives, with names taken in between by inputs, and after
    the name set is replaced (as canonical_names does)."""
    from tosaconv.ir.graph import fresh_name
    g = Graph()
    g.add_input("a_3", tensor(F32, 1))
    reference = set(g._names)
    steps = ["a", "a", "a", "b", "a", ("input", "a_6"), "a", "a", "b", ("input", "b_3"), "b", "b",
             ("replace", {"a", "a_2"}), "a", "a", "b"]
    for step in steps:
        if isinstance(step, tuple) and step[0] == "input":
            g.add_input(step[1], tensor(F32, 1))
            reference.add(step[1])
        elif isinstance(step, tuple):
            g._names, reference = set(step[1]), set(step[1])
        else:
            assert g.unique_name(step) == fresh_name(step, reference)
    assert g._names == reference


def _consts(*arrays: np.ndarray, types: tuple = ()) -> Graph:
    """A graph of one CONST per array (result type from the array unless ``types`` gives it), all outputs."""
    g = Graph()
    b = Builder(g, at("Constant", "c"))
    outs = [b.emit(Op.CONST, attrs=A.ConstAttrs(a), result_type=t) for a, t in
            zip(arrays, types or (None,) * len(arrays))]
    g.set_outputs(outs, [f"c{i}" for i in range(len(outs))])
    return g


def test_const_verdicts_follow_the_arrays_dtype_and_shape_across_programs():
    """CONST verdicts are keyed by the array's dtype and shape (never its values) and outlive one program:
    a later program's CONST whose result type does not match its array, or whose array has no TOSA type,
    is still reported."""
    assert verify(_consts(np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32))) == []
    wrong_shape = _consts(np.ones((2, 3), np.float32), types=(tensor(F32, 3, 2),))
    assert any("result 0 has type" in p for p in verify(wrong_shape, require_static=True))
    wrong_dtype = _consts(np.ones((2, 3), np.int8), types=(tensor(F32, 2, 3),))
    assert any("result 0 has type" in p for p in verify(wrong_dtype))
    no_tosa_type = _consts(np.ones((2, 3), np.complex64), types=(tensor(F32, 2, 3),))
    assert any("no TOSA element type" in p for p in verify(no_tosa_type))


def test_verdicts_kept_between_verify_calls_see_a_changed_op():
    g = Graph()
    x = g.add_input("x", tensor(F32, 2, 4))
    b = Builder(g, at("Abs", "a"))
    y = b.emit(Op.ABS, x)
    g.set_outputs([y], ["y"])
    verdicts: dict = {}
    assert verify(g, verdicts=verdicts, require_static=True) == []
    y.type = tensor(F32, 4, 2)              # the shape rule gives [2,4]
    assert any("result 0 has type" in p for p in verify(g, verdicts=verdicts, require_static=True))
    fresh = Graph()                          # a new program with the same wrong op, after the right one passed
    x2 = fresh.add_input("x", tensor(F32, 2, 4))
    z = Builder(fresh, at("Abs", "a")).emit(Op.ABS, x2, result_type=tensor(I32, 2, 4))
    fresh.set_outputs([z], ["z"])
    assert any("result 0 has type" in p for p in verify(fresh))


def test_the_memo_sees_new_attributes_and_accepts_equal_new_types():
    """An op given other attributes after it passed is checked again; one whose types were replaced by
    types of the same normal form still passes (the checks read only that form)."""
    g = _chain(6)
    memo: dict = {}
    assert verify(g, memo=memo) == []
    for op in g.ops[1:]:
        op.results[0].type = TensorType(op.results[0].type.dtype, tuple(op.results[0].type.shape))
    assert verify(g, memo=memo) == []
    g.ops[3].attrs = A.MulAttrs(0)           # ADD takes no attributes
    problems = verify(g, memo=memo)
    assert len(problems) == 1 and "op 3 ADD" in problems[0] and "MulAttrs" in problems[0]


def test_the_builder_interns_only_attributes_no_reader_can_tell_apart():
    """Equal attributes of plain values become one object; values of other exact types, symbolic dims,
    NaNs and lists keep their own object, and every op keeps the values it was made with."""
    g = Graph()
    x = g.add_input("x", tensor(F32, 2, 4))
    b = Builder(g, at("Transpose", "t"))
    made = [b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs(p), result_type=tensor(F32, 4, 2)).producer
            for p in [(1, 0), (1, 0), (True, False)]]
    assert made[0].attrs is made[1].attrs and made[2].attrs is not made[0].attrs
    assert type(made[2].attrs.perms[0]) is bool
    nan = [b.emit(Op.CLAMP, x, attrs=A.ClampAttrs(float("nan"), 1.0)).producer for _ in range(2)]
    assert nan[0].attrs is not nan[1].attrs
    s = sym("s")
    shaped = [b.emit(Op.RESHAPE, x, attrs=A.ReshapeAttrs((s, 8)), result_type=tensor(F32, s, 8)).producer
              for _ in range(2)]
    assert shaped[0].attrs is not shaped[1].attrs
    listed = [b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs([1, 0]), result_type=tensor(F32, 4, 2)).producer
              for _ in range(2)]   # type: ignore[arg-type]
    assert listed[0].attrs is not listed[1].attrs
    adds = [b.emit(Op.ADD, x, x).producer for _ in range(2)]
    assert adds[0].attrs is adds[1].attrs and adds[0].attrs == A.NoAttrs()


def test_an_op_whose_results_the_builder_took_from_the_rule_still_has_its_error_if_checked():
    """The verifier skips a second shape-rule run for the builder's own answer, never the ERROR_IF rules."""
    g = Graph()
    x = g.add_input("x", tensor(F32, 2, 4))
    b = Builder(g, at("Clip", "c"))
    good = b.emit(Op.CLAMP, x, attrs=A.ClampAttrs(0.0, 1.0))
    bad = b.emit(Op.CLAMP, x, attrs=A.ClampAttrs(2.0, 1.0))      # min_val > max_val
    assert good.type is bad.type
    g.set_outputs([good, bad], ["good", "bad"])
    problems = verify(g)
    assert len(problems) == 1 and "op 1 CLAMP" in problems[0] and "ERROR_IF" in problems[0]


def test_verdicts_kept_from_an_earlier_program_do_not_hide_a_wrong_op():
    """A second program of the same objects (types, interned attributes) reuses the first one's verdicts, but
    an op whose result type differs is still checked and reported, and so is a CONST of another shape."""
    first = _chain(8)
    assert verify(first) == []
    second = _chain(8)
    assert verify(second) == []
    second.ops[4].results[0].type = tensor(F32, 3, 4)
    const = second.ops[0]
    const.attrs = A.ConstAttrs(np.ones((2, 4), np.float32))      # its result type stays [1,4]
    problems = verify(second)
    assert any("op 4 ADD" in p and "result 0 has type" in p for p in problems)
    assert any("op 0 CONST" in p and "result 0 has type" in p for p in problems)
