"""Test helpers for stateful programs: run several steps on one state, here and in the reference model.

``litert_steps`` invokes one LiteRT interpreter (reference kernels) once per
step, so its resource variables carry over, as a streaming model runs.
``tosaconv_steps`` runs a tosaconv program the same way with one state dict.
``reference_two_steps`` runs an emitted ``.tosa`` in the official reference
model for two steps: the model runs one step per process and its descriptor
handling (tosa-tools 2026.8.0) can either write the final state of one
variable (``variable_file`` given as a string) or read the state from
``.npy`` files (``--initialize_variable_tensor_from_numpy 1``, the file given
as a list), not both in one run; so step 1 starts from the initial value in
the file and writes its final state, and step 2 starts from that state.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from tests.tosa_tools import _check_run, _place_model, _save_inputs, run_tool
from tosaconv import api
from tosaconv.emit.deserialize import deserialize


def litert_steps(data: bytes, steps: list) -> list:
    """LiteRT's outputs (a list per step) for ``steps`` (feeds by input name) run on one interpreter."""
    interp = Interpreter(model_content=data, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    out = []
    for feeds in steps:
        for d in interp.get_input_details():
            interp.set_tensor(d["index"], np.asarray(feeds[d["name"]], d["dtype"]))
        interp.invoke()
        out.append([interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()])
    return out


def tosaconv_steps(graph, steps: list) -> list:
    """tosaconv's outputs (a list per step, in output order) on one state."""
    state, out = {}, []
    for feeds in steps:
        result = api.run(graph, feeds, state=state)
        out.append([result[n] for n in graph.output_names])
    return out


def reference_two_steps(tosa: bytes, steps: list, output_names, workdir) -> list:
    """The reference model's outputs for two steps (see the module docstring) of a one-variable program."""
    assert len(steps) == 2
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    model = _place_model(tosa, work)
    (var,) = [t.name for t in deserialize(tosa).tensors if t.variable_name is not None]
    results = []
    (work / "state.npy").unlink(missing_ok=True)
    for k, feeds in enumerate(steps):
        ins = _save_inputs(model.read_bytes(), feeds, work)
        outs = [f"step{k}_out{i}.npy" for i in range(len(output_names))]
        desc = {"tosa_file": model.name, "ifm_name": list(feeds), "ifm_file": ins, "ofm_name": list(output_names),
                "ofm_file": outs, "expected_failure": False, "variable_name": [var],
                "variable_file": "state.npy" if k == 0 else ["state.npy"]}
        (work / "desc.json").write_text(json.dumps(desc))
        extra = ["--initialize_variable_tensor_from_numpy", "1"] if k else []
        proc = run_tool("tosa_reference_model", ["--test_desc", work / "desc.json", "--flatbuffer_dir", work,
                                                 "--output_dir", work, *extra])
        missing = [f for f in outs + (["state.npy"] if k == 0 else []) if not (work / f).exists()]
        _check_run(proc, missing)
        results.append([np.load(work / f) for f in outs])
    return results
