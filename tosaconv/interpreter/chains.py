"""Chained warm-run steps: a step whose one result only the next step reads runs that step in the same call.

A warm run (evaluator.py) pays about a microsecond of Python per step: the
operands looked up by name, the results stored by name, the dead values
dropped. Conv nets are mostly short chains (a convolution and the ADD of its
batch norm's shift, an ADD and its CLAMP, ERF and GELU's ADD), whose
intermediate value is never looked at by anyone else. :func:`chain_steps`
joins such neighbours of a warm plan: the joined step calls the first
step's kernel, hands its result straight to the second step's kernel, and
stores only the second's results.

Nothing is reordered and nothing is computed differently: the same kernels
run on the same arrays in the same order, so the results are the same bits.
Two neighbours ``S`` then ``A`` are joined when both are trusted (the first
run checked them), ``S`` has one result ``x`` that is not a graph output,
``A`` is its only reader (``x`` dies with it), and neither keeps its
operands (state writes, regions). A failure in ``A``'s kernel is still
reported as ``A``'s (:class:`~.errors.StepFailure`).
"""
from __future__ import annotations

import copy
from operator import itemgetter
from typing import TYPE_CHECKING, Callable

from ..diagnostics import TosaconvError
from .errors import StepFailure
from .inplace import keeps_operands

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .plan import Step
    from .registry import Arrays, Kernel, KernelContext


def chain_steps(steps: list, readers: dict, outputs: set) -> list:
    """``steps`` (a warm plan's, in order) with each run of joinable neighbours (see the module docstring)
    joined into one step; ``readers`` lists each value's reading steps among them (plan.readers_of),
    ``outputs`` names the graph's outputs. The given steps are not changed."""
    chained: list = []
    for step in steps:
        last = chained[-1] if chained else None
        if last is not None and _joinable(last, step, readers, outputs):
            if not isinstance(last.call, _Chain):
                last = chained[-1] = _chain_of(last)
            _extend(last, step)
        else:
            chained.append(step)
    return chained


def _joinable(first: Step, second: Step, readers: dict, outputs: set) -> bool:
    """True when ``second`` is the only reader of ``first``'s one result, which is no output, and both steps
    are trusted and keep none of their operands."""
    if len(first.names) != 1 or not (first.trusted and second.trusted):
        return False
    name = first.names[0]
    return (name not in outputs and _only(readers.get(name), second) and name in second.release
            and not keeps_operands(first) and not keeps_operands(second))


def _only(steps: list | None, step: Step) -> bool:
    """``steps`` is the one step ``step`` (compared by identity)."""
    return steps is not None and len(steps) == 1 and steps[0] is step


class _Chain:
    """The call of a joined step: its first step's call on the first ``count`` args, then each link's call on
    the previous result and its other args; a failure in a link is reported as that link's op's."""

    __slots__ = ("op", "call", "count", "links")

    def __init__(self, op: Operation, call: Kernel, count: int) -> None:
        self.op, self.call, self.count = op, call, count
        # (op, call, pick): pick is None for a link whose one operand is the previous result, else it picks the
        # link's operands from the joined args followed by the previous result (index -1)
        self.links: list = []

    def __call__(self, op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        results = self.call(self.op, args[:self.count], ctx)
        work = [*args, None]
        for link_op, call, pick in self.links:
            work[-1] = results[0]
            try:
                results = call(link_op, [work[-1]] if pick is None else list(pick(work)), ctx)
            except (TosaconvError, StepFailure):   # a budget refusal keeps its own exit code; a fused gate's
                raise                               # link (gates.py) is reported at its own op
            except Exception as e:     # noqa: BLE001 - reported as this link's op's failure
                raise StepFailure(link_op, e) from e
        return results


def _chain_of(step: Step) -> Step:
    """A copy of ``step`` whose call is a chain of that step alone, ready to be extended."""
    joined = copy.copy(step)
    joined.call = _Chain(step.op, step.call, len(step.operands))
    joined.operands = list(step.operands)
    joined.release = list(step.release)
    return joined


def _extend(joined: Step, second: Step) -> None:
    """Append ``second`` to the chain of ``joined``: it takes ``joined``'s one result and gives the results."""
    name = joined.names[0]
    sources = []
    for operand in second.operands:
        if operand == name:
            sources.append(-1)
        else:
            sources.append(len(joined.operands))
            joined.operands.append(operand)
    pick = None if sources == [-1] else _picker(sources)
    joined.call.links.append((second.op, second.call, pick))
    joined.names = second.names
    joined.release = [n for n in joined.release if n != name] + [n for n in second.release if n != name]


def _picker(sources: list) -> Callable[[list], tuple]:
    """A function taking the items at ``sources`` of a list, as a tuple (itemgetter, one item included)."""
    if len(sources) == 1:
        index = sources[0]
        return lambda work: (work[index],)
    return itemgetter(*sources)
