"""Rendering diagnostics and results: rich for people, JSON for scripts.

This is the only module of the library that imports rich. A
:class:`Renderer` sends human text about failures to stderr and results to
stdout; in JSON mode it prints exactly one JSON document on stdout (success
or failure) and nothing else anywhere on stdout. Colour follows rich's
terminal detection; ``NO_COLOR`` switches off all styling. All user-supplied
text goes through :class:`rich.text.Text`, never markup, so a shape such as
``tensor<[batch]x3xf32>`` prints as written. A progress display appears on
stderr only for work that takes longer than a second, and only when stderr is
a terminal. rich itself is imported on first use (:func:`_rich`): a command
that succeeds with a plain summary line (or quietly) never loads it.
"""
from __future__ import annotations

import functools
import os
import sys
import threading
import time
from typing import Any, Iterable, Sequence

from . import Diagnostic

PROGRESS_DELAY_S = 1.0
Console = Progress = ProgressColumn = SpinnerColumn = TextColumn = Table = Text = None   # rich's, set by _rich()


def _rich() -> None:
    """Bind this module's rich names on first use (rich takes tens of ms to import)."""
    global Console, Progress, ProgressColumn, SpinnerColumn, TextColumn, Table, Text
    if Text is None:
        from rich.console import Console
        from rich.progress import Progress, ProgressColumn, SpinnerColumn, TextColumn
        from rich.table import Table
        from rich.text import Text


def _console(stderr: bool) -> Console:
    _rich()
    # file=None makes rich look up sys.stdout/sys.stderr at print time (test runners swap them).
    # NO_COLOR switches off every ANSI style, bold included, so logs stay plain text.
    plain = bool(os.environ.get("NO_COLOR"))
    return Console(stderr=stderr, color_system=None if plain else "auto", no_color=plain, highlight=False)


def _may_be_terminal(stream: Any) -> bool:
    """False only when rich would surely call ``stream`` no terminal; answered without importing rich.

    rich (``Console.is_terminal``) says terminal for ``TTY_COMPATIBLE=1`` or a non-empty
    ``FORCE_COLOR``, else when ``stream.isatty()``; when none of these holds it says no.
    """
    if "TTY_COMPATIBLE" in os.environ or "FORCE_COLOR" in os.environ:
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return isatty is not None and bool(isatty())
    except ValueError:   # a closed stream
        return False


class Renderer:
    """Where and how one command's results and diagnostics are shown."""

    def __init__(self, json_mode: bool = False, quiet: bool = False):
        self.json_mode = json_mode
        self.quiet = quiet

    @functools.cached_property
    def out(self) -> Console:
        return _console(stderr=False)

    @functools.cached_property
    def err(self) -> Console:
        return _console(stderr=True)

    def document(self, doc: dict) -> None:
        """The one JSON document of a ``--json`` run, on stdout."""
        import json   # here: a conversion that prints no JSON need not load it (start-up, issue 13)
        sys.stdout.write(json.dumps(doc, indent=2, default=str, allow_nan=False) + "\n")
        sys.stdout.flush()

    def diagnostics(self, diags: Iterable[Diagnostic], exit_code: int) -> None:
        """A failure: the JSON document in JSON mode, else every diagnostic on stderr."""
        if self.json_mode:
            self.document({"ok": False, "exit_code": exit_code, "diagnostics": [d.to_json() for d in diags]})
            return
        for d in diags:
            self.err.print(diagnostic_text(d), soft_wrap=True)

    def warnings(self, diags: Iterable[Diagnostic]) -> None:
        """Warnings of a successful command on stderr (in JSON mode the document holds them)."""
        if not self.json_mode:
            for d in diags:
                self.err.print(diagnostic_text(d), soft_wrap=True)

    def plain_error(self, line: str) -> None:
        """One unadorned line on stderr (the internal-error report)."""
        _rich()
        self.err.print(Text(line), soft_wrap=True)

    def summary(self, line: str) -> None:
        """The one-line success summary (suppressed by -q and --json)."""
        if self.quiet or self.json_mode:
            return
        if line.isprintable():
            # rich prints an unstyled line of printable characters as written; skipping it saves
            # importing rich (~25 ms CPU) on every successful convert (issue 13)
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
            return
        _rich()
        self.out.print(Text(line), soft_wrap=True)

    def progress(self) -> "DelayedProgress":
        enabled = not (self.quiet or self.json_mode) and _may_be_terminal(sys.stderr) and self.err.is_terminal
        return DelayedProgress(self.err if enabled else None, enabled)   # disabled: no console, no rich


def diagnostic_text(d: Diagnostic) -> Text:
    """``error[CODE]: message`` followed by where, notes and hint, one per line."""
    _rich()
    style = {"error": "bold red", "warning": "bold yellow"}.get(d.severity.value, "bold")
    text = Text.assemble((f"{d.severity.value}[{d.code}]", style), ": ", (d.message, "bold"))
    if d.location is not None:
        text.append_text(Text.assemble("\n  ", ("at", "cyan"), f": {d.location}"))
    for note in d.notes:
        text.append_text(Text.assemble("\n  ", ("note", "cyan"), f": {note}"))
    if d.hint:
        text.append_text(Text.assemble("\n  ", ("hint", "green"), f": {d.hint}"))
    return text


def table(title: str, columns: Iterable[str], rows: Iterable[Sequence[object]]) -> Table:
    """A rich table of plain-text cells."""
    _rich()
    t = Table(title=title, title_justify="left", title_style="bold")
    for column in columns:
        t.add_column(column, overflow="fold")
    for row in rows:
        t.add_row(*(Text("" if cell is None else str(cell)) for cell in row))
    if not t.row_count:
        t.caption = "(none)"
    return t


def _since_column(start: float) -> Any:
    """A progress column: seconds since the command started (the display itself appears a second late)."""
    _rich()

    class _SinceColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            return Text(f"{time.perf_counter() - start:.1f} s", style="yellow")

    return _SinceColumn()


class DelayedProgress:
    """A transient spinner with the current stage, shown only once work passes one second."""

    def __init__(self, console: Console, enabled: bool, delay: float = PROGRESS_DELAY_S):
        self._console, self._enabled, self._delay = console, enabled, delay
        self._lock = threading.Lock()
        self._timer = None
        self._progress = None
        self._task = None
        self._label = ""
        self._t0 = time.perf_counter()

    def __enter__(self):
        if self._enabled:
            self._timer = threading.Timer(self._delay, self._start)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _start(self) -> None:
        with self._lock:
            if self._timer is None:
                return
            since = _since_column(self._t0)
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                      since, console=self._console, transient=True)
            self._task = self._progress.add_task(self._label, total=None)
            self._progress.start()

    def update(self, label: str) -> None:
        with self._lock:
            self._label = label
            if self._progress is not None:
                self._progress.update(self._task, description=label)

    def __exit__(self, *exc):
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._progress is not None:
                self._progress.stop()
                self._progress = None
        return False


def _shape_text(shape: object) -> str:
    if isinstance(shape, (list, tuple)):
        return "[" + ", ".join(str(d) for d in shape) + "]"
    return str(shape)


def _get(row: dict, *keys: str) -> tuple:
    return tuple(row.get(k) for k in keys)


def _quant_text(v: dict) -> str:
    """``scale 0.0078125, zero point -1 (model: float32)`` for a quantized input or output, else empty."""
    if v.get("scale") is None:
        return ""
    bits = ", uint8 bits" if v.get("unsigned") else ""
    return f"scale {v['scale']:.9g}, zero point {v['zero_point']} (model: {v.get('source_dtype', '?')}{bits})"


def inspect_tables(info: dict) -> list:
    """The tables of ``tosaconv inspect`` for the data of ``api.describe``."""
    values = [(kind, *_get(v, "name", "dtype"), _shape_text(v.get("shape")), _quant_text(v))
              for kind in ("inputs", "outputs") for v in info.get(kind, [])]
    symbols = [(*_get(s, "name", "kind"), _origin_text(s), s.get("bound") or "") for s in info.get("symbols", [])]
    constraints = [(i, c.get("text"), _STATUS_TEXT.get(c.get("status"), c.get("status")),
                    c.get("location") or f"{c.get('op_type')} '{c.get('node')}'", c.get("reason"))
                   for i, c in enumerate(info.get("constraints", []), 1)]
    histogram = [(src, ", ".join(f"{op} ×{n}" for op, n in sorted(ops.items())))
                 for src, ops in sorted(info.get("histogram", {}).items())]
    return [
        table("Inputs and outputs", ("", "name", "dtype", "shape", "quantization"), values),
        table("Symbols", ("name", "extent", "origin", "bound"), symbols),
        table("Constraint ledger", ("#", "constraint", "status", "recorded by", "reason"), constraints),
        table("Op histogram", ("source op", "TOSA ops"), histogram),
    ]


# how each ledger entry is discharged (seed 004): proven, checked when bound, or asserted in a symbolic file
_STATUS_TEXT = {"proven": "proven", "checked_at_binding": "at binding", "asserted": "asserted in file"}


def _origin_text(s: dict) -> str:
    origin = str(s.get("origin", ""))
    return origin + (" [data-dependent]" if s.get("data_dependent") and "data-dependent" not in origin else "")


def show_inspect(renderer: Renderer, info: dict) -> None:
    _rich()
    renderer.out.print(Text.assemble(("source: ", "bold"), str(info.get("source", "?"))), soft_wrap=True)
    for t in inspect_tables(info):
        renderer.out.print(t)
    needed = info.get("needed_symbols") or []
    binds = " ".join(f"--bind {name}=N" for name in needed) or "nothing to bind (every input dim is static)"
    renderer.out.print(Text(f"{info.get('op_count', '?')} ops; to specialize: {binds}"), soft_wrap=True)
    if info.get("tosa"):
        for line in tosa_lines(info["tosa"]):
            renderer.out.print(Text(line), soft_wrap=True)


SHOWN_ISLANDS = 10


def tosa_lines(tosa: dict) -> list:
    """The TOSA profiles, extensions, level fit and float islands of ``inspect``, as lines of text."""
    needs = ", ".join(tosa["profiles"] + tosa["extensions"]) or "nothing"
    lines = [f"TOSA {tosa['spec_version']} needs: {needs}" + ("" if tosa["exact"] else
             " (symbolic program: bind its symbols for the exact answer)")]
    lines += [f"  may also need {p['name']}: {p['reason']}" for p in tosa["possible_extensions"]]
    lines += [f"  in no TOSA profile: {u['op']} at {u['location']['text']} ({u['mode']})" for u in tosa["unsupported"]]
    level = tosa["level"]
    lines.append(f"level {level['name']}: " + ("fits" if level["fits"] else
                 f"does not fit ({len(level['violations'])} violation(s))"))
    lines += [f"  {v['op']} at {v['location']['text']}: {v['what']} = {v['value']} > {v['limit']} {v['maximum']}"
              for v in level["violations"]]
    islands = tosa["float_islands"]
    if islands:
        lines.append(f"float islands: {len(islands)} source op(s) compute in float")
        lines += [f"  {i['location']['text']}: {', '.join(i['ops'])}: {i['reason']}" for i in islands[:SHOWN_ISLANDS]]
        if len(islands) > SHOWN_ISLANDS:
            lines.append(f"  ... and {len(islands) - SHOWN_ISLANDS} more (--json lists them all)")
    return lines


def _limits_cell(limits: Iterable[dict]) -> str:
    """An op's published limits, one per line: what is not handled, and the key a refusal names."""
    return "\n".join(f"{lim['text']} [{lim['key']}]" for lim in limits)


def show_ops(renderer: Renderer, rows: list, tflite_rows: Sequence[dict] = (), custom_ops: Sequence[dict] = (),
             limits: Sequence[dict] = ()) -> None:
    _rich()
    renderer.out.print(table("Supported ONNX ops", ("op", "domain", "model opsets", "op versions", "limits"),
                             [(r["op_type"], r["domain"], "{}-{}".format(*r["opsets"]),
                               ", ".join(map(str, r["versions"])), _limits_cell(r.get("limits", ())))
                              for r in rows]))
    by_domain: dict = {}
    for r in rows:
        by_domain[r["domain"]] = by_domain.get(r["domain"], 0) + 1
    counts = " and ".join(f"{n} {d}" for d, n in sorted(by_domain.items()))
    renderer.out.print(Text(f"{counts} ops (model opsets of their domain); ai.onnx models with an older opset "
                            "are upgraded first"))
    if limits:
        renderer.out.print(Text("Limits of every ONNX op: " + "; ".join(_limits_cell(limits).splitlines())))
    if tflite_rows:
        renderer.out.print(table("Supported TFLite builtin ops", ("op", "forms"),
                                 [(r["op_type"], ", ".join(r["forms"])) for r in tflite_rows]))
        renderer.out.print(Text(f"{len(tflite_rows)} TFLite ops; every op version is read, and each converter "
                                "checks the operand types it is given"))
    if custom_ops:
        renderer.out.print(Text("TFLite custom ops converted (public composites): " + ", ".join(custom_ops)))
