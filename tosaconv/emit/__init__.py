"""TOSA 1.0 flatbuffers: write a static IR graph as a ``.tosa`` file and read one back.

:func:`write_tosa` lowers a fully static graph (no symbolic dims, no helper
ops) to the official wire format: zero points, shifts, shapes and tables become
CONST / CONST_SHAPE operands, constants carry little-endian data, and every op
keeps its source location. :func:`read_tosa` reads our files and the official
tools' (versions 1.0.0 and the 1.1.0 draft) and folds those operands back into
typed attributes. The byte layout is described by ``schemas/tosa.fbs``;
:class:`EmitError` and :class:`ReadError` report what cannot be written or read.
:func:`~.mlir.write_mlir` writes the same records as TOSA-dialect MLIR text.
"""
from .errors import EmitError, ReadError
from .writer import write_tosa

__all__ = ["write_tosa", "read_tosa", "EmitError", "ReadError"]


def __getattr__(name: str) -> object:
    """``read_tosa`` on first use: converting a model never reads a ``.tosa``, so it does not import the reader."""
    if name == "read_tosa":
        from .reader import read_tosa
        return read_tosa
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
