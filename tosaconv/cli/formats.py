"""The static program's output formats, chosen by the ``-o`` suffix: ``.tosa`` or ``.mlir``.

``convert``, ``specialize`` and ``convert --bind-grid`` write the static
program in the format the output's suffix names (case-insensitive): ``.tosa``
is the TOSA 1.0 flatbuffer, ``.mlir`` the same program as TOSA-dialect MLIR
text in MLIR's generic op form (:mod:`tosaconv.emit.mlir`). Any other suffix
is a usage error (exit 2) found before the model is even read, so a typo never
yields a file in a format nobody asked for. The symbolic program as text
(``.tosair``) is not a ``-o`` format of these commands: ``--ir`` and
``tosaconv import`` write it.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .. import api
from ..diagnostics import UsageError

if TYPE_CHECKING:
    from ..ir.graph import Graph
    from .common import Session

FORMATS = {".tosa": "tosa", ".mlir": "mlir"}   # suffix -> report "kind"
_DESCRIPTIONS = {".tosa": "TOSA 1.0 flatbuffer", ".mlir": "TOSA MLIR text"}


def output_kind(path: str, option: str = "-o") -> str:
    """The format ``path`` asks for; a UsageError naming the known suffixes for any other."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in FORMATS:
        return FORMATS[suffix]
    known = ", ".join(f"{s} ({d})" for s, d in _DESCRIPTIONS.items())
    found = f"the suffix '{suffix}'" if suffix else "no suffix"
    raise UsageError.one("E-OUTPUT-FORMAT", f"{option} '{path}' has {found}; tosaconv writes {known}",
                         hint="name the output OUT.tosa or OUT.mlir (the symbolic program as text is "
                              "written by --ir OUT.tosair)")


def emit_bytes(static: Graph, path: str) -> bytes:
    """The static program in the format of ``path``'s suffix."""
    return api.emit_mlir(static) if output_kind(path) == "mlir" else api.emit(static)


def emit_file(session: Session, static: Graph, path: str) -> tuple:
    """``(bytes, kind)`` of the static program for ``path``, timed as the session's emit stage (a
    ``.tosa``'s large constants are streamed into the file as it is written, not copied first)."""
    kind = output_kind(path)
    with session.stage("emit", "writing TOSA MLIR" if kind == "mlir" else "writing TOSA"):
        return (api.emit_mlir(static) if kind == "mlir" else api.emit(static, stream=True)), kind
