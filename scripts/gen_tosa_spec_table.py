"""Write tosaconv's table of TOSA profiles, extensions and levels from the spec's ``tosa.xml``.

The TOSA specification (public repository ``arm/tosa-specification``, tag ``v1.0.1``) lists, for every
operator, its arguments and one ``typesupport`` row per type mode with the profile(s) or extension(s)
that include it, and, per argument, the level limits its pseudocode checks with ``LEVEL_CHECK``. This
script reads that file and writes ``tosaconv/analysis/tosa_spec.json``, the data
:mod:`tosaconv.analysis` works from, so the facts come from the spec and never from a hand copy::

    python scripts/gen_tosa_spec_table.py path/to/tosa.xml [-o tosaconv/analysis/tosa_spec.json]

The output holds one op per line, so a spec update shows as a readable diff.
"""
from __future__ import annotations

import argparse
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tosaconv" / "analysis" / "tosa_spec.json"
TENSOR_ARGS = ("tensor_t", "tensor_list_t")
_COMPONENTS = re.compile(r"^\[([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)+)\]")


def read_spec(path: str) -> dict:
    root = ET.parse(path).getroot()
    version = root.find("version").attrib
    enums = _enum_extensions(root)
    return {
        "version": f"{version['major']}.{version['minor']}.{version['patch']}",
        "profiles": {p.get("name"): p.get("description") for p in root.iter("profile")},
        "extensions": {e.get("name"): {"description": e.get("description"), "status": e.get("status"),
                                       "profiles": [p.text for p in e.findall("profile_supported")]}
                       for e in root.iter("profile_extension")},
        "levels": {lv.get("name"): {k.upper(): int(v) for k, v in lv.attrib.items() if k != "name"}
                   for lv in root.iter("level")},
        "ops": {op.findtext("name"): _operator(op, enums) for op in root.iter("operator")},
    }


def _enum_extensions(root) -> dict:
    """enum type -> {value name -> extension} for enum values that need an extension (rounding modes)."""
    out: dict = {}
    for enum in root.iter("enum"):
        needs = {v.get("name"): v.get("extension") for v in enum.iter("enumval") if v.get("extension")}
        if needs:
            out[enum.get("name")] = needs
    return out


def _operator(op, enums: dict) -> dict:
    args = list(op.find("arguments"))
    type_vars = [t.get("name") for t in op.find("types")] if op.find("types") is not None else []
    return {
        "inputs": [_arg(a) for a in args if a.get("category") == "input" and a.get("type") in TENSOR_ARGS],
        "outputs": [_arg(a) for a in args if a.get("category") == "output"],
        "typed_attributes": [_arg(a) for a in args if a.get("category") == "attribute"
                             and a.get("type") == "tensor_t" and a.get("tensor-element-type") in type_vars],
        "components": _components(args),
        "enum_extensions": {a.get("name"): enums[a.get("type")] for a in args if a.get("type") in enums},
        "limits": [[a.get("name"), lim.get("value"), lim.get("limit")]
                   for a in args for lim in a.findall("levellimit")],
        "type_vars": type_vars,
        "types": [_row(ts, type_vars) for ts in op.findall("typesupport")],
    }


def _arg(a) -> list:
    """[name, kind (tensor_t or tensor_list_t), element type variable, shape text]."""
    return [a.get("name"), a.get("type"), a.get("tensor-element-type"), a.get("shape")]


def _components(args) -> dict:
    """Names of the elements of array arguments, from descriptions such as ``[stride_y, stride_x]``."""
    out = {}
    for a in args:
        m = _COMPONENTS.match((a.findtext("description") or "").strip())
        if m:
            out[a.get("name")] = [s.strip() for s in m.group(1).split(",")]
    return out


def _row(ts, type_vars: list) -> list:
    """[mode, [type of each type variable], [[profile or extension, ...] for each alternative]]."""
    types = [ts.get(v, "") for v in type_vars]
    alternatives = [[p.get("name")] + ([p.get("and_name")] if p.get("and_name") else [])
                    for p in ts.findall("op_profile")]
    return [ts.get("mode"), types, alternatives]


def dump(spec: dict) -> str:
    """JSON with one op (and one level, profile, extension) per line."""
    lines = ["{"]
    for key in ("version", "profiles", "extensions", "levels"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(spec[key])},")
    ops = [f"    {json.dumps(name)}: {json.dumps(op)}" for name, op in sorted(spec["ops"].items())]
    lines.append('  "ops": {\n' + ",\n".join(ops) + "\n  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tosa_xml", help="the spec's tosa.xml")
    parser.add_argument("-o", "--output", default=str(DEFAULT_OUT))
    args = parser.parse_args(argv)
    Path(args.output).write_text(dump(read_spec(args.tosa_xml)), encoding="utf-8")


if __name__ == "__main__":
    main()
