"""A location read back from a .tosa shows the text tosaconv wrote there, not that text quoted again
inside the TOSA op's name (issue 15: ``MATMUL 'MatMul 'm''``)."""
from __future__ import annotations

from tosaconv.ir.location import Location


def test_a_written_location_reads_back_as_written():
    assert str(Location("MATMUL", "MatMul 'm'", source="tosa")) == "MatMul 'm'"
    assert str(Location("ADD", "Add 'a' + Relu 'r'", source="tosa")) == "Add 'a' + Relu 'r'"


def test_a_bare_name_from_another_tool_is_quoted_after_the_tosa_op():
    assert str(Location("MATMUL", "layer_3", source="tosa")) == "MATMUL 'layer_3'"


def test_an_imported_location_is_unchanged():
    assert str(Location("MatMul", "m", "onnx")) == "MatMul 'm'"
