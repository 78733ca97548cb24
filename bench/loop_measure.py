#!/usr/bin/env python3
"""Measure the loop the same way every time (issue 26, item 1; docs/performance.md,
"Loop, rings and bare timer, measured together").

One invocation runs, `--rounds` times in the same order so that the machine's load drifts over
every row alike:
  1. the bare timer: cyclictest at each loop's rate (measure/timer.py);
  2. the rings: raw UDS, bare ZeroMQ and hyloop, 4 hops, processes and threads, back to back and
     paced at each loop's rate, with ring_bench's own bare PeriodicClock (measure/rings.py);
  3. the loops through the services, `hyloop up --mode real_time`, as processes and co-located
     (`--inproc`): SITS SCVG at 500 Hz, FCU polynomial at 1 kHz, vRTHS case 1 AMB at 4096 Hz,
     with per-process CPU time and wake-ups per cycle from /proc (measure/loops.py).
Every row carries the load average before and after it. Each paced row's miss rate is divided by
the rate of the cyclictest row of the same rate and round (`ratio_to_cyclictest`). Instructions
per cycle: `perf stat -e instructions,cycles` is probed once; where the kernel gives no hardware
counters the reason is written in the results file and the column stays empty.
Writes one JSON file (default bench/results/loop_measure.json); docs: bench/loop_measure_doc.py.

Usage: bench/loop_measure.py [--bin build/bin] [--rounds 3] [--loop-seconds 20]
         [--timer-seconds 10] [--ring-seconds 5] [--condition "beside a build"] [--out FILE]
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys

from measure import loops, procstat, rings, timer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(argv):
    """The command line (durations in seconds)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                   help="directory holding hyloop, its services and ring_bench")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--loop-seconds", type=float, default=20.0, help="each loop run (s)")
    p.add_argument("--timer-seconds", type=float, default=10.0, help="each cyclictest run (s)")
    p.add_argument("--ring-seconds", type=float, default=5.0, help="each paced ring (s)")
    p.add_argument("--ring-roundtrips", type=int, default=5000, help="each back-to-back ring")
    p.add_argument("--loops", default="sits,fcu,vrths")
    p.add_argument("--placements", default="processes,colocated",
                   help="processes, colocated, and either with +fifo (SCHED_FIFO, mlockall)")
    p.add_argument("--sample-period", type=float, default=0.25, help="/proc sampling (s)")
    p.add_argument("--condition", default="unspecified",
                   help='the machine\'s state, written beside every table, e.g. "quiet"')
    p.add_argument("--binaries-note", default=None,
                   help="where the binaries in --bin were built from, if not this checkout")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "loop_measure.json"))
    return p.parse_args(argv)


def _output(cmd):
    """stdout of `cmd`, stripped, or None if it cannot run."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False,
                              cwd=ROOT).stdout.strip() or None
    except OSError:
        return None


def perf_probe():
    """Whether `perf stat -e instructions,cycles` counts here, and if not, why."""
    cmd = ["perf", "stat", "-x", ",", "-e", "instructions,cycles", "--", "true"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as e:
        return {"supported": False, "reason": f"perf cannot run: {e}"}
    lines = [l for l in p.stderr.splitlines() if "instructions" in l or "cycles" in l]
    ok = p.returncode == 0 and lines and all("<not" not in l for l in lines)
    events = sorted(os.listdir("/sys/bus/event_source/devices"))
    reason = None if ok else (f"perf stat reports {'; '.join(lines) or p.stderr.strip()[-200:]}"
                              f" (exit {p.returncode}); PMUs the kernel offers: "
                              f"{', '.join(events)} (no 'cpu' PMU: the VM exposes no hardware "
                              "counters)")
    return {"supported": bool(ok), "command": " ".join(cmd), "reason": reason}


def machine():
    """The machine and the revision measured."""
    return {"nproc": os.cpu_count(), "kernel": platform.release(),
            "git_revision": _output(["git", "rev-parse", "HEAD"]),
            "git_dirty": bool(_output(["git", "status", "--porcelain", "--untracked-files=no"])),
            "cyclictest": _output(["sh", "-c", "cyclictest --help 2>&1 | head -1"]),
            "policy": "SCHED_OTHER for every row but a +fifo loop row (the services by default "
                      "ask for no real-time policy; a +fifo row asks each loop thread for "
                      "SCHED_FIFO 80 and mlockall, and records what it got)",
            "perf": perf_probe()}


def timed(group, rnd, fn, *args):
    """Runs fn(*args) -> row dict and stamps it with its group, round and load before/after."""
    before = procstat.load_average()
    r = fn(*args)
    r.update(group=group, round=rnd, load_before=before, load_after=procstat.load_average())
    return r


def one_round(a, rnd, names, placements):
    """One round: the bare timers, the rings, then every loop in every placement."""
    rates = sorted({loops.LOOPS[n][1] for n in names})
    out = []
    for rate in rates:
        log(f"round {rnd}: cyclictest {rate} Hz")
        out.append(timed("bare_timer", rnd, _timer_row, rate, a.timer_seconds))
    log(f"round {rnd}: ring_bench at {rates} Hz")
    ring_rows, before, after, cmd = rings.rows(a.bin, rates, a.ring_seconds, a.ring_roundtrips)
    for r in ring_rows:
        r.update(group="ring", round=rnd, load_before=before, load_after=after, command=cmd,
                 load_scope="the ring_bench invocation")
    out.extend(ring_rows)
    for name in names:
        for placement in placements:
            log(f"round {rnd}: {name} {placement}")
            out.append(timed("loop", rnd, loops.row, a.bin, ROOT, name, placement,
                             a.loop_seconds, a.sample_period))
    return out


def _timer_row(rate, seconds):
    """A cyclictest row with the row's identity."""
    r = timer.row(rate, seconds)
    r.update(name="cyclictest", placement="none", pacing="paced", rate_hz=rate)
    return r


def add_ratios(rows):
    """ratio_to_cyclictest = a paced row's miss rate / the same round's cyclictest row's miss
    rate at the same rate (None when either is missing or the timer missed nothing); and for
    the loops the same against the coordinator's own bare timer (ratio_to_own_clock)."""
    ref = {(r["round"], r["rate_hz"]): r.get("miss_rate") for r in rows
           if r["group"] == "bare_timer"}
    for r in rows:
        t, m = ref.get((r["round"], r.get("rate_hz"))), r.get("miss_rate")
        r["cyclictest_miss_rate"] = t
        r["ratio_to_cyclictest"] = m / t if m is not None and t else None
        if r["group"] == "loop":
            own = (r.get("own_clock") or {}).get("rate")
            r["ratio_to_own_clock"] = m / own if m is not None and own else None


def log(msg):
    """Progress on stderr."""
    print(f"loop_measure: {msg}", file=sys.stderr, flush=True)


def main(argv=None):
    """Runs every round and writes the results file."""
    a = parse_args(argv)
    a.bin = os.path.abspath(a.bin)  # the loops run in their own directories
    names, placements = a.loops.split(","), a.placements.split(",")
    for n in names:
        if n not in loops.LOOPS:
            raise SystemExit(f"loop_measure: unknown loop {n!r} (known: {', '.join(loops.LOOPS)})")
    started = datetime.datetime.now(datetime.timezone.utc)
    info = machine()
    info.update(load_start=procstat.load_average(), date_utc=started.isoformat(timespec="seconds"),
                binaries=a.bin if a.binaries_note is None else f"{a.bin}: {a.binaries_note}")
    rows = []
    for rnd in range(1, a.rounds + 1):
        rows.extend(one_round(a, rnd, names, placements))
    add_ratios(rows)
    ended = datetime.datetime.now(datetime.timezone.utc)
    info.update(load_end=procstat.load_average(), end_utc=ended.isoformat(timespec="seconds"),
                wall_s=round((ended - started).total_seconds(), 1))
    config = {k: getattr(a, k) for k in ("rounds", "loop_seconds", "timer_seconds",
                                         "ring_seconds", "ring_roundtrips", "sample_period")}
    config.update(loops={n: {"scenario": loops.LOOPS[n][0], "rate_hz": loops.LOOPS[n][1]}
                         for n in names}, placements=placements)
    result = {"benchmark": "loop_measure", "format": 1, "condition": a.condition,
              "command": shlex.join(["bench/loop_measure.py"] + (sys.argv[1:] if argv is None
                                                                  else argv)),
              "machine": info, "config": config, "rows": rows}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    log(f"wrote {a.out} ({len(rows)} rows, {info['wall_s']} s)")
    return 0 if all(not r.get("error") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
