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
"""
from __future__ import annotations

from collections.abc import Mapping

from ..diagnostics import ConversionError, ShapeError
from ..ir.builder import Builder
from ..ir.graph import Graph, Operation, Value
from ..ir.types import IndexType
from ..ir.verifier import verify
from .dce import eliminate_dead_code
from .decay import rule_for
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
    if rule_for(op.op) is not None and any(_open_index(v) for v in operands):
        return b.create(op.op, operands, op.attrs).results   # decays later, when these symbols are bound
    try:
        return rebuild_op(op, operands, b, env)
    except ShapeError as e:
        if not any(d.code == "E-DATA-DEPENDENT" for d in e.diagnostics):
            raise
        raise ConversionError.one(
            "E-KEEP-SYMBOLS", f"cannot keep symbols through {op.op.name} at {op.location}: "
            f"{e.diagnostics[0].message}", op.location,
            hint="bind the symbols it depends on (--bind), or convert without --keep-symbols") from None


def _open_index(v: Value) -> bool:
    return isinstance(v.type, IndexType) and not isinstance(v.type.value, int)
