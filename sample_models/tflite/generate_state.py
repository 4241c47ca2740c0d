"""The int8 streaming sample: state in resource variables, quantized as TFLite's converter does.

Imported by ``generate.py`` (which writes the file). ``int8_stream.tflite`` is
a small streaming layer over frames ``x`` [1, 4] (int8): a one-frame delay line
(variable ``previous``) makes a window of the last two frames, a per-channel
int8 FULLY_CONNECTED filters the window, and an accumulator (variable
``total``) adds the result up from step to step (an int8 ADD that saturates).
Both variables start at their zero point (the real value 0.0) through
CALL_ONCE, so the first step sees real zeros where a device that keeps no
state would see raw zeros. The weights come from a seeded generator and are
quantized by :mod:`generate_int`'s rules, so the bytes are deterministic.
It is the stateful model Vela can compile (``running_sum`` is float).
"""
from __future__ import annotations

import numpy as np

from generate_int import QNet, act_quant

FRAME_Q = act_quant(-1.0, 1.0)
FILTER_Q = act_quant(-2.0, 2.0)
TOTAL_Q = act_quant(-6.0, 6.0)


def _variable(m, name: str, quant, initial) -> tuple:
    """A resource variable ``name`` set to ``initial`` by CALL_ONCE; returns (handle, read value)."""
    init = m.subgraph(f"init_{name}")
    ih = init.tensor(f"init_{name}_handle", [], "RESOURCE")
    init.op("VAR_HANDLE", [], [ih], "VarHandleOptions", SharedName=name)
    init.op("ASSIGN_VARIABLE", [ih, init.const(f"{name}_initial", initial, quant=quant)], [])
    m.op("CALL_ONCE", [], [], "CallOnceOptions", InitSubgraphIndex=init.index)
    h = m.tensor(f"{name}_handle", [], "RESOURCE")
    m.op("VAR_HANDLE", [], [h], "VarHandleOptions", SharedName=name)
    value = m.tensor(f"{name}_read", list(initial.shape), "INT8", quant=quant)
    m.op("READ_VARIABLE", [h], [value])
    return h, value


def int8_stream() -> bytes:
    net = QNet("tosaconv sample: int8 streaming filter with a delay line and an accumulator", 1, seed=21)
    m = net.m
    x = net.tensor("x", [4], FRAME_Q, is_input=True)
    prev_h, prev = _variable(m, "previous", FRAME_Q, np.full((1, 4), FRAME_Q[1][0], np.int8))
    total_h, total = _variable(m, "total", TOTAL_Q, np.full((1, 8), TOTAL_Q[1][0], np.int8))
    window = net.tensor("window", [8], FRAME_Q)
    m.op("CONCATENATION", [prev, x], [window], "ConcatenationOptions", version=2, Axis=1)
    filtered = net.weighted("FULLY_CONNECTED", window, net.tensor("filtered", [8], FILTER_Q), [8, 8], 0)
    y = net.tensor("y", [8], TOTAL_Q)
    m.op("ADD", [total, filtered], [y], "AddOptions", version=2)
    m.op("ASSIGN_VARIABLE", [total_h, y], [])
    m.op("ASSIGN_VARIABLE", [prev_h, x], [])
    m.output(y)
    return m.finish()


MODELS = {"int8_stream.tflite": int8_stream}
