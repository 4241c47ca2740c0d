"""The evaluator: one flat loop over the graph's ops, in order.

:func:`evaluate` checks and converts the inputs, binds the dimension symbols
from their shapes, checks the constraint ledger under those bindings, then
runs each op's kernel on its operands' values.
Whatever a kernel raises is wrapped in a :class:`KernelError` naming the op
and its source location. Each result is checked against its IR type (dtype
and, once the symbols are bound, shape); an Index result typed by a still
unbound symbol (EXTRACT_DIM's data-dependent value) binds it. A value is
dropped as soon as its last user has run, so a big model never holds every
activation at once. Variables (the program's state) live in a dict the
caller may keep between runs. :func:`run_region` is the same loop for a control-flow
op's region; the control-flow kernels call it. A static program decayed under an
assumed data-dependent count (``graph.assumptions``) has each assumption checked
as soon as the value it counts exists (E-ASSUMPTION, exit 4).
"""
from __future__ import annotations

from collections import Counter
from typing import Optional

import numpy as np

from ..diagnostics.assumption import assumption_error
from ..ir.graph import walk_graphs
from ..ir.types import IndexType
from ..symbolic.expr import dim_str, is_static, subs
from ..diagnostics import TosaconvError
from ..limits import check_tensor
from .binding import bare_symbol, bind_from_shapes
from .errors import InputError, KernelError
from .inputs import prepare_inputs
from .registry import KernelContext, kernel_for


def evaluate(graph, inputs: dict, bindings: Optional[dict] = None, state: Optional[dict] = None) -> dict:
    """Run ``graph`` on ``inputs`` (name -> array); return its outputs by ``graph.output_names``.

    ``state`` holds the program's variables (name -> array) and is updated in place, so passing the
    same dict to consecutive runs carries the state from one to the next (a streaming model); a
    variable missing from it starts at its declared initial value. Without it, every run starts fresh.
    """
    _check_kernels(graph)
    values = prepare_inputs(graph, inputs)
    env = bind_from_shapes(graph, {name: a.shape for name, a in values.items()}, bindings)
    _check_constraints(graph, env)
    _run_ops(graph, values, KernelContext(env, {} if state is None else state))
    return {name: _as_array(values[v.name]) for name, v in zip(graph.output_names, graph.outputs)}


def run_region(graph, args: list, bindings: dict) -> list:
    """Run a region (a control-flow op's graph) on its input values under the enclosing bindings.

    ``args`` are arrays and Index ints, one per region input; each is checked against its type (an
    Index input may bind a data-dependent symbol, such as a loop's iteration number). The region's
    own ledger is checked, since its facts hold only when it runs. Returns the output values.
    """
    env = dict(bindings)
    if len(args) != len(graph.inputs):
        raise ValueError(f"region @{graph.name} takes {len(graph.inputs)} inputs, got {len(args)}")
    values = {v.name: _conform(v, a, env) for v, a in zip(graph.inputs, args)}
    _check_constraints(graph, env, f"region @{graph.name}")
    _run_ops(graph, values, KernelContext(env))
    return [values[v.name] for v in graph.outputs]


def _run_ops(graph, values: dict, ctx: KernelContext):
    """Run every op of ``graph`` in order on ``values`` (name -> value), dropping dead values."""
    release = _release_schedule(graph)
    checks = _assumption_checks(graph)
    for v in graph.inputs:
        _check_assumptions(checks.get(v.name, ()), values[v.name])
    for step, op in enumerate(graph.ops):
        args = [values[v.name] for v in op.operands]
        for value, result in zip(op.results, _run(op, args, ctx)):
            values[value.name] = result
            _check_assumptions(checks.get(value.name, ()), result)
        for name in release[step]:
            del values[name]


def _check_kernels(graph):
    """Report every op without a kernel at once, with counts and first locations."""
    missing, first = Counter(), {}
    for op in (op for g in walk_graphs(graph) for op in g.ops):
        if kernel_for(op.op) is None:
            missing[op.op.name] += 1
            first.setdefault(op.op.name, op.location)
    if missing:
        listing = "; ".join(f"{name} x{n} (first at {first[name]})" for name, n in sorted(missing.items()))
        raise KernelError(f"the interpreter has no kernel for: {listing}",
                          location=first[min(missing)], op_name=min(missing))


def _check_constraints(graph, env: dict, what: str = "the model"):
    """Every ledger fact the model (or a region) relies on must hold for these input shapes."""
    violations = graph.ledger.check(env)
    if violations:
        lines = [f"{v.message()} [{v.constraint.provenance.where()}: {v.constraint.provenance.reason}]"
                 for v in violations]
        raise InputError(f"the input shapes break constraints {what} relies on: " + "; ".join(lines))


def _release_schedule(graph) -> list:
    """For each op index, the values no later op needs (graph outputs are kept to the end)."""
    last = {v.name: -1 for v in graph.inputs}
    for step, op in enumerate(graph.ops):
        for v in list(op.operands) + list(op.results):
            last[v.name] = step
    keep = {v.name for v in graph.outputs}
    release = [[] for _ in graph.ops]
    for name, step in last.items():
        if name not in keep and step >= 0:
            release[step].append(name)
    return release


def _run(op, args: list, ctx: KernelContext) -> list:
    _check_budget(op, ctx.bindings)
    try:
        # IEEE float semantics (inf, NaN) are intended, as in the reference model: no numpy warnings
        with np.errstate(all="ignore"):
            results = list(kernel_for(op.op)(op, args, ctx))
        if len(results) != len(op.results):
            raise ValueError(f"the kernel returned {len(results)} results for {len(op.results)} values")
        return [_conform(value, result, ctx.bindings) for value, result in zip(op.results, results)]
    except TosaconvError:   # a budget refusal (limits.check_tensor) keeps its own exit code
        raise
    except Exception as e:   # noqa: BLE001 - any kernel failure becomes a located KernelError
        raise KernelError(f"while running {op.op.name} at {op.location}: {e}",
                          location=op.location, op_name=op.op.name) from e


def _assumption_checks(graph) -> dict:
    """value name -> the assumptions that count its non-zeros."""
    out: dict = {}
    for a in getattr(graph, "assumptions", ()):
        out.setdefault(a.data, []).append(a)
    return out


def _check_assumptions(assumptions, array):
    for a in assumptions:
        actual = a.actual(array)
        if actual != a.value:
            raise assumption_error(a.symbol, a.value, actual, a.location, a.shown or a.data, a.element)


def _check_budget(op, env: dict):
    """Refuse (exit 4) a result whose bound shape would break --max-tensor-bytes, before the kernel allocates it."""
    for value in op.results:
        if isinstance(value.type, IndexType):
            continue
        shape = [subs(d, env) for d in value.type.shape]
        if all(is_static(d) for d in shape):
            check_tensor(f"result '{value.name}' of {op.op.name}", shape, value.type.dtype.numpy,
                         location=op.location)


def _conform(value, result, env: dict):
    """Check one result against its IR type; Index results may bind a data-dependent symbol."""
    if isinstance(value.type, IndexType):
        return _conform_index(value, int(result), env)
    array = np.asarray(result)
    if array.dtype != value.type.dtype.numpy:
        raise ValueError(f"result '{value.name}' has dtype {array.dtype}, but its type is {value.type}")
    expected = [subs(d, env) for d in value.type.shape]
    if len(expected) != array.ndim or any(is_static(d) and d != n for d, n in zip(expected, array.shape)):
        shown = "x".join(str(d) if is_static(d) else dim_str(d) for d in expected)
        raise ValueError(f"result '{value.name}' has shape {list(array.shape)}, but its type says <{shown}>")
    return array


def _conform_index(value, result: int, env: dict) -> int:
    expected = subs(value.type.value, env)
    if is_static(expected):
        if expected != result:
            raise ValueError(f"Index result '{value.name}' is {result}, but its type says {expected}")
        return result
    name = bare_symbol(expected)
    if name is not None:
        env[name] = result      # a data-dependent symbol learns its value here
    return result


def _as_array(value):
    return np.asarray(value, dtype=np.int64) if isinstance(value, int) else value
