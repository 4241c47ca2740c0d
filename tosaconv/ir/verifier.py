"""The IR verifier: structural checks that the pass manager runs after every pass.

:func:`verify` returns every problem it finds as text (empty when the graph is
fine); :func:`check` raises :class:`VerifyError` carrying all of them. It
checks SSA (each operand is a graph input or the result of an earlier op, no
value is defined twice, the outputs are defined), operand counts and attribute
classes against the op table, and that every result type is what the op's
shape rule gives, after the op's ERROR_IF rules of the TOSA specification (:mod:`.error_if`)
hold (EXTRACT_DIM's result is data-dependent, so only its kind is
checked); each region of a control-flow op is verified as a graph of its own; reads and
writes of state name a variable declared earlier with their type.
Optional checks: equal operand ranks for broadcastable ops (after rank
equalization) and a fully static program (before emission). Types are
compared structurally with :func:`same_type`, because ``==`` on symbolic dims
raises when the answer depends on the bindings.

Speed: the pass manager verifies after every pass, so it passes a ``memo``
dict that lives for one pipeline. An op whose op kind and attributes are the
very same (immutable) objects as when it last passed its checks, with as many
operands and operand and result types equal to those (the same objects, or of
the same normal form) is not run through its shape rule again; the memo also notes
which optional checks (equal ranks, static) it passed, so a later verify that
asks for one more check runs only that one. Within one :func:`verify` call,
ops whose op kind, attribute values and operand and result types are
structurally the same (a long chain of ``ADD`` on ``[batch, 16]``) share one
verdict: the checks are functions of exactly these, and the graph does not
change while it is verified; a verdict is looked up by the identity of the op's types first (most ops
share their type objects), by their normal form only when that finds none. The builder gives structurally
equal types and attributes one object (:mod:`.structural`), so for its ops (interned attributes, or a
CONST) the identity key is the whole story: no structural key is made, and their verdicts by identity
are kept for the process (a later variant made of the same objects is not checked again). The shape
rule is not run a second time for an op whose results are the very objects the builder's run of that
rule gave on its operand types and attributes; its ERROR_IF rules always run. Error messages are only
formatted when there is a problem.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Optional, Union

import numpy as np

from ..symbolic.expr import Expr, InconclusiveDimension, is_static
from .attrs import Attrs, tuple_fields
from .error_if import error_if
from .graph import Graph, Operation, Value, op_regions, ops_with_regions
from .ops import Op, OpDef, Trait
from .region_rules import same_type  # noqa: F401  (part of the verifier's API)
from .shape_rules import ShapeRuleError
from .structural import RULE_ANSWERS, interned_key, is_interned, known_const_types, types_key
from .dtypes import DType
from .types import IndexType, TensorType, ValueType
from .variable_rules import variable_problems

# How a shape rule rejects operands on purpose: impossible shapes, or a decision a symbol leaves open.
# Anything else a rule raises is a bug in the rule, not a verdict on the operands.
RULE_ERRORS = (ShapeRuleError, InconclusiveDimension)

# The verify memo: id(op) -> (the op kind, attributes, operand count and list of operand and result types
# it passed with, whether it passed the equal-ranks check, whether it passed the static check, the op);
# see the module docstring. One flat tuple per op (a program has many); holding the op keeps its id.
_Memo = dict[int, tuple[object, ...]]
# The verdicts of one verify call: (check, structural key of an op) -> the objects the key names by id (kept alive).
_Passed = dict[tuple[object, ...], object]
VerifyMemo = _Memo   # the type a caller that keeps a memo between verify calls declares
VerifyVerdicts = _Passed   # and one that keeps the verdicts of structurally equal ops between calls


class VerifyError(Exception):
    """The graph breaks IR invariants; ``problems`` lists them all."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("IR verification failed:\n" + "\n".join("  " + p for p in self.problems))


def arity_problem(op: OpDef, count: int) -> Optional[str]:
    """Why ``count`` operands do not fit ``op`` (None when they do)."""
    arity = _ARITY.get(op)
    if arity is None:    # (each op is checked once per op made and per verify: its counts are kept)
        fixed = sum(1 for o in op.operands if not o.variadic)
        arity = _ARITY[op] = (fixed, fixed != len(op.operands))
    fixed, variadic = arity
    if count < fixed or (not variadic and count != fixed):
        plural = "" if fixed == 1 else "s"
        return f"{op.name} takes {'at least ' if variadic else ''}{fixed} operand{plural}, got {count}"
    return None


_ARITY: dict[OpDef, tuple[int, bool]] = {}   # op -> (its fixed operand count, whether it takes more)


def type_problems(op: OpDef, operand_types: list[ValueType], attrs: Attrs,
                  result_types: Sequence[ValueType]) -> list[str]:
    """Differences between ``result_types`` and what ``op``'s shape rule gives."""
    if op is Op.EXTRACT_DIM:
        ok = len(result_types) == 1 and isinstance(result_types[0], IndexType)
        return [] if ok else ["EXTRACT_DIM must have one index result"]
    broken = error_if(op.name, operand_types, attrs)
    if broken:   # helper ops have no TOSA form: their rules are the IR's own
        what = "breaks a TOSA ERROR_IF rule" if op.tosa else "rejects the operands"
        return [f"{'' if op.tosa else 'the shape rule of '}{op.name} {what}: {broken}"]
    if _rule_answer_is(op, operand_types, attrs, result_types):
        return []
    try:
        expected = op.shape_rule(list(operand_types), attrs)
    except RULE_ERRORS as e:
        return [f"the shape rule of {op.name} rejects the operands: {e}"]
    if len(expected) != len(result_types):
        return [f"{op.name} has {len(result_types)} results, the shape rule gives {len(expected)}"]
    return [f"result {i} has type {got}, but the shape rule of {op.name} gives {want}"
            for i, (got, want) in enumerate(zip(result_types, expected))
            if not same_type(got, want) and not _wider_result(op, got, want)]


def _rule_answer_is(op: OpDef, operand_types: list[ValueType], attrs: Attrs,
                    result_types: Sequence[ValueType]) -> bool:
    """Whether the builder found that ``op``'s shape rule gives ``result_types`` (these very objects) on
    these operand type objects and attribute object (:data:`.structural.RULE_ANSWERS`): the rule need
    not run again."""
    if op is Op.CONST:     # (keyed by what its rule reads: a CONST's attributes hold an array)
        answer = known_const_types(attrs)
    else:
        known = RULE_ANSWERS.get((id(op), id(attrs), *map(id, operand_types)))
        answer = known[1] if known is not None else None   # type: ignore[assignment]
    return answer is not None and len(answer) == len(result_types) and all(map(operator.is_, answer, result_types))


# Results the spec lets an op widen beyond its operands' type (TOSA 1.0 MATMUL: fp16 x fp16 -> fp32,
# bf16 x bf16 -> fp32); the shape rule gives the narrow one.
_WIDER_RESULTS = {("MATMUL", DType.FP16): DType.FP32, ("MATMUL", DType.BF16): DType.FP32}


def _wider_result(op: OpDef, got: ValueType, want: ValueType) -> bool:
    if not isinstance(want, TensorType):
        return False
    wide = _WIDER_RESULTS.get((op.name, want.dtype))
    return wide is not None and isinstance(got, TensorType) and same_type(got, want.with_dtype(wide))


def verify(graph: Graph, *, require_equal_ranks: bool = False, require_static: bool = False,
           memo: _Memo | None = None, verdicts: _Passed | None = None) -> list[str]:
    """Every problem found in ``graph``, as text; an empty list when it is well formed.

    ``memo`` (optional, any dict kept between calls) remembers the ops that passed their type checks;
    ``verdicts`` (optional, a dict kept between verify calls on one program, see :data:`VerifyVerdicts`)
    remembers the checks that structurally equal ops passed, so a pass's new ops like old ones are not re-checked."""
    return _verify(graph, require_equal_ranks, require_static, memo, {} if verdicts is None else verdicts)


def _verify(graph: Graph, require_equal_ranks: bool, require_static: bool, memo: _Memo | None,
            passed: _Passed) -> list[str]:
    problems = _ssa_problems(graph) + variable_problems(graph)
    holders = set(map(id, ops_with_regions(graph.ops)))   # the rest have no region to verify
    seen_before: _Memo = memo if memo is not None else {}
    for i, op in enumerate(graph.ops):
        seen = seen_before.get(id(op))    # (an op that passed every check asked for, unchanged since: inline)
        if seen is not None and (seen[5] or not require_static) \
                and _unchanged(seen, op, types := [*map(_TYPE, op.operands), *map(_TYPE, op.results)]):
            found = [] if seen[4] or not require_equal_ranks else _ranks_now(op, types, seen, seen_before)
        else:
            found = _checked_op_problems(op, memo, require_equal_ranks, require_static, passed)
        if id(op) in holders:
            found += _region_problems(op, require_equal_ranks, require_static, memo, passed)
        if found:
            problems += [_where(i, op) + p for p in found]
    if require_static:
        problems += [f"graph input {v.name!r}: {p}" for v in graph.inputs for p in _static_type_problems(v.type)]
    return problems


def _ranks_now(op: Operation, types: list[ValueType], seen: tuple[object, ...], memo: _Memo) -> list[str]:
    """The rank check alone, for an op unchanged since it passed every other check asked for now (what
    :func:`_checked_op_problems` does then, without remaking its types); the memo entry notes it passed."""
    found = _rank_problems(op)
    if not found:
        memo[id(op)] = (op.op, op.attrs, len(op.operands), types, True, seen[5], op)
    return found


def rank_problems(graph: Graph) -> list[str]:
    """What ``verify(require_equal_ranks=True)`` finds beyond what ``verify`` finds: operands of unequal
    ranks, here and in every region, reported as ``verify`` reports them (the pass manager's check when
    a pass that asks for equal ranks changed nothing since a verify without it passed)."""
    problems: list[str] = []
    holders = set(map(id, ops_with_regions(graph.ops)))
    for i, op in enumerate(graph.ops):
        found = _rank_problems(op)
        if id(op) in holders:
            found += [f"in {name} @{region.name}: {p}" for name, region in op_regions(op)
                      for p in rank_problems(region)]
        if found:
            problems += [_where(i, op) + p for p in found]
    return problems


def _region_problems(op: Operation, equal_ranks: bool, static: bool, memo: _Memo | None,
                     passed: _Passed) -> list[str]:
    """A region is verified like a graph (it is isolated from above), with the same options."""
    return [f"in {name} @{region.name}: {p}" for name, region in op_regions(op)
            for p in _verify(region, equal_ranks, static, memo, passed)]


def check(graph: Graph, **options: Any) -> None:
    """Raise :class:`VerifyError` with every problem when ``graph`` is not well formed."""
    problems = verify(graph, **options)
    if problems:
        raise VerifyError(problems)


# -- SSA ---------------------------------------------------------------------------

class _Definitions:
    """The values defined so far while walking the graph in order."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.produced: Optional[set[int]] = None   # ids of every op result, made when a use needs it
        self.ids: set[int] = set()
        self.names: set[str] = set()
        self.problems: list[str] = []

    def define(self, value: Value, what: Union[str, _OpLabel]) -> None:
        if id(value) in self.ids or value.name in self.names:
            self.problems.append(f"{what} defines %{value.name}, which is already defined")
        self.ids.add(id(value))
        self.names.add(value.name)

    def use(self, value: Value, i: int, op: Operation, k: int) -> None:
        if id(value) not in self.ids:
            if self.produced is None:     # only a problem needs it
                self.produced = {id(r) for o in self.graph.ops for r in o.results}
            why = "used before it is defined" if id(value) in self.produced else "not defined in the graph"
            self.problems.append(f"{_where(i, op)}operand {k} %{value.name} is {why}")


def _ssa_problems(graph: Graph) -> list[str]:
    defs = _Definitions(graph)
    for v in graph.inputs:
        defs.define(v, "graph input")
    ids, names = defs.ids, defs.names
    for i, op in enumerate(graph.ops):
        if not ids.issuperset(map(id, op.operands)):   # (the checks of ``use`` and ``define``, inline)
            for k, v in enumerate(op.operands):
                if id(v) not in ids:
                    defs.use(v, i, op, k)
        for r in op.results:
            if id(r) in ids or r.name in names:
                defs.define(r, _OpLabel(i, op))
            else:
                ids.add(id(r))
                names.add(r.name)
    return defs.problems + _output_problems(graph, defs.ids)


class _OpLabel:
    """``op I NAME``, formatted only when a message needs it."""

    def __init__(self, i: int, op: Operation) -> None:
        self.i, self.op = i, op

    def __str__(self) -> str:
        return f"op {self.i} {self.op.op.name}"


def _where(i: int, op: Operation) -> str:
    return f"op {i} {op.op.name} at {op.location}: "


def _output_problems(graph: Graph, defined: set[int]) -> list[str]:
    problems = [f"output {k} %{v.name} is not defined in the graph"
                for k, v in enumerate(graph.outputs) if id(v) not in defined]
    if len(graph.output_names) != len(graph.outputs):
        problems.append(f"{len(graph.outputs)} outputs but {len(graph.output_names)} output names")
    return problems


# -- per-op checks ---------------------------------------------------------------------

def _checked_op_problems(op: Operation, memo: _Memo | None, equal_ranks: bool, static: bool,
                         passed: _Passed) -> list[str]:
    """The op's own checks (not its regions'), skipped when ``memo`` saw it pass unchanged or ``passed``
    holds the verdict of a structurally equal op."""
    types = list(map(_TYPE, op.operands))
    types += map(_TYPE, op.results)
    seen = memo.get(id(op)) if memo is not None else None
    base = seen is None or not _unchanged(seen, op, types)
    done_ranks, done_static = (False, False) if base else (bool(seen[4]), bool(seen[5]))  # type: ignore[index]
    if not base and (done_ranks or not equal_ranks) and (done_static or not static):
        return []          # passed every check asked for, unchanged since: the memo entry stands
    same = _same_key(op, types) if base or (static and not done_static) else None
    checks = _SAME_PASSED.get(same, _NONE_PASSED)[0] if base else ()   # type: ignore[arg-type]
    if "op" in checks and (not static or "static" in checks):   # (both verdicts stand: what the rest does)
        found = _rank_problems(op) if equal_ranks and _BROADCASTABLE in op.op.traits else []
        if memo is not None and not found:
            memo[id(op)] = (op.op, op.attrs, len(op.operands), types, equal_ranks, static, op)
        return found
    keys = _VerdictKeys(op, types, same) if same is not None else None
    found = _shared_verdict(op, "op", keys, passed) if base else []
    if equal_ranks and not done_ranks:
        found += _rank_problems(op)       # cheaper than finding a shared verdict
    if static and not done_static:
        found += _shared_verdict(op, "static", keys, passed)
    if memo is not None and not found:    # (holding op keeps its id; types is this call's own list)
        memo[id(op)] = (op.op, op.attrs, len(op.operands), types, done_ranks or equal_ranks,
                        done_static or static, op)
    return found


_TYPE = operator.attrgetter("type")
_BROADCASTABLE = Trait.BROADCASTABLE


def _unchanged(seen: tuple[object, ...], op: Operation, types: list[ValueType]) -> bool:
    """``op`` still has the op kind and attributes (the very objects) it passed with, as many operands,
    and operand and result types equal to those it passed with: the same objects (``==`` on a list
    compares identity first), or types of the same normal form (``TensorType.__eq__``), on which every
    check gives the same verdict (the verdicts shared between structurally equal ops rest on this too)."""
    return seen[0] is op.op and seen[1] is op.attrs and seen[2] == len(op.operands) and seen[3] == types


_CHECKS = {"op": lambda op: _op_problems(op), "static": lambda op: _static_problems(op)}


class _VerdictKeys:
    """What the per-op checks read of an op (:mod:`.structural`): the op kind (by identity), the attributes
    and each operand and result type, two ways: by identity (``same``: cheap, and most ops share their
    type objects with others, and the builder's ops their interned attributes; a CONST's attributes by
    what its checks read of them, :func:`_const_key`), and, made only when that finds no verdict, by their
    normal form (``structural``: the attribute values, or the attribute object by identity when they have
    no key; None: not keyable)."""

    __slots__ = ("types", "op", "same", "_structural")

    def __init__(self, op: Operation, types: list[ValueType], same: tuple[object, ...]) -> None:
        self.types, self.op = types, op
        self.same = same     # (:func:`_same_key`)
        self._structural: object = _NOT_MADE

    def structural(self) -> Optional[tuple[object, ...]]:
        if self._structural is _NOT_MADE:
            types = types_key(self.types)
            self._structural = None if types is None else (self.same[0], self.same[1], self.attrs(), types)
        return self._structural     # type: ignore[return-value]

    def attrs(self) -> tuple[object, ...]:
        """The attribute part of the structural key."""
        op = self.op
        value_key = interned_key(op.attrs) if op.op is not Op.CONST else _const_key(op.attrs)
        return ("id", id(op.attrs)) if value_key is None else value_key


_NOT_MADE = object()


def _same_key(op: Operation, types: list[ValueType]) -> tuple[object, ...]:
    """The key by identity of what the per-op checks read of ``op`` (see :class:`_VerdictKeys`)."""
    attrs = op.attrs
    const_key = _const_key(attrs) if op.op is Op.CONST else None
    return (id(op.op), len(op.operands), const_key or id(attrs), *map(id, types))


def _const_key(attrs: Attrs) -> Optional[tuple[object, ...]]:
    """What a CONST's checks read of its attributes: the values' array type, dtype and shape (never the
    values), and the element-type fields; None when the values are not an array."""
    values = getattr(attrs, "values", None)
    if type(values) is not np.ndarray:
        return None
    return (type(attrs), values.dtype, values.shape, getattr(attrs, "int48", None), getattr(attrs, "element_type", None))


def _shared_verdict(op: Operation, check: str, keys: Optional[_VerdictKeys], passed: _Passed) -> list[str]:
    """The problems ``check`` finds in ``op``; not run again when an op of the same objects or a structurally
    equal op passed it in this verify call."""
    if keys is not None:
        same = (check, "same", keys.same)
        if same in passed or check in _SAME_PASSED.get(keys.same, _NONE_PASSED)[0]:
            return []
        # A builder's op (interned attributes, or a CONST) structurally equal to one that passed has the
        # same objects (its types are shared too), so no structural key is made for it.
        skey = None if _identity_keyed(op, keys) else keys.structural()
        if skey is not None and ((check, skey) in passed or (check, skey) in _STATIC_PASSED):
            passed[same] = (keys.types, op.attrs)   # (holding them keeps their ids)
            _remember_same(check, op, keys)
            return []
    problems: list[str] = _CHECKS[check](op)
    if keys is not None and not problems:
        passed[same] = (keys.types, op.attrs)
        _remember_same(check, op, keys)
        if skey is not None:
            passed[(check, skey)] = (op.op, op.attrs)
            _remember_static(check, skey, op)
    return problems


# Verdicts by identity that outlive one program: key by identity -> (the checks it passed, the objects the
# key names), for ops whose attributes are interned (:func:`.structural.interned`: small, plain values) or a
# CONST (keyed by its array's dtype and shape, so its array is not held); its types are the builder's
# shared objects too. A later program (another variant of the same model: ``--bind-grid``, or the next
# conversion in a process) made of the same objects then has these checks done. Cleared past _STATIC_LIMIT.
_SAME_PASSED: dict[tuple[object, ...], tuple[set[str], object]] = {}
_NONE_PASSED: tuple[frozenset[str], None] = (frozenset(), None)


def _identity_keyed(op: Operation, keys: _VerdictKeys) -> bool:
    """Whether ``op``'s key by identity stands for its structure: a CONST keyed by :func:`_const_key`, or
    an op with interned attributes."""
    return type(keys.same[2]) is tuple or is_interned(op.attrs)


def _remember_same(check: str, op: Operation, keys: _VerdictKeys) -> None:
    const = type(keys.same[2]) is tuple      # a CONST keyed by _const_key (not by its attributes' id)
    if not const and not is_interned(op.attrs):
        return
    known = _SAME_PASSED.get(keys.same)
    if known is None:
        if len(_SAME_PASSED) >= _STATIC_LIMIT:
            _SAME_PASSED.clear()
        known = _SAME_PASSED[keys.same] = (set(), (keys.types, None if const else op.attrs, op.op))
    known[0].add(check)


# Verdicts that outlive one program: (check, structural key) -> the op kind (held: the key names it by id),
# for keys of values only, with every dim a number (no attribute keyed by identity, no symbol), so the verdict
# is a fact about numbers alone. The static program that specialization rebuilds from a program verified at
# load time then has its ops' checks already done. Cleared when it grows past _STATIC_LIMIT.
_STATIC_PASSED: dict[tuple[object, ...], object] = {}
_STATIC_LIMIT = 100_000


def _remember_static(check: str, skey: tuple[object, ...], op: Operation) -> None:
    attrs, types = skey[2], skey[3]
    if not _numbers_only(attrs) or not all(_static_entry(t) for t in types):  # type: ignore[arg-type, attr-defined]
        return
    if len(_STATIC_PASSED) >= _STATIC_LIMIT:
        _STATIC_PASSED.clear()
    _STATIC_PASSED[(check, skey)] = op.op


def _static_entry(entry: tuple[object, ...]) -> bool:
    """A ``types_key`` entry whose dims (or index value) are all numbers."""
    if entry[0] is IndexType:
        return type(entry[1]) is int
    return all(type(d) is int for d in entry[1])   # type: ignore[attr-defined]


def _numbers_only(key: tuple[object, ...]) -> bool:
    """An attribute key that names no object by identity and holds no symbolic dim: ``attrs_key``'s
    ``(class, values)``, or a CONST's (whose second item is a numpy dtype)."""
    if type(key[0]) is str:      # ("id", id of the attributes)
        return False
    values = key[1]
    return type(values) is not tuple or not any(map(_symbolic, values))


def _symbolic(exact: tuple[object, ...]) -> bool:
    """An ``_exact_key`` value ``(tag, payload)`` that is, or holds, a symbolic dim."""
    tag = exact[0]
    if tag is Expr:
        return True
    return (tag is tuple or tag is list) and any(map(_symbolic, exact[1]))  # type: ignore[call-overload]


def _op_problems(op: Operation) -> list[str]:
    arity = arity_problem(op.op, len(op.operands))
    if arity:
        return [arity]
    if not isinstance(op.attrs, op.op.attrs):
        return [f"attributes are {type(op.attrs).__name__}, expected {op.op.attrs.__name__}"]
    return type_problems(op.op, [v.type for v in op.operands], op.attrs, [r.type for r in op.results])


def _rank_problems(op: Operation) -> list[str]:
    if Trait.BROADCASTABLE not in op.op.traits:
        return []
    ranks = [len(v.type.shape) for v in op.operands if isinstance(v.type, TensorType)]
    if ranks and min(ranks) != max(ranks):
        return [f"operand ranks {ranks} differ (rank equalization must run first)"]
    return []


def _static_problems(op: Operation) -> list[str]:
    problems = [] if op.op.tosa is not None else ["is a helper op with no TOSA form; it must decay first"]
    for name in tuple_fields(op.op.attrs):
        value = getattr(op.attrs, name, ())
        if not all(is_static(d) for d in value):
            problems.append(f"attribute {name} = {[str(d) for d in value]} is symbolic")
    for r in op.results:
        problems += [f"result %{r.name}: {p}" for p in _static_type_problems(r.type)]
    return problems


def _static_type_problems(t: ValueType) -> list[str]:
    if isinstance(t, TensorType) and not t.is_static:
        return [f"type {t} has symbolic dims"]
    if isinstance(t, IndexType) and not t.is_static:
        return [f"index value {t} is symbolic"]
    return []
