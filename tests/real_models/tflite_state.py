"""LiteRT's outputs and resource-variable contents, step by step, for a streaming TFLite model.

A streaming keyword spotter's output can sit at 0 on random features while
its ring buffers (resource variables holding inner activations) change every
step, so the real-model check compares those too. LiteRT does not expose its
resource table; the interpreter keeps every tensor
(``experimental_preserve_all_tensors``), and the value each ASSIGN_VARIABLE
of the main subgraph stores is read after the step. Which variable an
ASSIGN_VARIABLE writes comes from the VAR_HANDLE that made its resource
operand (its ``shared_name``), read here with the ``tflite`` schema package
directly, not through tosaconv's importer.
"""
from __future__ import annotations

import numpy as np
import tflite
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from tflite.utils import BUILTIN_OPCODE2NAME


def litert_state_steps(data: bytes, steps: list) -> tuple:
    """(outputs per step, {shared name: stored value} per step) for ``steps`` (feeds by input name)."""
    interp = Interpreter(model_content=data, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                         experimental_preserve_all_tensors=True)
    interp.allocate_tensors()
    assigned = assigned_tensors(data)
    outputs, states = [], []
    for feeds in steps:
        for d in interp.get_input_details():
            interp.set_tensor(d["index"], np.asarray(feeds[d["name"]], d["dtype"]))
        interp.invoke()
        outputs.append([interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()])
        states.append({name: interp.get_tensor(i).copy() for name, i in assigned.items()})
    return outputs, states


def assigned_tensors(data: bytes) -> dict:
    """{variable shared name: the tensor index its main-subgraph ASSIGN_VARIABLE stores}."""
    model = tflite.Model.GetRootAs(data, 0)
    sg = model.Subgraphs(0)
    handles, assigned = {}, {}
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = model.OperatorCodes(op.OpcodeIndex())
        name = BUILTIN_OPCODE2NAME.get(max(code.BuiltinCode(), code.DeprecatedBuiltinCode()))
        if name == "VAR_HANDLE":
            options = tflite.VarHandleOptions()
            table = op.BuiltinOptions()
            options.Init(table.Bytes, table.Pos)
            handles[op.Outputs(0)] = options.SharedName().decode()
        elif name == "ASSIGN_VARIABLE":
            assigned[handles[op.Inputs(0)]] = op.Inputs(1)
    return assigned
