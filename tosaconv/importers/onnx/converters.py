"""Every ONNX op converter, registered by importing this module (each family module is listed
explicitly; there is no scanning).

The list lives here rather than in ``ops/__init__.py`` so that importing a helper
module of ``ops`` (``ops.qtypes``) registers nothing: ``int_io`` and
``unsigned_io`` use those helpers while converters import them, and a package
``__init__`` that imported every converter closed that loop into an import cycle.
The driver, ``tosaconv info`` and the test scoreboard import this module.
"""
from .ops import elementwise, shape, tensor  # noqa: F401
from .ops import normalize, reduce  # noqa: F401
from .ops import conv, matmul, pool, resize  # noqa: F401
from .ops import conv_transpose  # noqa: F401
from .ops import recurrent  # noqa: F401
from .ops import activation, argmax, arith, logic, norms  # noqa: F401
from .ops import einsum, indexing, layout, masks, nonzero, pad, scatter, topk  # noqa: F401
from .ops import dynamic_quant, qlinear, quant  # noqa: F401
from .ops import qgemm, qlinear_ms  # noqa: F401  (com.microsoft, declared in ..ms_domain)
from .ops import ms_activation, ms_attention, ms_dynamic_quant, ms_fused, ms_norms  # noqa: F401  (..ms_domain)
from .ops import control, loops  # noqa: F401
from .ops import dft  # noqa: F401
