"""Write ``tosaconv/importers/onnx/onnx_schemas.json``: what the ONNX importer reads of every op schema of
the default domain, from the installed onnx package's ``onnx.defs`` (see
:mod:`tosaconv.importers.onnx.schema_facts`, which falls back to ``onnx.defs`` when the installed onnx is
not the version the table was made from)::

    python scripts/gen_onnx_schemas.py        # after upgrading onnx

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
    data = table()
    lines = [f"  {json.dumps(name)}: {json.dumps(entry)}" for name, entry in data["ops"].items()]
    with open(TABLE, "w", encoding="utf-8") as f:
        f.write('{"onnx": ' + json.dumps(data["onnx"]) + ', "ops": {\n' + ",\n".join(lines) + "\n}}\n")
    print(f"wrote {TABLE}: {len(lines)} ops (onnx {data['onnx']})")


if __name__ == "__main__":
    main()
