"""TFLite op converters, one small function per builtin op, grouped by family.

Importing this package registers every converter (each module is listed
explicitly; there is no scanning).
"""
from . import activation, conv_transpose, elementwise, indexing, layout, nn, resize, shape, slicing  # noqa: F401
