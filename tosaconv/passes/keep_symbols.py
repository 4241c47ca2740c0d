"""Partial specialization: bind some symbols, keep the others (``convert --keep-symbols``).

The pipeline variant behind the symbolic ``.tosa``. Symbols the bindings fix
are substituted exactly as :func:`~tosaconv.passes.specialize.specialize`
does (ledger checked, constants folded, helper ops collapsed); an op with a
decay rule decays when its Index operands became constants. One whose Index
operands still carry open symbols is kept as it is: RESHAPE with
``shape_symbols``, EXPAND_DIMS, COLLAPSE_DIMS, DYN_SLICE, DYN_TILE and
DYN_PAD are then written with EXT-SHAPE operators by
:mod:`tosaconv.emit.symbolic`. A rule that cannot work at all without data
(EXTRACT_DIM of a computed tensor, NONZERO...) is refused here, naming the op.
A RECURRENT op over an open sequence length becomes WHILE_LOOPs
(:mod:`.recurrent_loop`); a COND_IF on tensor data whose branches see open
dims keeps them in both branches; a LOOP whose trip count is an open dim
becomes a WHILE_LOOP (:mod:`.loop_symbolic`); an IF on open dims becomes a
COND_IF on a tensor computed from them (:mod:`.dim_condition`); a WHILE_LOOP
keeps them in its regions.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from ..diagnostics import ConversionError, ShapeError
from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Graph, Operation, Value
from ..ir.ops import Op
from ..ir.types import IndexType
from ..ir.verifier import verify
from .dce import eliminate_dead_code
from .decay import DataDependentDim, rule_for
from .decay_control import const_truth
from .dim_condition import if_on_dims
from .loop_symbolic import loop_symbolic
from .recurrent_loop import recurrent_symbolic
from .rebuild import check_ledger, rebuild_op, rebuild_ops


def keep_symbols(graph: Graph, bindings: Mapping[str, int]) -> Graph:
    """``graph`` with the symbols of ``bindings`` fixed and every other symbol kept."""
    env = {k: int(v) for k, v in bindings.items()}
    check_ledger(graph, env)
    new = graph.copy_shell()
    mapping: dict[int, Value] = {}
    for v in graph.inputs:
        mapping[id(v)] = new.add_input(v.name, v.type.subs(env))
    rebuild_ops(graph, Builder(new), env, mapping, _rebuild)
    new.set_outputs([mapping[id(v)] for v in graph.outputs], graph.output_names)
    eliminate_dead_code(new)
    problems = verify(new)
    if problems:
        raise ConversionError.one("E-KEEP-SYMBOLS", "partial specialization left an invalid program: "
                                  + "; ".join(problems[:3]))
    return new


def _rebuild(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    if op.op is Op.RECURRENT and not all(v.type.is_static for v in operands):
        return _refusing(op, lambda: recurrent_symbolic(op, b, operands))
    if op.op is Op.LOOP and any(_open_index(v) for v in operands):
        return _refusing(op, lambda: loop_symbolic(op, b, operands, _rebuild))
    if op.op is Op.IF and _open_index(operands[0]):
        return _refusing(op, lambda: if_on_dims(op, b, operands, lambda r: _kept_region(r, env)))
    if op.op in (Op.COND_IF, Op.WHILE_LOOP) and any(_open(v) for v in operands) and \
            (op.op is Op.WHILE_LOOP or const_truth(operands[0]) is None):
        return _refusing(op, lambda: _kept_regions(op, operands, b, env))
    if rule_for(op.op) is not None and any(_open_index(v) for v in operands):
        return b.create(op.op, operands, op.attrs).results   # decays later, when these symbols are bound
    return _refusing(op, lambda: rebuild_op(op, operands, b, env))


def _kept_regions(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    """A COND_IF on tensor data or a WHILE_LOOP over open dims: its regions keep their symbols (rebuilt like
    the main graph); the writer computes a COND_IF's Index operands inside each region."""
    attrs: A.CondIfAttrs | A.WhileLoopAttrs
    if op.op is Op.COND_IF:
        branches = op.attrs_as(A.CondIfAttrs)
        attrs = A.CondIfAttrs(_kept_region(branches.then_graph, env), _kept_region(branches.else_graph, env))
    else:
        loop = op.attrs_as(A.WhileLoopAttrs)
        attrs = A.WhileLoopAttrs(_kept_region(loop.cond_graph, env), _kept_region(loop.body_graph, env))
    return b.create(op.op, operands, attrs).results


def _kept_region(region: Graph, env: dict[str, int]) -> Graph:
    """``region`` rebuilt keeping symbols; it keeps its ledger (asserted inside the region by the writer)."""
    new = region.region_shell(region.name)
    new.ledger = region.ledger
    mapping = {id(v): new.add_input(v.name, v.type.subs(env)) for v in region.inputs}
    rebuild_ops(region, Builder(new), env, mapping, _rebuild)
    new.set_outputs([mapping[id(v)] for v in region.outputs], region.output_names)
    eliminate_dead_code(new)
    return new


def _refusing(op: Operation, rebuild: Callable[[], list[Value]]) -> list[Value]:
    """``rebuild()``, with a data-dependent shape turned into the refusal that names ``op``."""
    try:
        return rebuild()
    except DataDependentDim as e:
        raise ConversionError.one("E-KEEP-SYMBOLS", f"cannot keep symbols through {op.op.name}: {e}", op.location,
                                  hint="bind the symbols it depends on (--bind)") from None
    except ShapeError as e:
        if not any(d.code == "E-DATA-DEPENDENT" for d in e.diagnostics):
            raise
        raise ConversionError.one(
            "E-KEEP-SYMBOLS", f"cannot keep symbols through {op.op.name} at {op.location}: "
            f"{e.diagnostics[0].message}", op.location,
            hint="bind the symbols it depends on (--bind), or convert without --keep-symbols") from None


def _open(v: Value) -> bool:
    """An Index value or a tensor whose type holds an open symbol."""
    t = v.type
    return _open_index(v) if isinstance(t, IndexType) else not t.is_static


def _open_index(v: Value) -> bool:
    return isinstance(v.type, IndexType) and not isinstance(v.type.value, int)
