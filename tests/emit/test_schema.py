"""Our ``schemas/tosa.fbs`` has the official wire format, and ``schema.py`` follows it.

A small parser reads both schema files (comments dropped) into enums (names
and values in order, with the underlying type), unions (member order) and
tables (field names, types, defaults and ``force_align``, in order), and the
test asserts those are identical. The official ``flatc`` must accept our file
and decode one of our ``.tosa`` files with it. Finally the enum codes, slot
numbers and attribute layouts hard-coded in ``tosaconv/emit/schema.py`` are
checked against our schema.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.tosa_tools import run_tool, tools_bin
from tosaconv.emit import schema as S
from tosaconv.emit import write_tosa
from tosaconv.ir.ops import OPS

from .cases import CASES

OURS = Path(__file__).resolve().parents[2] / "schemas" / "tosa.fbs"
_BLOCK = re.compile(r"\b(enum|union|table)\s+(\w+)\s*(?::\s*(\w+))?\s*\{(.*?)\}", re.S)
_FIELD = re.compile(r"(\w+)\s*:\s*(\[?\s*\w+\s*\]?)\s*(?:=\s*([^\s(]+))?\s*(?:\((.*)\))?\s*\Z", re.S)


def parse_fbs(text: str) -> dict:
    text = re.sub(r"//[^\n]*", "", text)
    out = {"enum": {}, "union": {}, "table": {}}
    for kind, name, base, body in _BLOCK.findall(text):
        parse = {"enum": _enum, "union": _union, "table": _table}[kind]
        out[kind][name] = parse(body, base)
    out["root_type"] = re.search(r"root_type\s+(\w+)", text).group(1)
    out["file_identifier"] = re.search(r'file_identifier\s+"(\w+)"', text).group(1)
    return out


def _items(body: str, sep: str) -> list:
    return [item.strip() for item in body.split(sep) if item.strip()]


def _enum(body: str, base: str):
    values, nxt = [], 0
    for item in _items(body, ","):
        name, _, value = (p.strip() for p in item.partition("="))
        nxt = int(value) if value else nxt
        values.append((name, nxt))
        nxt += 1
    return base, values


def _union(body: str, base: str):
    return _items(body, ",")


def _table(body: str, base: str):
    fields = []
    for item in _items(body, ";"):
        m = _FIELD.match(item)
        assert m, f"cannot parse field {item!r}"
        name, type_, default, attrs = m.groups()
        align = re.search(r"force_align\s*:\s*(\d+)", attrs or "")
        fields.append((name, re.sub(r"\s+", "", type_), default, align and int(align.group(1)),
                       "required" in (attrs or "")))
    return fields


@pytest.fixture(scope="module")
def ours():
    return parse_fbs(OURS.read_text())


@pytest.fixture(scope="module")
def official():
    return parse_fbs((tools_bin() / "tosa.fbs").read_text())


def test_parser_sees_the_whole_schema(official):
    text = (tools_bin() / "tosa.fbs").read_text()
    for kind in ("enum", "union", "table"):
        assert len(official[kind]) == len(re.findall(rf"^{kind}\s", text, re.M)), kind
    assert len(official["union"]["Attribute"]) == len(official["enum"]["Op"][1]) - 1 > 90
    assert ("data", "[ubyte]", None, 8, False) in official["table"]["TosaTensor"]
    assert ("version", "Version", None, None, True) in official["table"]["TosaGraph"]


@pytest.mark.parametrize("kind", ["enum", "union", "table"])
def test_wire_format_matches_official_schema(ours, official, kind):
    assert sorted(ours[kind]) == sorted(official[kind])
    for name in official[kind]:
        assert ours[kind][name] == official[kind][name], f"{kind} {name} differs"


def test_root_and_identifier_match(ours, official):
    assert (ours["root_type"], ours["file_identifier"]) == (official["root_type"], official["file_identifier"])


def test_union_members_pair_with_op_codes(ours):
    ops = [n for n, _ in ours["enum"]["Op"][1]][1:]
    members = ours["union"]["Attribute"]
    assert len(ops) == len(members)
    for op, member in zip(ops, members):
        assert member.lower().startswith(op.replace("_", "").lower()[:4]), (op, member)


def test_official_flatc_compiles_our_schema(tmp_path):
    proc = run_tool("flatc", ["--python", "-o", tmp_path, OURS])
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "tosa" / "TosaGraph.py").exists()


def test_official_flatc_decodes_our_file_with_our_schema(tmp_path):
    model = tmp_path / "pad.tosa"
    model.write_bytes(write_tosa(CASES["pad"]().graph))
    proc = run_tool("flatc", ["--json", "--strict-json", "--raw-binary", "-o", tmp_path, OURS, "--", model])
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "pad.json").read_text())
    assert doc["version"] == {"_major": 1, "_minor": 0, "_patch": 0, "_draft": False}
    ops = [op["op"] for op in doc["regions"][0]["blocks"][0]["operators"]]
    assert ops == ["CONST_SHAPE", "CONST", "PAD"]


# -- schema.py against schemas/tosa.fbs --------------------------------------------

def _names(ours, enum: str) -> tuple:
    return tuple(n for n, _ in ours["enum"][enum][1])


def test_enum_codes(ours):
    assert S.OP_NAMES == _names(ours, "Op")
    assert S.RESIZE_MODES == _names(ours, "ResizeMode")
    assert S.NAN_MODES == _names(ours, "NanPropagationMode")
    assert S.ROUNDING_MODES == _names(ours, "RoundingMode")
    dtypes = dict(ours["enum"]["DType"][1])
    assert all(dtypes[dt.name] == code for dt, code in S.DTYPE_CODE.items())
    assert dtypes["SHAPE"] == S.SHAPE_CODE


def _slots(fields) -> list:
    """Slot names of a table: a union field takes two slots, ``<name>_type`` then ``<name>``."""
    out = []
    for name, type_, *_ in fields:
        out += [name + "_type", name] if type_ == "Attribute" else [name]
    return [n.lstrip("_") for n in out]


@pytest.mark.parametrize("table, cls", [
    ("TosaGraph", S.GraphSlot), ("Version", S.VersionSlot), ("TosaRegion", S.RegionSlot),
    ("TosaBasicBlock", S.BlockSlot), ("TosaOperator", S.OperatorSlot), ("TosaTensor", S.TensorSlot),
    ("TosaShape", S.ShapeSlot), ("OpLocation", S.LocationSlot)])
def test_slot_numbers(ours, table, cls):
    slots = _slots(ours["table"][table])
    assert cls.COUNT == len(slots)
    for attr in vars(cls):
        if attr.isupper() and attr not in ("COUNT", "DEFAULTS"):
            assert slots[getattr(cls, attr)] == attr.lower(), f"{cls.__name__}.{attr}"


_KINDS = {"int32": S.INT32, "bool": S.BOOL, "[int32]": S.INT32_VEC, "[ubyte]": S.BYTES}


def test_attribute_layouts(ours):
    members = ours["union"]["Attribute"]
    for op_name in sorted(set(S.ATTR_LAYOUTS) | {o.tosa for o in OPS.values() if o.tosa}):
        fields = ours["table"][members[S.OP_CODE[op_name] - 1]]
        expected = [(name, _KINDS.get(type_, S.ENUM if type_ in ours["enum"] else type_))
                    for name, type_, *_ in fields]
        assert list(S.attr_layout(op_name)) == expected, op_name


def test_every_tosa_op_of_the_ir_has_a_codec():
    from tosaconv.emit.codecs import CODECS
    missing = [name for name, op in OPS.items() if op.tosa and op.tosa != "CONST" and op.tosa not in CODECS]
    assert missing == []
    assert all(op.tosa == name for name, op in OPS.items() if op.tosa)  # the reader relies on this
