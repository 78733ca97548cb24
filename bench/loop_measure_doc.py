#!/usr/bin/env python3
"""Rewrites the marked section of docs/performance.md from loop_measure results files
(bench/loop_measure.py). Only the text between the markers
  <!-- loop_measure:begin ... -->  and  <!-- loop_measure:end -->
is replaced; one subsection per results file, each with its condition and load.

Usage: bench/loop_measure_doc.py [--doc docs/performance.md] [RESULTS.json ...]
       (default: the committed results, COMMITTED below, in that order)
"""
import argparse
import json
import os
import sys

from measure import doc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The results docs/performance.md is generated from: quiet first, then beside a build.
COMMITTED = [os.path.join(ROOT, "bench", "results", name)
             for name in ("loop_measure_quiet.json", "loop_measure.json",
                          "loop_measure_fifo.json")]


def main(argv=None):
    """Reads the results files and rewrites the document's section."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--doc", default=os.path.join(ROOT, "docs", "performance.md"))
    p.add_argument("results", nargs="*", default=COMMITTED)
    a = p.parse_args(argv)
    sections = []
    for path in a.results:
        with open(path, encoding="utf-8") as f:
            result = json.load(f)
        shown = os.path.relpath(os.path.abspath(path), ROOT)
        sections.append(doc.section(result, shown if not shown.startswith("..") else path))
    with open(a.doc, encoding="utf-8") as f:
        text = f.read()
    try:
        text = doc.rewrite(text, sections)
    except ValueError as e:
        raise SystemExit(f"loop_measure_doc: {a.doc}: {e}")
    with open(a.doc, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"loop_measure_doc: rewrote the loop_measure section of {a.doc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
