"""A PAD whose only reader slices back inside the padded input passes the input on, unpadded.

Exporters write a convolution's asymmetric "same" padding as a PAD after
the input and a SLICE that cuts the padded tensor back, then the conv's own
padding (PP-OCR: PAD by one row and column at the end, SLICE from 0 of the
input's size). The SLICE then reads only values the input already holds:
a slice of the padded array at ``start`` equals the input's slice at
``start - before`` when it lies inside the input. So a warm run's PAD may
return its input and the SLICE cut that instead, the same values without
the padded copy (30 us a call on det_small).

The plan (plan.py, once its first run is checked) does so for a trusted
PAD whose result is no output and has one reader, a trusted SLICE (no output either) reading
only inside the input, with no padding before (so the start is the same
on both), when the input does not die with an elementwise step that could
write into it (inplace.py): nothing can then change the input while the
SLICE's view of it is alive (the SLICE's result, a view, is never written
in place either).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .plan import Step
    from .registry import Arrays, KernelContext

_IN_PLACE = frozenset(("ADD", "SUB", "MUL", "CLAMP"))     # the kinds inplace.py may make write into an operand


def skip_pads_sliced_away(steps: list, readers: dict, outputs: set) -> None:
    """Make each PAD of ``steps`` that its only reader slices back inside the input return that input
    (see the module docstring); ``readers`` lists each value's reading steps (plan.readers_of), ``outputs``
    names the graph's outputs."""
    dies: dict = {}     # name -> the step after which it is dropped
    for step in steps:
        dies.update(dict.fromkeys(step.release, step))
    for step in steps:
        if step.opdef.name != "PAD" or not step.trusted or step.names[0] in outputs:
            continue
        mine, last = readers.get(step.names[0], []), dies.get(step.operands[0])
        # an operand is written in place only by the elementwise step it dies with (inplace.py)
        if (len(mine) == 1 and mine[0].names[0] not in outputs    # no output is a view of the input either
                and (last is None or last.opdef.name not in _IN_PLACE) and _slices_inside(step, mine[0])):
            step.call = _unpadded


def _slices_inside(pad: Step, reader: Step) -> bool:
    """True when ``reader`` is a trusted SLICE of ``pad``'s result that reads only inside ``pad``'s input,
    and ``pad`` adds nothing before any axis."""
    if reader.opdef.name != "SLICE" or not reader.trusted or list(reader.operands) != [pad.names[0]]:
        return False
    padding, shape = pad.op.attrs.padding, pad.op.operands[0].type.shape
    start, size = reader.op.attrs.start, reader.op.attrs.size
    if not set(map(type, (*padding, *shape, *start, *size))) <= {int}:
        return False
    if len(padding) != 2 * len(shape) or len(start) != len(shape) or len(size) != len(shape):
        return False
    return all(padding[2 * axis] == 0 and 0 <= start[axis] and start[axis] + size[axis] <= shape[axis]
               for axis in range(len(shape)))


def _unpadded(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    """PAD's input as its result: its reader slices only values the input holds."""
    return [args[0]]
