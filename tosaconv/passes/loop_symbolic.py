"""LOOP (ONNX Loop) whose trip count is an open dim, for ``--keep-symbols``: one WHILE_LOOP.

The static path unrolls a LOOP once its trip count is bound (:mod:`.decay_control`).
With the count left open, the loop runs as a TOSA WHILE_LOOP, as a recurrence
over an open length does (:mod:`.recurrent_loop`):

- the trip count ``N`` (an Index expression of input dims) becomes an int32
  tensor by DIMS_TO_TENSOR (the symbolic writer counts it with TILE and
  REDUCE_SUM); the condition is ``counter < N``;
- the loop carries the counter, ``N``, the state, one buffer per scan output
  (``[1, N, size]``, zeros tiled by ``N``, filled with SCATTER at the running
  step) and the tensors the body captured;
- the body is rebuilt keeping symbols (the caller's rebuild), with the
  iteration number as int32 tensor arithmetic (:mod:`.while_lowering`);
  an Index value it captured is recomputed inside as GET_DIM of a captured
  tensor that carries it (a WHILE_LOOP carries tensors only).

Refused, naming LOOP: a loop with a condition (its iteration count is data),
scan inputs, scan outputs of an open size, or a body that uses the iteration
number as a size.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Graph, Operation, Value
from ..ir.ops import Op
from ..ir.region_rules import iteration_symbol
from ..ir.types import IndexType, TensorType, ValueType
from ..lowering.recurrent_unroll import reshape
from ..symbolic.expr import Atom, Dim, Expr, Monomial, mul, same, sym
from .decay import DataDependentDim
from .loop_count import proven_count
from .rebuild import Rebuild
from .recurrent_loop import tiled_zeros
from .while_lowering import BodyValue, Iteration, body_output, rebuild_body_ops

_Scan = tuple[tuple[Dim, ...], TensorType]   # a scan output's slice shape and type


def loop_symbolic(op: Operation, b: Builder, operands: list[Value], rebuild: Rebuild) -> list[Value]:
    """LOOP ``op`` whose trip count ``operands[0]`` is open, or whose condition counts up to dims
    (:func:`.loop_count.proven_count`), as one WHILE_LOOP; returns its results."""
    a = op.attrs_as(A.LoopAttrs)
    count = _count(op, operands)
    n_cond = int(a.has_cond)
    state = operands[1 + n_cond:1 + n_cond + a.num_state]
    captured = operands[1 + n_cond + a.num_state:]
    tensors = [v for v in captured if isinstance(v.type, TensorType)]
    sources = list(operands) + list(b.graph.inputs)
    count_index = index_of(op, b, count, sources)
    trip = reshape(b, b.dims_to_tensor([count_index]), ())
    scans = _scan_shapes(op)
    buffers = [tiled_zeros(b, (1, 1, 1), [b.index(1), count_index, index_of(op, b, _size(s), sources)], _dtype(t))
               for s, t in scans]
    carried = [b.const(np.array(0, np.int32)), trip] + list(operands[1:1 + n_cond]) + list(state) + buffers + tensors
    types = [v.type for v in carried]
    body = _body_graph(op, b, types, captured, rebuild)
    loop = b.create(Op.WHILE_LOOP, carried, A.WhileLoopAttrs(_cond_graph(b, types, n_cond), body))
    first = 2 + n_cond
    stacked = [reshape(b, buf, (count,) + tuple(s)) for buf, (s, _) in
               zip(loop.results[first + a.num_state:first + a.num_state + len(buffers)], scans)]
    return list(loop.results[first:first + a.num_state]) + stacked


def _count(op: Operation, operands: list[Value]) -> Dim:
    """How many iterations run: the open trip count, or the count the condition is proven to give."""
    a = op.attrs_as(A.LoopAttrs)
    why = None
    count = proven_count(op, operands) if a.has_cond else operands[0].index_type.value
    if count is None:
        why = "it has a condition, so how many iterations run is decided by tensor data"
    elif a.scan_input_axes:
        why = "it has scan inputs"
    elif any(ax != 0 for ax in a.scan_output_axes):
        why = "a scan output stacks along an axis other than 0"
    elif any(iteration_symbol(a.body) in c.symbols() for c in a.body.ledger.entries):
        why = "its body checks sizes that depend on the iteration number"
    if why or count is None:
        raise DataDependentDim(op, f"LOOP at {op.location} runs an open number of iterations as a WHILE_LOOP, "
                                   f"but {why}")
    return count


def index_of(op: Operation, b: Builder, d: Dim, sources: list[Value]) -> Value:
    """An Index value holding the dim ``d``: a constant, a source Index value or GET_DIM of a source tensor
    with that value or dim, else INDEX ops over those (how the importer computes sizes)."""
    if not isinstance(d, Expr):
        return b.index(int(d))
    found = _source_of(b, d, sources)
    if found is not None:
        return found
    terms = iter(d.terms.items())   # an Expr has at least one term (a zero polynomial is the int 0)
    total = _term_index(op, b, *next(terms), sources)
    for mono, coeff in terms:
        total = b.emit(Op.INDEX_ADD, total, _term_index(op, b, mono, coeff, sources))
    return total


def _term_index(op: Operation, b: Builder, mono: Monomial, coeff: int, sources: list[Value]) -> Value:
    """The Index value of one term ``coeff * mono`` of a dim polynomial."""
    atoms = iter([atom for atom, power in mono for _ in range(power)])
    term = b.index(coeff) if coeff != 1 or not mono else _atom_index(op, b, next(atoms), sources)
    for atom in atoms:
        term = b.emit(Op.INDEX_MUL, term, _atom_index(op, b, atom, sources))
    return term


def _source_of(b: Builder, d: Expr, sources: list[Value]) -> Optional[Value]:
    for v in sources:
        t = v.type
        if isinstance(t, IndexType):
            if same(t.value, d):
                return v
            continue
        for axis, dim in enumerate(t.shape):
            if same(dim, d):
                return b.get_dim(v, axis)
    return None


def _atom_index(op: Operation, b: Builder, atom: Atom, sources: list[Value]) -> Value:
    if atom.kind == "sym":
        found = _source_of(b, sym(str(atom.args[0])), sources)
        if found is not None:
            return found
        raise DataDependentDim(op, f"LOOP at {op.location} needs the size {atom}, which no value it reads has "
                                   "as a dim")
    kinds = {"floordiv": Op.INDEX_FLOORDIV, "mod": Op.INDEX_MOD, "min": Op.INDEX_MIN, "max": Op.INDEX_MAX}
    return b.emit(kinds[atom.kind], *(index_of(op, b, x, sources) for x in atom.args if not isinstance(x, str)))


def _scan_shapes(op: Operation) -> list[_Scan]:
    a = op.attrs_as(A.LoopAttrs)
    outs = a.body.outputs[int(a.has_cond) + a.num_state:]
    return [(tuple(v.tensor_type.shape), v.tensor_type) for v in outs]


def _size(shape: tuple[Dim, ...]) -> Dim:
    total: Dim = 1
    for d in shape:
        total = mul(total, d)
    return total


def _dtype(t: TensorType) -> np.dtype[Any]:
    return t.dtype.numpy


def _shell(name: str, types: list[ValueType]) -> Graph:
    g = Graph(name=name)
    for i, t in enumerate(types):
        g.add_input(f"{name}_in{i}", t)
    return g


def _cond_graph(b: Builder, types: list[ValueType], n_cond: int) -> Graph:
    """``counter < count``, and the loop's own condition when it has one."""
    g = _shell("cond", types)
    inner = Builder(g, b.location)
    more = inner.emit(Op.GREATER, g.inputs[1], g.inputs[0])
    g.set_outputs([inner.emit(Op.LOGICAL_AND, more, g.inputs[2]) if n_cond else more], ["cond"])
    return g


def _body_graph(op: Operation, b: Builder, types: list[ValueType], captured: list[Value],
                rebuild: Rebuild) -> Graph:
    a, g = op.attrs_as(A.LoopAttrs), _shell("body", types)
    inner = Builder(g, b.location)
    n_cond, n_scan = int(a.has_cond), len(a.scan_output_axes)
    counter, first = g.inputs[0], 2 + n_cond
    state = list(g.inputs[first:first + a.num_state])
    buffers = list(g.inputs[first + a.num_state:first + a.num_state + n_scan])
    region_tensors = list(g.inputs[first + a.num_state + n_scan:])
    tensors = iter(region_tensors)
    caps = [next(tensors) if isinstance(v.type, TensorType) else _index_in(op, inner, v.index_type, region_tensors)
            for v in captured]
    nxt = inner.emit(Op.ADD, counter, inner.const(np.array(1, np.int32)))
    head: list[BodyValue] = [Iteration(reshape(inner, nxt, (1,)))] + list(g.inputs[2:first])
    outs = _rebuild_body(op, inner, dict(zip(map(id, a.body.inputs), [*head, *state, *caps])), rebuild)
    idx = reshape(inner, counter, (1, 1))
    written = [inner.emit(Op.SCATTER, buf, idx, reshape(inner, v, (1, 1, _size(v.tensor_type.shape))))
               for buf, v in zip(buffers, outs[n_cond + a.num_state:])]
    g.set_outputs([nxt, g.inputs[1]] + outs[:n_cond + a.num_state] + written + region_tensors,
                  [f"out{i}" for i in range(len(types))])
    return g


def _rebuild_body(op: Operation, inner: Builder, mapping: dict[int, BodyValue], rebuild: Rebuild) -> list[Value]:
    """The LOOP body's ops rebuilt into the loop region (the iteration number as int32 arithmetic)."""
    body = op.attrs_as(A.LoopAttrs).body
    rebuild_body_ops(op, body, inner, mapping, lambda step, values: rebuild(step, values, inner, {}))
    return [body_output(op, mapping[id(v)]) for v in body.outputs]


def _index_in(op: Operation, b: Builder, t: IndexType, tensors: list[Value]) -> Value:
    """A captured Index value inside the loop body: a constant, or GET_DIM of a captured tensor carrying it."""
    if not isinstance(t.value, Expr):
        return b.index(int(t.value))
    for v in tensors:
        for axis, d in enumerate(v.tensor_type.shape):
            if same(d, t.value):
                return b.get_dim(v, axis)
    raise DataDependentDim(op, f"LOOP at {op.location} captures the size {t.value}, which no tensor it carries "
                               "has as a dim, and a WHILE_LOOP carries tensors only")
