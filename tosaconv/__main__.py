"""``python -m tosaconv`` and the ``tosaconv`` console script: the command line, then a fast exit.

When the command is done (its outputs committed, its report printed), :func:`run`
flushes stdout and stderr and ends the process with ``os._exit``: an orderly
interpreter shutdown would first free every object of the conversion one by one
(the IR graph, the imported model, a thousand modules), which costs about 8 % of
a real model's conversion and serves no one. Code that calls
:func:`tosaconv.cli.main` in-process still gets a normal ``SystemExit``.

The process runs with the garbage collector's higher thresholds from its first import on
(:func:`tosaconv.gc_tuning.for_the_whole_process`).

A command that will not run the numpy interpreter (``convert`` without ``--run`` or
``--outputs``, ``import``, ``specialize``, ``inspect``, ``ops``) sets
``OPENBLAS_NUM_THREADS=1`` before numpy is imported, unless the environment sets it: OpenBLAS
otherwise starts a thread per core when numpy loads, and those threads burn about 0.05 s of CPU
(a third of a small model's whole conversion, issue 13) for the few small products constant
folding computes. One thread also makes those products independent of the machine's core count.
"""
import os
import sys

from tosaconv.gc_tuning import for_the_whole_process

for_the_whole_process()   # before the imports below: they are most of a small conversion's collections

from tosaconv.cli import cli  # noqa: E402

# Commands that never run the interpreter on a model's inputs, and the options that make convert run it.
_NO_RUN_COMMANDS = ("convert", "import", "specialize", "inspect", "ops")
_RUN_OPTIONS = ("--run", "--outputs")


def _blas_threads(argv: list) -> None:
    """One OpenBLAS thread for a command that runs no interpreter (see the module docstring)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    runs = any(a in _RUN_OPTIONS or a.startswith("--outputs=") for a in argv)
    if command in _NO_RUN_COMMANDS and not runs and "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def run() -> None:
    """Run the command line on ``sys.argv`` and exit with its code, skipping the interpreter's teardown."""
    _blas_threads(sys.argv[1:])
    code = cli.main(sys.argv[1:], prog_name="tosaconv", standalone_mode=False) or 0
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:   # a reader that went away (``tosaconv ... | head``): nothing left to tell it
        pass
    os._exit(code)


if __name__ == "__main__":
    run()
