"""Which TOSA 1.0 profiles and extensions a program needs, op by op, from the spec's type tables.

Every op of the program (regions of COND_IF and WHILE_LOOP included) is looked up in the spec table
(:mod:`.spec`): its operand and result element types select the type-support rows that fit, and each
row names the alternatives that include it (``PRO-INT`` *or* ``PRO-FP`` for an int32 ADD; ``PRO-INT``
*and* ``EXT-VARIABLE`` for an int8 VARIABLE). An enum attribute value can add an extension (RESCALE's
``DOUBLE_ROUND`` needs ``EXT-DOUBLEROUND``). The program needs every requirement that some op has no
way around, plus, for ops with a choice, their first alternative unless another is already needed.

A symbolic program still holds helper and data-dependent ops (no TOSA op yet); each counts by its
tensors' element types (any float: ``PRO-FP``), and IF/LOOP may remain COND_IF/WHILE_LOOP after
binding, so ``EXT-CONTROLFLOW`` is *possible*; the answer is then marked inexact. Specialize for the
exact answer.
"""
from __future__ import annotations

import itertools
from dataclasses import field
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING

from ..ir.graph import walk_graphs
from ..ir.ops import Trait
from ..ir.types import TensorType
from . import spec as S

if TYPE_CHECKING:
    from ..ir.graph import Graph, Operation

PRO_INT, PRO_FP = "PRO-INT", "PRO-FP"


@dataclass(frozen=True)
class OpNeed:
    """What one op needs: alternatives, each a frozenset of profile/extension names (any one will do)."""

    op: object                 # the Operation
    mode: str                  # the spec's type mode ("signed 8", "fp32"...), or why there is none
    alternatives: tuple
    exact: bool = True         # False for an op that has no TOSA form yet (symbolic programs)


@dataclass
class Requirements:
    """The profiles and extensions a program needs, and which ops need each."""

    needs: list                                   # OpNeed for every op, regions included
    chosen: frozenset = frozenset()
    uses: dict = field(default_factory=dict)       # name -> [OpNeed] whose chosen alternative holds it
    unsupported: list = field(default_factory=list)  # OpNeed with no alternative: no profile has them
    possible: dict = field(default_factory=dict)   # name -> why a symbolic program may need it

    @property
    def profiles(self) -> list:
        return sorted(n for n in self.chosen if n.startswith("PRO-"))

    @property
    def extensions(self) -> list:
        return sorted(n for n in self.chosen if n.startswith("EXT-"))

    @property
    def exact(self) -> bool:
        return all(n.exact for n in self.needs)


def requirements(graph: Graph) -> Requirements:
    needs = [op_need(op) for g in walk_graphs(graph) for op in g.ops]
    req = Requirements(needs)
    req.chosen = _choose(needs)
    for need in needs:
        alt = chosen_alternative(need, req.chosen)
        if alt is None:
            req.unsupported.append(need)
        for name in alt or ():
            req.uses.setdefault(name, []).append(need)
    regions = [need for need in needs if not need.exact and need.op.op.has(Trait.REGION)]
    req.possible = {}
    if regions and "EXT-CONTROLFLOW" not in req.chosen:   # named by the last such op, as before
        last = regions[-1].op
        req.possible["EXT-CONTROLFLOW"] = f"{last.op.name} at {last.location} may stay a region after binding"
    return req


def op_need(op: Operation) -> OpNeed:
    entry = S.op_spec(op.op.tosa) if op.op.tosa else None
    if entry is None:
        return _by_element_types(op)
    bound = S.type_bindings(op, entry)
    rows = S.matching_rows(entry, bound)
    if not rows:
        types = ", ".join(f"{k}={v}" for k, v in sorted(bound.items()))
        return OpNeed(op, f"no type mode of {op.op.tosa} has {types}", ())
    extra = _enum_extensions(op, entry)
    return OpNeed(op, rows[0][0], tuple(frozenset(alt) | extra for alt in rows[0][2]))


def _enum_extensions(op: Operation, entry: dict) -> frozenset:
    """Extensions an attribute's enum value needs (RESCALE rounding_mode DOUBLE_ROUND: EXT-DOUBLEROUND)."""
    out = set()
    for attr, values in entry["enum_extensions"].items():
        value = getattr(op.attrs, attr, None)
        if value in values:
            out.add(values[value])
    return frozenset(out)


def _by_element_types(op: Operation) -> OpNeed:
    """An op with no TOSA form (a helper or data-dependent op of a symbolic program) needs what
    holding its tensors needs: the spec's CONST row for each element type (fp32: PRO-FP; bf16:
    EXT-BF16; i8: PRO-INT or PRO-FP), one choice per type, keeping the smallest combinations."""
    dtypes = sorted({v.type.dtype for v in [*op.operands, *op.results]
                     if isinstance(v.type, TensorType) and v.type.dtype in S.SPEC_TYPE}, key=lambda d: d.value)
    const = S.op_spec("CONST")
    choices = [S.matching_rows(const, {"out_t": S.SPEC_TYPE[d]})[0][2] for d in dtypes]
    combos = list(dict.fromkeys(frozenset().union(*map(frozenset, pick)) for pick in itertools.product(*choices)))
    smallest = tuple(c for c in combos if not any(o < c for o in combos))   # in the spec's order
    return OpNeed(op, "no TOSA form yet: counted by its element types", smallest, exact=False)


def _choose(needs: list) -> frozenset:
    """Everything some op cannot do without, then the first alternative of each op not yet covered."""
    chosen = set()
    for need in needs:
        if need.alternatives:
            chosen |= frozenset.intersection(*need.alternatives)
    for need in needs:
        if need.alternatives and chosen_alternative(need, chosen) is None:
            chosen |= need.alternatives[0]
    return frozenset(chosen)


def chosen_alternative(need: OpNeed, chosen: frozenset) -> frozenset | None:
    return next((alt for alt in need.alternatives if alt <= chosen), None)


def allowed_by(profile: str, alternative: frozenset) -> bool:
    """Whether an implementation of ``profile`` alone (with any of its extensions) covers ``alternative``."""
    extensions = S.spec()["extensions"]
    return all(n == profile or profile in extensions.get(n, {}).get("profiles", ()) for n in alternative)


def outside_profile(req: Requirements, profile: str) -> list:
    """The OpNeeds that no alternative within ``profile`` (and its extensions) covers."""
    return [n for n in req.needs if not any(allowed_by(profile, alt) for alt in n.alternatives)]
