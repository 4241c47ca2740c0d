"""``tosaconv inspect`` and ``tosaconv ops``: what a program holds, and what can be imported.

``inspect`` shows a model's or program's inputs and outputs with their
symbolic shapes, the symbol table, the constraint ledger with provenance and
the op histogram (source op → TOSA ops) as tables, and the TOSA profiles,
extensions and level the program needs with its float islands (of the static
program when the model needs no bindings), or the same data as one JSON document. ``ops`` lists the ONNX ops, the TFLite builtin ops and the TFLite custom ops the
importers convert.
"""
from __future__ import annotations

import click
from typing import TYPE_CHECKING

from .. import api
from ..diagnostics.render import show_inspect, show_ops
from . import steps
from .common import INT_IO, MODEL_PATH, Outcome, guarded, output_options

if TYPE_CHECKING:
    from .common import Session


@click.command("inspect")
@click.argument("file", type=MODEL_PATH, metavar="FILE")
@INT_IO
@output_options
@guarded
def inspect(session: Session, file: str, int_io: bool) -> Outcome:
    """Show FILE's inputs and outputs (with the scale and zero point of quantized ones), symbols,
    constraint ledger and op histogram, and the TOSA profiles, extensions and level 8K fit it needs
    (exact when FILE needs no bindings); with --int-io, as convert --int-io would import it."""
    graph = steps.load_model(session, file, int_io=int_io)
    info = api.describe(graph)
    with session.stage("tosa", "checking TOSA profiles and levels"):
        info["tosa"] = api.tosa_summary(api.exact_program(graph))
    doc = {"ok": True, "exit_code": 0, "command": "inspect", "file": file, **info}
    return Outcome(doc, show=lambda renderer: show_inspect(renderer, info))


@click.command("ops")
@output_options
@guarded
def ops(session: Session) -> Outcome:
    """List the ONNX ops tosaconv converts (with the model opsets and op versions each covers) and the
    TFLite builtin ops (with the forms, float and quantized, each converts) and custom ops."""
    rows, tflite_rows, custom = supported_ops(), supported_tflite_ops(), supported_tflite_custom_ops()
    doc = {"ok": True, "exit_code": 0, "command": "ops", "ops": rows, "tflite_ops": tflite_rows,
           "tflite_custom_ops": custom, "onnx_limits": onnx_limits()}
    return Outcome(doc, show=lambda renderer: show_ops(renderer, rows, tflite_rows, custom, doc["onnx_limits"]))


def supported_ops() -> list:
    from ..importers.onnx import converters as _converters  # noqa: F401  (registers every converter)
    from ..importers.onnx.driver import MAX_OPSET, MIN_OPSET
    from ..importers.onnx.registry import support_table
    return support_table(MIN_OPSET, MAX_OPSET)


def onnx_limits() -> list:
    """The published limits of every ONNX op (the model's inputs), as records."""
    from ..importers.onnx import driver as _driver  # noqa: F401  (publishes the input limits)
    from ..importers.onnx.registry import importer_limits
    return [limit.to_json() for limit in importer_limits()]


def supported_tflite_ops() -> list:
    from ..importers.tflite import ops as _converters  # noqa: F401  (registers every converter)
    from ..importers.tflite.registry import support_table
    return support_table()


def supported_tflite_custom_ops() -> list:
    from ..importers.tflite import ops as _converters  # noqa: F401  (registers every converter)
    from ..importers.tflite.registry import supported_custom_ops
    return supported_custom_ops()
