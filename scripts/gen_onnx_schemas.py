"""Write ``tosaconv/importers/onnx/onnx_schemas.json``: what the ONNX importer reads of every op schema of
the default domain, from the installed onnx package's ``onnx.defs`` (see
:mod:`tosaconv.importers.onnx.schema_facts`, which falls back to ``onnx.defs`` when the installed onnx is
not the version the table was made from)::

    python scripts/gen_onnx_schemas.py        # after upgrading onnx
    python scripts/gen_onnx_schemas.py --other   # with another onnx installed: add its differences

The output holds one op per line (its versions as one JSON string, parsed only when a model uses the op),
so an onnx update shows as a readable diff.
"""
from __future__ import annotations

import json
import os
import sys

import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tosaconv.importers.onnx.schema_facts import TABLE, encode, facts_of  # noqa: E402


def table() -> dict:
    """``{"onnx": version, "ops": {op: JSON text of its versions, oldest first}}``."""
    schemas: dict = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain == "":
            schemas.setdefault(s.name, []).append(s)
    ops = {name: json.dumps([encode(facts_of(s)) for s in sorted(found, key=lambda s: s.since_version)],
                            separators=(",", ":"))
           for name, found in sorted(schemas.items())}
    return {"onnx": onnx.__version__, "ops": ops}


def main() -> None:
    if "--other" in sys.argv[1:]:
        return add_other()
    data = table()
    _write(data, {})
    print(f"wrote {TABLE}: {len(data['ops'])} ops (onnx {data['onnx']})")


def add_other() -> None:
    """``--other``: keep the table's own onnx version and add the installed one's differences from it (each
    op whose versions differ, None for one it lacks), so a process with either onnx reads the table."""
    with open(TABLE, encoding="utf-8") as f:
        old = json.load(f)
    new = table()
    if new["onnx"] == old["onnx"]:
        raise SystemExit(f"the table is already made from onnx {new['onnx']}; run without --other")
    ops = old["ops"]
    changed = {name: new["ops"].get(name) for name in sorted(set(ops) | set(new["ops"]))
               if new["ops"].get(name) != ops.get(name)}
    others = {**old.get("other", {}), new["onnx"]: changed}
    _write(old, others)
    print(f"wrote {TABLE}: onnx {old['onnx']}, and {len(changed)} ops that differ in onnx {new['onnx']}")


def _write(data: dict, others: dict) -> None:
    """One op per line; ``others``: other onnx versions' differing ops, by version, after the ops."""
    lines = [f"  {json.dumps(name)}: {json.dumps(entry)}" for name, entry in data["ops"].items()]
    tail = ""
    if others:
        versions = [f"  {json.dumps(version)}: {{\n" + ",\n".join(
            f"    {json.dumps(name)}: {json.dumps(entry)}" for name, entry in changed.items()) + "\n  }"
            for version, changed in sorted(others.items())]
        tail = ', "other": {\n' + ",\n".join(versions) + "\n}"
    with open(TABLE, "w", encoding="utf-8") as f:
        f.write('{"onnx": ' + json.dumps(data["onnx"]) + ', "ops": {\n' + ",\n".join(lines) + "\n}" + tail + "}\n")


if __name__ == "__main__":
    main()
