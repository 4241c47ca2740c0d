"""The kernel registry: every op in the op table has a kernel, and registration is explicit."""
from __future__ import annotations

import pytest

import tosaconv.interpreter  # noqa: F401 - registers every kernel
from tosaconv.interpreter.registry import kernel, kernel_for, registered_ops
from tosaconv.ir.ops import OPS, Op


def test_every_op_in_the_table_has_a_kernel():
    missing = sorted(name for name, opdef in OPS.items() if kernel_for(opdef) is None)
    assert missing == []


def test_no_kernel_for_an_op_outside_the_table():
    assert set(registered_ops()) <= set(OPS)


def test_registering_a_second_kernel_for_an_op_fails():
    with pytest.raises(ValueError, match="two kernels for ADD"):
        @kernel(Op.ADD)
        def another_add(op, args, ctx):
            return []
    assert kernel_for(Op.ADD).__name__ == "add"


def test_kernels_live_in_the_module_of_their_spec_chapter():
    chapters = {"CONV2D": "convolution", "RESCALE": "type_conversion", "CLAMP": "activation",
                "TABLE": "table", "GET_DIM": "shape_helpers", "RESIZE": "image", "CONST": "data_nodes"}
    for name, module in chapters.items():
        assert kernel_for(OPS[name]).__module__.endswith("." + module)
