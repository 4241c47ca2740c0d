"""The ``tosaconv`` command line: a click group over :mod:`tosaconv.api`.

Commands parse their options, call the library, render the result and
return an exit code; none holds conversion logic. Exit codes are a contract:
0 ok, 1 internal error, 2 usage, 3 the model cannot be read or converted,
4 a shape problem. :class:`TosaconvGroup` makes click's own usage errors
follow ``--json`` too, so a script that asked for JSON always gets exactly
one JSON document on stdout.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Sequence

import click

from .. import __version__
from ..diagnostics import EXIT_USAGE, Diagnostic

EXIT_INTERRUPTED = 130

# Start-up (issue 13): `tosaconv --help` and `--version` must not pay for numpy, rich and the
# converter, so a command's module is imported only when that command is looked up. This table is
# the one place that names them: command -> (module in this package, attribute, the short help
# `--help` lists). tests/cli/test_startup.py checks it against the commands themselves.
COMMANDS = {
    "convert": ("convert", "convert", "Convert MODEL (.onnx, .tflite, .tosair or .tosa) to TOSA: a .tosa flatbuffer or .mlir."),
    "import": ("commands", "import_", "Import MODEL and write the symbolic program (symbols, ledger, ops) as text."),
    "inspect": ("info", "inspect", "Show FILE's inputs and outputs (with the scale and zero point of quantized ones)."),
    "ops": ("info", "ops", "List the ONNX ops tosaconv converts (with the model opsets and op versions each covers)."),
    "run": ("commands", "run", "Run FILE (.onnx, .tflite, .tosair or .tosa) with the numpy reference interpreter."),
    "server": ("server", "server", "Start, stop or query the conversion server that TOSACONV_SERVER=1 commands use."),
    "specialize": ("commands", "specialize", "Bind the symbols of a program or model and write static TOSA 1.0 "
                                             "(.tosa or .mlir)."),
}


class TosaconvGroup(click.Group):
    """A group whose ``main`` returns (or exits with) the command's exit code."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> int:
        argv = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as e:
            code = _usage_failure(e, json_mode="--json" in argv)
        except click.Abort:
            code = EXIT_INTERRUPTED
        code = code or 0
        if standalone_mode:
            sys.exit(code)
        return code

    def list_commands(self, ctx: click.Context) -> list:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from :data:`COMMANDS`, without importing a single command."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, click.utils.make_default_short_help(COMMANDS[name][2], limit)) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _usage_failure(e: click.ClickException, json_mode: bool) -> int:
    if json_mode:
        from ..diagnostics.render import Renderer   # lazy: rich is slow to import, see COMMANDS
        Renderer(json_mode=True).diagnostics([Diagnostic("E-USAGE", e.format_message())], EXIT_USAGE)
    else:
        e.show()
    return EXIT_USAGE


@click.group(cls=TosaconvGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, envvar="TOSACONV_DEBUG", help="Show tracebacks of internal errors.")
@click.version_option(__version__, "--version", prog_name="tosaconv")   # a constant: no importlib.metadata
def cli(debug: bool) -> None:
    """Convert ONNX and TFLite models with dynamic dims to TOSA, and run them.

    Exit codes: 0 ok, 1 internal error, 2 usage, 3 model cannot be read or
    converted, 4 shape problem (unbound symbol, violated constraint,
    data-dependent dim, inputs that do not fit).
    """


def main(args: Sequence[str] | None = None) -> int:
    """The console script ``tosaconv``."""
    return cli.main(args, prog_name="tosaconv")
