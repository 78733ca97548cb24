#!/usr/bin/python3
"""The results JSON of ring_bench keeps its keys and structure (ctest ring_bench_json).

    /usr/bin/python3 bench/ring/test_ring_json.py build/bin/ring_bench   (runs --quick)
    /usr/bin/python3 bench/ring/test_ring_json.py --check build/ring_quick.json

ctest runs the second form on the file the smoke test ring_bench_smoke wrote (ring_bench
--quick). It compares the file of a --quick run with
testdata/ring_quick_reference.json, written by ring_bench before it was split into ring/ (the
format of bench/results/ring.json, which docs/performance.md reads): the same keys in every
object, the same rows and ratio entries (by transport, placement, pacing, rate), and values of
the same JSON type (a null matches any type: a ratio over a zero miss rate is null). Exit 0
when they match; 1 with one line per difference.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "testdata", "ring_quick_reference.json")
IDENTITY = ("transport", "placement", "pacing", "rate_hz")


def kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return type(v).__name__  # str, list, dict


def identity(entry):
    return tuple(entry.get(k) for k in IDENTITY) if isinstance(entry, dict) else None


def compare(want, got, path, errors):
    if want is None or got is None:
        return
    if kind(want) != kind(got):
        errors.append(f"{path}: {kind(got)}, expected {kind(want)}")
    elif isinstance(want, dict):
        for k in sorted(set(want) - set(got)):
            errors.append(f"{path}: missing key '{k}'")
        for k in sorted(set(got) - set(want)):
            errors.append(f"{path}: unexpected key '{k}'")
        for k in want:
            if k in got:
                compare(want[k], got[k], f"{path}.{k}", errors)
    elif isinstance(want, list):
        compare_list(want, got, path, errors)


def compare_list(want, got, path, errors):
    if want and all(isinstance(e, dict) for e in want):
        by_id = {identity(e): e for e in got}
        ids_want = [identity(e) for e in want]
        ids_got = [identity(e) for e in got]
        if ids_want != ids_got:
            errors.append(f"{path}: entries {ids_got}, expected {ids_want}")
        for i, e in enumerate(want):
            if identity(e) in by_id:
                compare(e, by_id[identity(e)], f"{path}[{i}]", errors)
    elif len(want) != len(got):
        errors.append(f"{path}: {len(got)} elements, expected {len(want)}")
    else:
        for i, (a, b) in enumerate(zip(want, got)):
            compare(a, b, f"{path}[{i}]", errors)


def check(path):
    with open(REFERENCE, encoding="utf-8") as f:
        want = json.load(f)
    with open(path, encoding="utf-8") as f:
        got = json.load(f)
    errors = []
    compare(want, got, "$", errors)
    if got.get("config", {}).get("quick") is not True:
        errors.append("$.config.quick: expected true (the reference is a --quick run)")
    return errors


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        out = argv[2]
    elif len(argv) == 2:
        tmp = tempfile.TemporaryDirectory(prefix="ring_json_")
        out = os.path.join(tmp.name, "ring_quick.json")
        p = subprocess.run([argv[1], "--quick", "--out", out], capture_output=True, text=True,
                           timeout=170)
        if not os.path.isfile(out):
            print(f"ring_bench wrote no {out} (exit {p.returncode}): {p.stderr[-2000:]}")
            return 1
    else:
        print(__doc__)
        return 2
    errors = check(out)
    for e in errors:
        print(e)
    print(f"{out}: {'structure as the reference' if not errors else f'{len(errors)} differences'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
