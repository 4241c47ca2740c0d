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
The first run of a plan checks every result; later runs call the kernels of
the steps it verified directly and find the constants already made (plan.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

import numpy as np

from ..diagnostics.assumption import assumption_error
from ..ir.types import IndexType
from ..symbolic.expr import dim_str, is_static, subs
from ..diagnostics import TosaconvError
from ..limits import check_tensor, max_tensor_bytes
from .binding import bare_symbol, bind_from_shapes
from .errors import InputError, KernelError, StepFailure
from .inputs import prepare_inputs
from .plan import Plan, Slot, Step, plan_for
from .registry import KernelContext

if TYPE_CHECKING:
    from ..ir.graph import Assumption, Graph, Value
    from .registry import KernelValue


def evaluate(graph: Graph, inputs: dict, bindings: Optional[dict] = None, state: Optional[dict] = None) -> dict:
    """Run ``graph`` on ``inputs`` (name -> array); return its outputs by ``graph.output_names``.

    ``state`` holds the program's variables (name -> array) and is updated in place, so passing the
    same dict to consecutive runs carries the state from one to the next (a streaming model); a
    variable missing from it starts at its declared initial value. Without it, every run starts fresh.
    """
    plan = plan_for(graph, _assumption_checks(graph))     # reports the ops without a kernel first
    values = prepare_inputs(graph, inputs)
    env = bind_from_shapes(graph, {name: a.shape for name, a in values.items()}, bindings)
    _check_constraints(graph, env)
    _run_ops(graph, values, KernelContext(env, {} if state is None else state), plan)
    return {name: _as_array(values[v.name]) for name, v in zip(graph.output_names, graph.outputs)}


def run_region(graph: Graph, args: list, bindings: dict) -> list:
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


def _run_ops(graph: Graph, values: dict, ctx: KernelContext, plan: Optional[Plan] = None) -> None:
    """Run every op of ``graph`` in order on ``values`` (name -> value), dropping dead values."""
    checks = _assumption_checks(graph)
    for v in graph.inputs:
        _check_assumptions(checks.get(v.name, ()), values[v.name])
    if plan is None:
        plan = plan_for(graph, checks)
    budget = max_tensor_bytes()
    # IEEE float semantics (inf, NaN) are intended, as in the reference model: no numpy warnings
    with np.errstate(all="ignore"):
        if plan.warm and budget >= plan.max_bytes:
            _run_warm(plan, values, ctx, budget)
        else:
            _run_cold(plan, values, ctx, budget)


def _run_cold(plan: Plan, values: dict, ctx: KernelContext, budget: int) -> None:
    """Every step with every check; the plan learns which steps to trust and keeps the constants."""
    for step in plan.steps:
        _run_step(step, values, ctx, budget, plan)
    plan.ready()


def _run_warm(plan: Plan, values: dict, ctx: KernelContext, budget: int) -> None:
    """The constants put in place at once, then each trusted step's kernel called without checks."""
    values.update(plan.constants)
    get = values.__getitem__
    for step in plan.run_steps:
        if step.trusted:
            try:
                results = step.call(step.op, [*map(get, step.operands)], ctx)
            except TosaconvError:   # a budget refusal (limits.check_tensor) keeps its own exit code
                raise
            except Exception as e:   # noqa: BLE001 - any kernel failure becomes a located KernelError
                raise _located(step, e) from e
            for name, result in zip(step.names, results):
                values[name] = result
            for name in step.release:
                del values[name]
        else:
            _run_step(step, values, ctx, budget)


def _run_step(step: Step, values: dict, ctx: KernelContext, budget: int, plan: Optional[Plan] = None) -> None:
    """One step with the budget, result and assumption checks; ``plan`` (in a cold run) learns from it."""
    args = [values[name] for name in step.operands]
    for slot, result in zip(step.results, _run(step, args, ctx, budget, plan)):
        values[slot.name] = result
        if slot.checks:
            _check_assumptions(slot.checks, result)
    for name in step.release:
        del values[name]


def _check_constraints(graph: Graph, env: dict, what: str = "the model") -> None:
    """Every ledger fact the model (or a region) relies on must hold for these input shapes."""
    violations = graph.ledger.check(env)
    if violations:
        lines = [f"{v.message()} [{v.constraint.provenance.where()}: {v.constraint.provenance.reason}]"
                 for v in violations]
        raise InputError(f"the input shapes break constraints {what} relies on: " + "; ".join(lines))


def _run(step: Step, args: list, ctx: KernelContext, budget: int, plan: Optional[Plan] = None) -> list:
    op = step.op
    _check_budget(step, ctx.bindings, budget)
    try:
        results = list(step.kernel(op, args, ctx))
        if len(results) != len(step.results):
            raise ValueError(f"the kernel returned {len(results)} results for {len(op.results)} values")
        conformed = [_conform_slot(slot, result, ctx.bindings) for slot, result in zip(step.results, results)]
    except TosaconvError:   # a budget refusal (limits.check_tensor) keeps its own exit code
        raise
    except Exception as e:   # noqa: BLE001 - any kernel failure becomes a located KernelError
        raise _located(step, e) from e
    if plan is not None:
        plan.learn(step, results, args)
    return conformed


def _located(step: Step, error: Exception) -> KernelError:
    """A kernel's failure as a KernelError naming the op and its source location (for a chained step's
    failure, the op it happened in: chains.py)."""
    op = step.op
    if isinstance(error, StepFailure):
        op, error = error.op, error.error
    return KernelError(f"while running {op.op.name} at {op.location}: {error}",
                       location=op.location, op_name=op.op.name)


def _assumption_checks(graph: Graph) -> dict:
    """value name -> the assumptions that count its non-zeros."""
    out: dict = {}
    for a in getattr(graph, "assumptions", ()):
        out.setdefault(a.data, []).append(a)
    return out


def _check_assumptions(assumptions: Iterable[Assumption], array: KernelValue) -> None:
    for a in assumptions:
        actual = a.actual(array)
        if actual != a.value:
            raise assumption_error(a.symbol, a.value, actual, a.location, a.shown or f"'{a.data}'", a.element)


def _check_budget(step: Step, env: dict, budget: int) -> None:
    """Refuse (exit 4) a result whose bound shape would break --max-tensor-bytes, before the kernel allocates it."""
    op = step.op
    for slot in step.results:
        if slot.index:
            continue
        if slot.nbytes is not None:
            if 0 <= slot.nbytes <= budget:
                continue
            shape = slot.shape
        else:
            shape = [subs(d, env) for d in slot.value.type.shape]
        if all(is_static(d) for d in shape):
            check_tensor(f"result '{slot.name}' of {op.op.name}", shape, slot.dtype, location=op.location)


def _conform_slot(slot: Slot, result: KernelValue, env: dict) -> KernelValue:
    """:func:`_conform` with the slot's static dtype and shape worked out in advance."""
    if slot.shape is None:
        return _conform(slot.value, result, env)
    array = result if type(result) is np.ndarray else np.asarray(result)
    if array.dtype != slot.dtype or array.shape != slot.shape:
        return _conform(slot.value, array, env)     # raises, with the full message
    return array


def _conform(value: Value, result: KernelValue, env: dict) -> KernelValue:
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


def _conform_index(value: Value, result: int, env: dict) -> int:
    expected = subs(value.type.value, env)
    if is_static(expected):
        if expected != result:
            raise ValueError(f"Index result '{value.name}' is {result}, but its type says {expected}")
        return result
    name = bare_symbol(expected)
    if name is not None:
        env[name] = result      # a data-dependent symbol learns its value here
    return result


def _as_array(value: KernelValue) -> np.ndarray:
    return np.asarray(value, dtype=np.int64) if isinstance(value, int) else value
