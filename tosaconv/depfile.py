"""Make-style dependency files (``--depfile OUT.d``): what a conversion wrote and what it read.

The file is one rule, ``TARGETS: PREREQUISITES``: the targets are every
output the command wrote (the depfile itself last, so that a Makefile rule
that makes the depfile reruns when an input only the depfile names
changes), the prerequisites every input it read (the model, an ONNX
model's external-data files, ``--bindings`` files and the ``--inputs``
archive). A build system that includes it (``-include out/*.d``
in a Makefile) re-runs the conversion when any input changes. Paths are
escaped the way GNU make reads them: a space or ``#`` gets a backslash,
``$`` is doubled.
"""
from __future__ import annotations

import os
from typing import Iterable


def escape(path: str) -> str:
    """``path`` as one word of a make rule."""
    return path.replace("$", "$$").replace("#", "\\#").replace(" ", "\\ ")


def depfile_text(targets: list[str], prerequisites: list[str]) -> str:
    """The rule ``targets: prerequisites`` (each list in order, without repeats), continued over lines."""
    lines = [escape(t) for t in dict.fromkeys(targets)]
    deps = [escape(p) for p in dict.fromkeys(prerequisites)]
    return " \\\n  ".join(lines) + ":" + "".join(f" \\\n  {d}" for d in deps) + "\n"


def inputs_read(model: str, binding_files: Iterable[str] = (), inputs_path: str | None = None) -> list[str]:
    """Every file a conversion of ``model`` reads: the model, its external data, the bindings files, the
    inputs archive."""
    return [model, *external_data_files(model), *binding_files, *([inputs_path] if inputs_path else [])]


def external_data_files(model: str) -> list[str]:
    """The side files an ``.onnx`` model keeps tensors in (paths as the model's directory joined with each
    location, in first-use order); none for any other format."""
    if os.path.splitext(model)[1].lower() != ".onnx":
        return []
    import onnx   # lazy: only --depfile on an ONNX model pays for it
    from onnx import external_data_helper
    proto = onnx.load(model, load_external_data=False)
    base = os.path.dirname(model)
    out = []
    for t in external_data_helper._get_all_tensors(proto):
        if external_data_helper.uses_external_data(t):
            location = {e.key: e.value for e in t.external_data}.get("location", "")
            out.append(os.path.join(base, location))
    return list(dict.fromkeys(out))
