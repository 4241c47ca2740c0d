"""The op table's completeness: every op has a shape rule, a kernel and an encoder.

The one op table (``tosaconv.ir.ops.OPS``) drives everything else. Each op
must have a shape rule and an interpreter kernel; each op that reaches a
``.tosa`` (``op.tosa`` set) must have an encoder; helper and data-dependent
ops must have none (they never reach a file) and must decay when bound. Every
op of the official TOSA schema is either produced by us or listed in
``UNSUPPORTED_TOSA`` with a reason.
"""
from __future__ import annotations

import pytest

from tosaconv.emit.codecs import CODECS
from tosaconv.emit.schema import OP_CODE
from tosaconv.interpreter.registry import kernel_for
from tosaconv.ir.ops import OPS, UNSUPPORTED_TOSA, Trait
from tosaconv.passes.decay import rule_for


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_has_shape_rule_and_kernel(name):
    op = OPS[name]
    assert callable(op.shape_rule)
    assert kernel_for(op) is not None, f"{name} has no interpreter kernel"


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if op.tosa))
def test_every_emitted_op_has_an_encoder(name):
    # CONST carries no attribute table: the writer stores its values as the tensor's data.
    assert OPS[name].tosa in CODECS or name == "CONST", f"{name} has no flatbuffer encoder"
    assert OPS[name].tosa in OP_CODE


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if op.tosa is None))
def test_helper_ops_never_reach_a_file_and_decay(name):
    op = OPS[name]
    assert op.has(Trait.SHAPE_HELPER) or op.has(Trait.DATA_DEPENDENT)
    index_result = op.has(Trait.INDEX_ARITH) or name in ("INDEX_CONST", "GET_DIM")
    assert index_result or rule_for(op) is not None, f"{name} has no decay rule"


def test_every_official_op_is_produced_or_listed_unsupported():
    produced = {op.tosa for op in OPS.values() if op.tosa}
    shape_ops = {n for n in OP_CODE if n.endswith("_SHAPE") or n == "DIM"}
    block_scaled = {n for n in OP_CODE if "BLOCK_SCALED" in n or n.endswith("_ADAPTIVE")
                    or n in ("ROW_GATHER", "MATMUL_T", "UNKNOWN")}
    missing = set(OP_CODE) - produced - set(UNSUPPORTED_TOSA) - shape_ops - block_scaled
    assert not missing, f"official ops neither produced nor listed as unsupported: {sorted(missing)}"
    assert not produced & set(UNSUPPORTED_TOSA)
