"""Score tosaconv on the onnx package's own node test cases and write docs/onnx-support.md.

Every node test case (``onnx.backend.test.case.node``) whose op tosaconv
claims runs the way a user's model goes (import, bindings from the input
shapes, specialization, TOSA 1.0 emission, read-back, numpy run) and is
compared with the case's expected outputs; see
``tests/importers/onnx/scoreboard.py`` for how cases are classified. The
score is pass / (cases whose dtypes TOSA has). ``--reference N`` also runs
the first N passing cases of every op on the official TOSA reference model.

    python scripts/node_case_score.py --reference 1
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tests.importers.onnx.scoreboard import render, score_all  # noqa: E402

DOC = os.path.join(os.path.dirname(__file__), "..", "docs", "onnx-support.md")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=int, default=0, metavar="N",
                        help="also run the first N passing cases per op on the official reference model")
    parser.add_argument("--output", default=DOC, help="where to write the Markdown (default docs/onnx-support.md)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = score_all(args.reference)
    text = render(rows, args.reference, time.perf_counter() - start)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output + ".tmp", "w") as f:
        f.write(text)
    os.replace(args.output + ".tmp", args.output)
    print(text)


if __name__ == "__main__":
    main()
