#!/usr/bin/env python3
"""Smoke tests of bench/loop_measure.py and bench/loop_measure_doc.py (ctest label "bench").

  --bin DIR   runs loop_measure.py once with very short durations on the binaries in DIR and
              checks that the results file holds every row with its fields, and that the
              generator writes the section (every table with its load line) into a copy of
              docs/performance.md, leaving the text outside the markers as it was.
  --doc       (no binaries) regenerates the section from the committed results files into a
              copy of docs/performance.md and checks the copy equals the committed document.
Asserts structure only: no wall-clock or rate limits (performance is measured, not asserted).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
from measure import doc, loops  # noqa: E402
import loop_measure_doc  # noqa: E402

ROW_KEYS = ("group", "round", "name", "placement", "rate_hz", "n", "latency_us", "late",
            "timer_misses", "miss_rate", "cyclictest_miss_rate", "ratio_to_cyclictest",
            "load_before", "load_after")
LOOP_KEYS = ("steps", "planned_steps", "complete", "late_percent", "own_clock", "state",
             "ratio_to_own_clock", "resources", "command")
MACHINE_KEYS = ("nproc", "kernel", "git_revision", "date_utc", "end_utc", "load_start",
                "load_end", "perf", "policy")
TABLES = ("#### Loops through the services", "#### Bare timers", "#### Rings, paced",
          "#### Rings, back to back", "#### CPU time and wake-ups per cycle")


def check(cond, msg):
    """Fails the test with `msg` unless `cond`."""
    if not cond:
        raise SystemExit(f"test_loop_measure: FAIL: {msg}")


def check_rows(result, rates, names, placements):
    """Every expected row is there once per round, with every field."""
    for k in MACHINE_KEYS:
        check(k in result["machine"], f"machine.{k} missing")
    rows = result["rows"]
    for r in rows:
        check(not r.get("error"), f"row {r.get('group')} {r.get('name')}: {r.get('error')}")
        for k in ROW_KEYS + (LOOP_KEYS if r["group"] == "loop" else ()):
            check(k in r, f"row {r['group']} {r['name']} {r.get('placement')}: no {k}")
        check(set(r["latency_us"]) == {"p50", "p99", "p99_9", "max"}, f"latency keys {r}")
        check(len(r["load_before"]) == 3 and len(r["load_after"]) == 3, "load triples")
    have = {(r["group"], r["name"], r["placement"], r["rate_hz"]) for r in rows}
    want = {("bare_timer", "cyclictest", "none", f) for f in rates}
    want |= {("loop", n, p, loops.LOOPS[n][1]) for n in names for p in placements}
    want |= {("ring", t, p, f) for t in ("uds", "zmq", "hyloop") for p in ("process", "thread")
             for f in [0] + rates}
    want |= {("ring", "PeriodicClock (ring_bench)", "none", f) for f in rates}
    check(want <= have, f"rows missing: {sorted(want - have)}")
    for r in rows:
        if r["group"] == "loop":
            check(r["latency_us"]["p50"] is not None, f"loop {r['name']}: no latency")
            res = r["resources"]
            check("processes" in res or "error" in res, f"loop {r['name']}: no resources")


def check_doc(result_paths, tmp):
    """The generator fills the markers of a copy of docs/performance.md and nothing else."""
    src = os.path.join(ROOT, "docs", "performance.md")
    copy = os.path.join(tmp, "performance.md")
    shutil.copy(src, copy)
    subprocess.run([sys.executable, os.path.join(BENCH, "loop_measure_doc.py"), "--doc", copy,
                    *result_paths], check=True)
    with open(src, encoding="utf-8") as f:
        before = f.read()
    with open(copy, encoding="utf-8") as f:
        after = f.read()
    check(before.split(doc.BEGIN)[0] == after.split(doc.BEGIN)[0], "text before the section")
    check(before.split(doc.END)[1] == after.split(doc.END)[1], "text after the section")
    section = after.split(doc.BEGIN)[1].split(doc.END)[0]
    for title in TABLES:
        check(title in section, f"section has no {title!r}")
        after_heading = [l for l in section.split(title)[1].split("\n")[1:] if l.strip()]
        check(after_heading[0].startswith("Load average"), f"{title}: no load line")
    return after


def smoke(binary_dir):
    """Runs the command with very short durations and checks its file and the generator."""
    rates, names, placements = [500, 1000, 4096], list(loops.LOOPS), ["processes", "colocated"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "loop_measure.json")
        p = subprocess.run([sys.executable, os.path.join(BENCH, "loop_measure.py"), "--bin",
                            binary_dir, "--rounds", "1", "--loop-seconds", "2.5",
                            "--timer-seconds", "0.3", "--ring-seconds", "0.2",
                            "--ring-roundtrips", "200", "--sample-period", "0.1",
                            "--condition", "smoke test", "--out", out], check=False)
        check(os.path.exists(out), f"no results file (exit {p.returncode})")
        with open(out, encoding="utf-8") as f:
            check_rows(json.load(f), rates, names, placements)
        check(p.returncode == 0, f"loop_measure.py exit {p.returncode}")
        check_doc([out], tmp)


def doc_is_current():
    """docs/performance.md's section is what the committed results files generate."""
    with tempfile.TemporaryDirectory() as tmp:
        after = check_doc(loop_measure_doc.COMMITTED, tmp)
    with open(os.path.join(ROOT, "docs", "performance.md"), encoding="utf-8") as f:
        check(f.read() == after, "docs/performance.md is not what bench/loop_measure_doc.py "
                                 "generates from the committed results: rerun it")


def main():
    """--bin DIR: the smoke test; --doc: the committed document is current."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--bin", help="directory holding hyloop, its services and ring_bench")
    g.add_argument("--doc", action="store_true")
    a = p.parse_args()
    if a.doc:
        doc_is_current()
    else:
        smoke(a.bin)
    print("test_loop_measure: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
