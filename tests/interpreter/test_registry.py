"""The kernel registry: every op in the op table has a kernel, named by its row of the table."""
from __future__ import annotations

import pytest

import tosaconv.interpreter  # noqa: F401 - registers every kernel
from tosaconv.interpreter.registry import kernel_for, registered_ops
from tosaconv.ir.ops import OPS, Op, _by_name


def test_every_op_in_the_table_has_a_kernel():
    missing = sorted(name for name, opdef in OPS.items() if kernel_for(opdef) is None)
    assert missing == []


def test_every_op_of_the_table_is_listed_with_a_kernel():
    assert registered_ops() == sorted(OPS)


def test_declaring_an_op_twice_fails():
    # one row per op, so an op cannot get two kernels (or two of anything)
    with pytest.raises(ValueError, match="op ADD declared twice"):
        _by_name((Op.ADD, Op.SUB, Op.ADD))
    assert kernel_for(Op.ADD).__name__ == "add"


def test_kernels_live_in_the_module_of_their_spec_chapter():
    chapters = {"CONV2D": "convolution", "RESCALE": "type_conversion", "CLAMP": "activation",
                "TABLE": "table", "GET_DIM": "shape_helpers", "RESIZE": "image", "CONST": "data_nodes"}
    for name, module in chapters.items():
        assert kernel_for(OPS[name]).__module__.endswith("." + module)
