"""``python -m tosaconv`` and the ``tosaconv`` console script: the command line, then a fast exit.

When the command is done (its outputs committed, its report printed), :func:`run`
flushes stdout and stderr and ends the process with ``os._exit``: an orderly
interpreter shutdown would first free every object of the conversion one by one
(the IR graph, the imported model, a thousand modules), which costs about 8 % of
a real model's conversion and serves no one. Code that calls
:func:`tosaconv.cli.main` in-process still gets a normal ``SystemExit``.

The process runs with the garbage collector's higher thresholds from its first import on
(:func:`tosaconv.gc_tuning.for_the_whole_process`).

With ``TOSACONV_SERVER=1`` in the environment, a command that runs no interpreter goes to the
conversion server (:mod:`tosaconv.serve`), which forks a warm worker for it; this module then
imports neither click nor numpy. When no server runs, one is started in the background and the
command runs in-process.

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

for_the_whole_process()   # before the imports of run(): they are most of a small conversion's collections


def _blas_threads(argv: list[str]) -> None:
    """One OpenBLAS thread for a command that runs no interpreter (see the module docstring)."""
    from tosaconv.serve.wire import runs_no_interpreter
    if runs_no_interpreter(argv) and "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def run() -> None:
    """Run the command line on ``sys.argv`` and exit with its code, skipping the interpreter's teardown."""
    argv = sys.argv[1:]
    code = None
    if os.environ.get("TOSACONV_SERVER", "0") not in ("", "0"):
        from tosaconv.serve.client import served
        code = served(argv)
    if code is None:
        _blas_threads(argv)
        from tosaconv.cli import cli
        code = cli.main(argv, prog_name="tosaconv", standalone_mode=False) or 0
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:   # a reader that went away (``tosaconv ... | head``): nothing left to tell it
        pass
    os._exit(code)


if __name__ == "__main__":
    run()
