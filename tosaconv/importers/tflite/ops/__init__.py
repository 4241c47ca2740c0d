"""TFLite op converters, one small function per builtin op, grouped by family.

Importing this package registers every converter (each module is listed
explicitly; there is no scanning).
"""
from . import activation, conv_transpose, elementwise, indexing, layout, nn, resize, shape, slicing  # noqa: F401
from . import q_lut  # noqa: F401,E402  (quantized activations as TABLE lookups)
from . import q_lut_fixed  # noqa: F401,E402  (quantized HARD_SWISH, LEAKY_RELU, RSQRT as TABLEs)
from . import q_softmax  # noqa: F401,E402  (quantized SOFTMAX in integer ops)
from . import q_conv, q_matmul  # noqa: F401,E402  (quantized convolutions and products)
from . import custom  # noqa: F401,E402  (MediaPipe's Convolution2DTransposeBias)
from . import q_prelu  # noqa: F401,E402  (quantized PRELU in integer ops)
from . import quantize  # noqa: F401,E402  (QUANTIZE, requantize and DEQUANTIZE of int8/uint8/int16)
from . import q_arith  # noqa: F401,E402  (quantized ADD, SUB, MUL, SQUARED_DIFFERENCE in int32)
from . import control, variables  # noqa: F401,E402  (IF, WHILE; resource variables and CALL_ONCE)
from . import q_unary, q_compare  # noqa: F401,E402  (quantized RELUs, ABS, NEG, comparisons, MAX/MIN, SELECT)
from . import q_data  # noqa: F401,E402  (quantized PAD, SPACE_TO_BATCH_ND, CONCATENATION, ARG_MAX/MIN)
from . import q_pool  # noqa: F401,E402  (quantized MAX_POOL_2D and AVERAGE_POOL_2D)
from . import q_reduce  # noqa: F401,E402  (quantized MEAN, SUM, REDUCE_MAX and REDUCE_MIN)
from . import q_resize  # noqa: F401,E402  (quantized RESIZE_BILINEAR in TFLite's 10-bit fixed point)
from . import q_prod  # noqa: F401,E402  (quantized REDUCE_PROD, requantized per multiply)
from . import q_misc  # noqa: F401,E402  (quantized FILL, a copy of the stored value)
from . import q_logsoftmax, q_l2norm  # noqa: F401,E402  (quantized LOG_SOFTMAX, L2_NORMALIZATION in integer ops)
from . import q_div  # noqa: F401,E402  (quantized DIV in int32 ops, as LiteRT's x86-64 reference kernel runs it)
from . import q_sqrt  # noqa: F401,E402  (quantized SQRT: LiteRT's truncating float kernel as a TABLE or GATHER)
from . import fft  # noqa: F401,E402  (RFFT2D and REAL, IMAG, COMPLEX_ABS of its result)
