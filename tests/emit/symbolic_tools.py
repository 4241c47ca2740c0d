"""Test helper: the official tools' view of a symbolic (TOSA 1.1-draft) ``.tosa``.

:func:`validate_shape` runs ``tosa-opt --tosa-validate`` at the target
``profiles=pro_int,pro_fp extensions=...,shape,dynamic specification_version=1.1.draft``;
:func:`infer_shapes` runs the official ``infer_shapes`` with given input shapes
and returns the resolved file's bytes (read from the path it prints).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from tests.tosa_tools import run_tool

EXTENSIONS = "int16,int4,bf16,fp8e4m3,fp8e5m2,fft,variable,controlflow,doubleround,inexactround,shape,dynamic"


def validate_shape(tosa: Path) -> tuple:
    """``(accepted, error lines)`` of tosa-opt validating ``tosa`` at the 1.1-draft dynamic target."""
    target = f"profiles=pro_int,pro_fp extensions={EXTENSIONS} specification_version=1.1.draft"
    proc = run_tool("tosa-opt", [f"--tosa-deserialize=tosa-flatbuffer-filename={tosa}", "/dev/null",
                                 f"--tosa-attach-target={target}", "--tosa-validate=strict-op-spec-alignment",
                                 "-o", "/dev/null"])
    errors = [line for line in proc.stderr.splitlines() if "error" in line.lower()]
    return proc.returncode == 0 and not errors, errors or [proc.stderr[-2000:]]


def infer_shapes(tosa: Path, shapes: dict, workdir: Path) -> bytes:
    """The bytes of ``tosa`` with every -1 dim resolved by the official ``infer_shapes``."""
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    cfg = work / "infer.json"
    cfg.write_text(json.dumps({"tosa_file": str(Path(tosa).resolve()),
                               "shapes": {k: [int(d) for d in v] for k, v in shapes.items()}}))
    proc = run_tool("infer_shapes", [cfg], cwd=work)
    found = re.search(r'new file saved as "([^"]+)"', proc.stdout + proc.stderr)
    if proc.returncode != 0 or not found:
        raise RuntimeError(f"infer_shapes exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return Path(found.group(1)).read_bytes()
