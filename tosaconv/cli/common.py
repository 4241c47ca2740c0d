"""What every command shares: options, the error boundary and the per-run session.

A command body is a plain function ``body(session, **options)`` that calls
the library and returns an :class:`Outcome`. :func:`guarded` turns it into a
click callback that owns the exit code: outputs staged during the run are
committed only when the body succeeded (and discarded otherwise); a
:class:`~tosaconv.diagnostics.TosaconvError` is rendered and exits with its
own code; anything else is an internal bug, reported in one line (exit 1)
unless ``--debug`` asks for the traceback.
"""
from __future__ import annotations

import functools
import os
import sys
from dataclasses import field
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import Callable, ContextManager, Optional

import click

from ..diagnostics import EXIT_INTERNAL, EXIT_OK, Diagnostic, TosaconvError, UsageError
from ..diagnostics.render import Renderer
from ..fileio import OutputBatch, WrittenFile
from ..limits import DEFAULT_MAX_TENSOR_BYTES, tensor_budget
from ..report import StageClock
from . import EXIT_INTERRUPTED

MODEL_PATH = click.Path(exists=True, dir_okay=False)
IN_PATH = click.Path(exists=True, dir_okay=False)
OUT_PATH = click.Path(dir_okay=False)
INT_IO = click.option(
    "--int-io", "int_io", is_flag=True,
    help="Integer I/O: drop the float quantize at each input and the dequantize at each output, so the "
         "program takes and returns the int8 tensors a device feeds; the report gives their scales and "
         "zero points (uint8 is carried as int8 with the zero point minus 128).")


@dataclass
class Outcome:
    """A command's result: the ``--json`` document, and a summary line or tables for people."""

    document: dict
    summary: str = ""
    show: Optional[Callable] = None   # show(renderer), used instead of the summary line
    warnings: list = field(default_factory=list)   # Diagnostics shown on stderr (the document holds them too)
    exit_code: int = EXIT_OK   # non-zero when part of the work failed but the rest is written (--bind-grid)


class Session:
    """One command run: its renderer, stage clock, progress display and staged outputs."""

    def __init__(self, json_mode: bool, quiet: bool):
        self.renderer = Renderer(json_mode=json_mode, quiet=quiet)
        self.clock = StageClock()
        self.batch = OutputBatch()
        self.progress = None

    def stage(self, name: str, label: str) -> ContextManager[None]:
        """Time the stage ``name`` and show ``label`` in the progress display."""
        if self.progress is not None:
            self.progress.update(label)
        return self.clock.measure(name)

    def write(self, path: str, data: bytes, kind: str) -> WrittenFile:
        """Stage one output file; it appears under ``path`` only if the command succeeds."""
        try:
            return self.batch.stage(path, data, kind)
        except OSError as e:
            raise _write_error(path, kind, e) from None

    def commit(self) -> None:
        """Move every staged output into place."""
        try:
            self.batch.commit()
        except OSError as e:
            raise _write_error(e.filename or "?", "output", e) from None


def _write_error(path: str, kind: str, e: OSError) -> UsageError:
    return UsageError.one("E-WRITE", f"cannot write {kind} '{path}': {e.strerror or e}",
                          hint="check that the output directory exists and is writable")


def output_options(fn: Callable) -> Callable:
    """``--json``, ``-q`` and ``--debug``, accepted by every command."""
    fn = click.option("--debug", is_flag=True, envvar="TOSACONV_DEBUG",
                      help="Show the Python traceback of internal errors.")(fn)
    fn = click.option("-q", "--quiet", is_flag=True, help="No summary line, no progress display.")(fn)
    fn = click.option("--max-tensor-bytes", "max_tensor_bytes", type=click.IntRange(min=1),
                      default=DEFAULT_MAX_TENSOR_BYTES, show_default=True, metavar="BYTES",
                      help="Refuse (exit 4) any input, constant or intermediate tensor larger than this.")(fn)
    return click.option("--json", "json_mode", is_flag=True,
                        help="Print exactly one JSON document on stdout (errors included) and nothing else.")(fn)


def binding_options(fn: Callable) -> Callable:
    """The three explicit binding sources (``--inputs`` is declared by each command)."""
    fn = click.option("--input-shape", "input_shapes", multiple=True, metavar="INPUT=D0,D1,...",
                      help="Solve symbols from a whole input shape, e.g. input_ids=2,16. Repeatable.")(fn)
    fn = click.option("--bindings", "binding_files", multiple=True, type=IN_PATH, metavar="FILE.json",
                      help='A JSON object of symbol sizes, e.g. {"batch": 2, "seq": 16}.')(fn)
    return click.option("--bind", "binds", multiple=True, metavar="NAME=INT",
                        help="Bind a symbol to a size, e.g. --bind batch=2. Repeatable.")(fn)


# quantized TFLite only; README "On the Ethos-U NPU" gives the two lowerings and their error bound
NPU_FAST = click.option("--npu-fast", is_flag=True,
                        help="Quantized TFLite: cheaper NPU lowerings (ADD/SUB inputs, FULLY_CONNECTED) that may "
                             "differ from LiteRT by 1 in the last place.")


def _set_dft(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if value == "auto" and "tosaconv.lowering.dft" not in sys.modules:
        return value   # not loaded yet, so its mode is the default: a model without transforms never loads it (issue 13)
    from ..lowering.dft import set_dft_mode  # noqa: PLC0415 (the option only matters when a model is imported)
    set_dft_mode(value)
    return value


# ONNX DFT/STFT, TFLite RFFT2D: README "Fourier transforms" describes the three lowerings
DFT = click.option("--dft", type=click.Choice(["auto", "fft", "matmul"]), default="auto", show_default=True,
                   expose_value=False, callback=_set_dft,
                   help="DFT lowering: fft = TOSA FFT2D/RFFT2D (EXT-FFT, power-of-two lengths), matmul = MATMUL "
                        "(plain PRO-FP), auto = fft where the length is a power of two.")


def _set_fp32_weights(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    from ..lowering.weight_casts import fp32_weights  # noqa: PLC0415 (only matters when a model is imported)
    ctx.with_resource(fp32_weights(value))   # for this command only (a later in-process call is unaffected)
    return value


# README "Weights stay as compact as the source's": fp16/int8 weights keep their type behind a CAST
FP32_WEIGHTS = click.option("--fp32-weights", is_flag=True, expose_value=False, callback=_set_fp32_weights,
                            help="Widen fp16 and int8 weights of float math to float32 constants at conversion "
                                 "time (default: keep them in their source type with a CAST to float32 at run "
                                 "time, as small as the source model).")


def guarded(body: Callable) -> Callable:
    """A click callback that runs ``body`` and returns the command's exit code."""
    @functools.wraps(body)
    def callback(json_mode: bool, quiet: bool, debug: bool, max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES,
                 **options) -> int:
        debug = debug or bool(click.get_current_context().find_root().params.get("debug"))
        session = Session(json_mode, quiet)
        try:
            with tensor_budget(max_tensor_bytes):
                return _run(session, body, options)
        except TosaconvError as e:
            return _fail(session, e.diagnostics, e.exit_code, debug)
        except KeyboardInterrupt:
            return _fail(session, [Diagnostic("E-INTERRUPTED", "interrupted")], EXIT_INTERRUPTED, False)
        except Exception as e:  # the one place that turns any bug into a one-line report
            if not debug:
                return _fail(session, [internal_diagnostic(e)], EXIT_INTERNAL, False)
            if session.renderer.json_mode:
                _fail(session, [internal_diagnostic(e)], EXIT_INTERNAL, False)
            raise   # --debug: Python prints the traceback on stderr
        finally:
            session.batch.discard()
    return callback


def _run(session: Session, body: Callable, options: dict) -> int:
    with session.renderer.progress() as progress:
        session.progress = progress
        outcome = body(session, **options)
    session.commit()
    session.renderer.warnings(outcome.warnings)
    if session.renderer.json_mode:
        session.renderer.document(outcome.document)
    elif outcome.show is not None:
        outcome.show(session.renderer)
    else:
        session.renderer.summary(outcome.summary)
    return outcome.exit_code


def _fail(session: Session, diags: list, code: int, debug: bool) -> int:
    renderer = session.renderer
    if debug:
        renderer.err.print_exception()   # stderr, so a --json document on stdout stays alone
    if code == EXIT_INTERNAL and not renderer.json_mode:
        renderer.plain_error(diags[0].message)   # the contract: exactly one line
    else:
        renderer.diagnostics(diags, code)
    return code


def internal_diagnostic(e: BaseException) -> Diagnostic:
    text = " ".join(str(e).split())   # one line, whatever the exception's text looks like
    message = f"internal error: {type(e).__name__}: {text} (re-run with --debug for the traceback)"
    return Diagnostic("E-INTERNAL", message, notes=tuple(getattr(e, "__notes__", ())))


def check_outputs(model: str, **outputs: str | None) -> None:
    """Output paths must differ from each other and from the model they are made from."""
    seen = {os.path.abspath(model): "the model"}
    for option, path in outputs.items():
        if path is None:
            continue
        key = os.path.abspath(path)
        if key in seen:
            raise UsageError.one("E-OUTPUT-CLASH", f"--{option.replace('_', '-')} '{path}' is the same file "
                                 f"as {seen[key]}", hint="give every output its own path")
        seen[key] = f"--{option.replace('_', '-')}"


def target_options(fn: Callable) -> Callable:
    """``--profile`` and ``--level``: what the TOSA target implements (checked on the static program)."""
    fn = click.option("--level", type=click.Choice(["none", "8k"]), default="none", show_default=True,
                      help="Fail (exit 3) when an op breaks a limit of this TOSA level. The report states "
                           "whether the program fits level 8K either way.")(fn)
    return click.option("--profile", type=click.Choice(["int", "fp"]), default=None,
                        help="Fail (exit 3) unless the program fits this TOSA profile and its extensions: "
                             "'int' (PRO-INT) lists every op that would stay float, and why. Default: "
                             "no restriction.")(fn)
