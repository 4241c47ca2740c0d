"""ONNX op converters, one small function per source op, grouped by family.

Importing this package registers every converter (each module is listed
explicitly; there is no scanning).
"""
from . import elementwise, shape, tensor  # noqa: F401
from . import normalize, reduce  # noqa: F401
from . import conv, matmul, pool, resize  # noqa: F401
from . import conv_transpose  # noqa: F401
from . import recurrent  # noqa: F401
from . import activation, argmax, arith, logic, norms  # noqa: F401
from . import einsum, indexing, layout, masks, nonzero, pad, scatter, topk  # noqa: F401
from . import dynamic_quant, qlinear, quant  # noqa: F401
from . import qgemm, qlinear_ms  # noqa: F401  (com.microsoft, declared in ..ms_domain)
from . import ms_activation, ms_attention, ms_dynamic_quant, ms_fused, ms_norms  # noqa: F401  (..ms_domain)
from . import control, loops  # noqa: F401
from . import dft  # noqa: F401
