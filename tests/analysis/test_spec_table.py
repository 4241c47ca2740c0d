"""The spec table: what the generator reads from tosa.xml, and that it covers tosaconv's op table.

The generator is run on a small tosa.xml written here (one operator with two type modes, an AND of
two requirements, a level limit, named attribute elements and an enum value that needs an
extension). The committed ``tosa_spec.json`` must hold every TOSA op of ``tosaconv.ir.ops`` with
operands in the spec's order, and every name its level limits use must be one tosaconv can fill.
"""
from __future__ import annotations

import ast
import dataclasses
import re
import sys
from pathlib import Path

from tosaconv.analysis.spec import spec
from tosaconv.ir.ops import OPS, UNSUPPORTED_TOSA, OperandKind

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import gen_tosa_spec_table as gen  # noqa: E402

XML = """<?xml version="1.0" encoding="UTF-8"?>
<tosa>
  <version major="1" minor="0" patch="9" draft="false"/>
  <profiles><profile profile="Integer" name="PRO-INT" status="Complete" description="ints"/></profiles>
  <profile_extensions>
    <profile_extension name="EXT-X" description="x" status="Experimental">
      <profile_supported>PRO-INT</profile_supported>
    </profile_extension>
  </profile_extensions>
  <levels><level name="8K" max_rank="6" max_kernel="8192">Level 8K</level></levels>
  <operators><operatorgroup name="g"><operator>
    <name>POOL</name>
    <arguments>
      <argument category="input" name="input" type="tensor_t" shape="[N,H,W,C]" tensor-element-type="in_t">
        <description>Input</description><levellimit value="rank(shape)" limit="MAX_RANK"/>
      </argument>
      <argument category="attribute" name="kernel" type="tensor_t" shape="[2]" tensor-element-type="i32_t">
        <description>[kernel_y, kernel_x]</description><levellimit value="kernel_y" limit="MAX_KERNEL"/>
      </argument>
      <argument category="attribute" name="mode" type="mode_t" shape="-" tensor-element-type="-">
        <description>Mode</description>
      </argument>
      <argument category="output" name="output" type="tensor_t" shape="shape" tensor-element-type="out_t">
        <description>Output</description>
      </argument>
    </arguments>
    <types><type name="in_t"/><type name="out_t"/></types>
    <typesupport mode="signed 8" in_t="i8_t" out_t="i8_t"><op_profile name="PRO-INT"/></typesupport>
    <typesupport mode="signed 16" in_t="i16_t" out_t="i32_t">
      <op_profile name="PRO-INT" and_name="EXT-X"/><op_profile name="PRO-FP"/>
    </typesupport>
  </operator></operatorgroup></operators>
  <enum name="mode_t" description="m"><enumval value="1" name="PLAIN" description="p"/>
    <enumval value="2" name="FANCY" description="f" extension="EXT-X"/></enum>
</tosa>
"""


def test_generator_reads_every_fact_the_analysis_uses(tmp_path):
    (tmp_path / "tosa.xml").write_text(XML)
    out = gen.read_spec(str(tmp_path / "tosa.xml"))
    assert out["version"] == "1.0.9"
    assert out["extensions"] == {"EXT-X": {"description": "x", "status": "Experimental", "profiles": ["PRO-INT"]}}
    assert out["levels"] == {"8K": {"MAX_RANK": 6, "MAX_KERNEL": 8192}}
    assert out["ops"]["POOL"] == {
        "inputs": [["input", "tensor_t", "in_t", "[N,H,W,C]"]],
        "outputs": [["output", "tensor_t", "out_t", "shape"]],
        "typed_attributes": [],
        "components": {"kernel": ["kernel_y", "kernel_x"]},
        "enum_extensions": {"mode": {"FANCY": "EXT-X"}},
        "limits": [["input", "rank(shape)", "MAX_RANK"], ["kernel", "kernel_y", "MAX_KERNEL"]],
        "type_vars": ["in_t", "out_t"],
        "types": [["signed 8", ["i8_t", "i8_t"], [["PRO-INT"]]],
                  ["signed 16", ["i16_t", "i32_t"], [["PRO-INT", "EXT-X"], ["PRO-FP"]]]],
    }
    (tmp_path / "out.json").write_text(gen.dump(out))
    assert gen.json.loads((tmp_path / "out.json").read_text()) == out


def _tosa_ops() -> dict:
    return {op.tosa: op for op in OPS.values() if op.tosa is not None}


def test_the_table_holds_every_tosa_op_we_write_and_nothing_we_do_not_know_about():
    ops = set(spec()["ops"])
    assert set(_tosa_ops()) <= ops
    # CONST_SHAPE is written by the emitter for shape attributes; the rest are listed as not produced
    assert ops - set(_tosa_ops()) - set(UNSUPPORTED_TOSA) == {"CONST_SHAPE"}


def _same_name(ours: str, theirs: str) -> bool:
    """``input`` and ``input1``, ``a`` and ``A``, ``inputs`` and ``input_list`` name the same argument."""
    ours, theirs = ours.lower(), theirs.lower()
    return theirs in (ours, ours + "1", ours.rstrip("s") + "_list")


def test_our_operands_are_the_spec_inputs_in_the_spec_order():
    for name, op in _tosa_ops().items():
        inputs = [a[0] for a in spec()["ops"][name]["inputs"]]
        paired = [o for o in op.operands if o.kind is not OperandKind.INDEX]   # RESHAPE's symbols
        assert all(_same_name(o.name, t) for o, t in zip(paired, inputs)), (name, op.operands, inputs)


def _names(expression: str) -> set:
    tree = ast.parse(expression, mode="eval")
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - calls


def _fillable(op, entry: dict) -> set:
    """Names tosaconv binds for ``op``: shapes and dims of the paired arguments, attribute elements."""
    paired = len([o for o in op.operands if o.kind is not OperandKind.INDEX])
    args = entry["inputs"][:paired] + entry["outputs"] + entry["typed_attributes"]
    out = {a[0] for a in args if a[1] == "tensor_list_t"}
    for _, _, _, shape in args:
        out |= set(re.findall(r"[A-Za-z_]\w*", shape))
    fields = {f.name for f in dataclasses.fields(op.attrs)}
    for attr, names in entry["components"].items():
        if attr in fields:
            out |= set(names)
    return out


def test_every_name_a_level_limit_uses_is_one_we_fill():
    for name, op in _tosa_ops().items():
        entry = spec()["ops"][name]
        for _, expression, _ in entry["limits"]:
            assert _names(expression) <= _fillable(op, entry), (name, expression)
