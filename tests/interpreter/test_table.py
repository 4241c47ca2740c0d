"""TABLE: the int8 256-entry lookup and the int16 513-entry interpolating lookup."""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import KernelError
from tosaconv.ir import attrs as A
from tosaconv.ir.ops import Op

from .helpers import run_op


def test_int8_table_is_indexed_at_value_plus_128():
    table = (127 - np.arange(256)).astype(np.int8)        # table[v + 128] = -1 - v
    x = np.arange(-128, 128, dtype=np.int8)
    got = run_op(Op.TABLE, [x], A.TableAttrs(table))
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, -1 - x.astype(np.int32))


def test_int16_linear_table_interpolates_exactly():
    # entries (j - 256) * 64 make the lookup 64 * v for every v (16 + 7 bit result)
    table = ((np.arange(513) - 256) * 64).astype(np.int16)
    x = np.array([-32768, -32767, -129, -1, 0, 1, 127, 128, 32767], dtype=np.int16)
    got = run_op(Op.TABLE, [x], A.TableAttrs(table))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, 64 * x.astype(np.int32))


def test_int16_table_hand_worked():
    table = np.zeros(513, dtype=np.int16)
    table[256], table[257] = 100, 300
    x = np.array([0, 64, -1, 128, 127], dtype=np.int16)
    # v=0: index 256, frac 0 -> 100<<7 = 12800; v=64: 12800 + 200*64 = 25600;
    # v=-1: index 255, frac 127 -> 0 + 100*127 = 12700; v=128: index 257 -> 300<<7 + (0-300)*0 = 38400;
    # v=127: index 256, frac 127 -> 12800 + 200*127 = 38200
    np.testing.assert_array_equal(run_op(Op.TABLE, [x], A.TableAttrs(table)), [12800, 25600, 12700, 38400, 38200])


def test_wrong_table_length_is_an_error():
    with pytest.raises(KernelError, match="513 entries"):
        run_op(Op.TABLE, [np.zeros(3, np.int16)], A.TableAttrs(np.zeros(256, np.int16)))
