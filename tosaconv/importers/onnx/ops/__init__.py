"""ONNX op converters, one small function per source op, grouped by family.

Importing this package registers every converter (each module is listed
explicitly; there is no scanning).
"""
from . import elementwise, shape, tensor  # noqa: F401
from . import normalize, reduce  # noqa: F401
from . import conv, matmul, pool, resize  # noqa: F401
