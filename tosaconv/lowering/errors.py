"""The one error type every converter and lowering builder raises for what it cannot express.

A converter (ONNX or TFLite) or a builder of this package raises
:class:`ConvertError` with a message that says what and why; the importer's
driver (:func:`tosaconv.importers.errors.converting`) adds where, naming the
source op, and turns it into a diagnostic with exit code 3.
"""
from __future__ import annotations


class ConvertError(Exception):
    """An op the converter cannot express (the driver adds the location)."""
