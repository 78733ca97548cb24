#!/usr/bin/env python3
"""The one-hour real-time soak (issue 26): SITS SCVG co-located (`hyloop up --inproc --mode
real_time`), the process's resident memory and the load average sampled every 10 s, then the
late commands per minute (summary.json's loop_misses.late_commands_per_minute), the memory's
growth and the samples kept, written to a results file and plotted.

  bench/soak.py run --bin build/bin --seconds 3600 [--rt] --dir DIR
  bench/soak.py report --dir DIR --results bench/results/soak_sits.json --plot docs/img/soak.png

`run` writes DIR/run (the run directory), DIR/rss.csv (t_s, rss_kb, load1) and DIR/up.log;
`--rt` asks every loop thread for SCHED_FIFO and locked memory (docs/performance.md). `report`
asserts nothing: it measures (DESIGN §9; performance is reported, not asserted).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "scenarios", "sits", "table1_scvg.yaml")


def run(a):
    os.makedirs(a.dir, exist_ok=True)
    cmd = [os.path.join(a.bin, "hyloop"), "up", SCENARIO, "--out", os.path.join(a.dir, "run"),
           "--inproc", "--mode", "real_time", "--set", f"timing.duration_s={a.seconds:g}"]
    if a.rt:
        rt = os.path.join(a.dir, "rt.yaml")
        with open(rt, "w", encoding="utf-8") as f:
            f.write("rt: {enabled: true, priority: 80, lock_memory: true}\n")
        cmd += ["--service-config", rt]
    with open(os.path.join(a.dir, "up.log"), "w", encoding="utf-8") as log, \
            open(os.path.join(a.dir, "rss.csv"), "w", encoding="utf-8") as out:
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        out.write("t_s,rss_kb,load1\n")
        start = time.monotonic()
        while p.poll() is None:
            rss = ""
            try:
                with open(f"/proc/{p.pid}/status", encoding="utf-8") as f:
                    rss = next((x.split()[1] for x in f if x.startswith("VmRSS")), "")
            except OSError:
                pass
            with open("/proc/loadavg", encoding="utf-8") as f:
                load = f.read().split()[0]
            out.write(f"{time.monotonic() - start:.0f},{rss},{load}\n")
            out.flush()
            time.sleep(10)
    return p.returncode


def fit_slope(xs, ys):
    """Least-squares slope of ys on xs."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0


def report(a):
    with open(os.path.join(a.dir, "run", "summary.json"), encoding="utf-8") as f:
        s = json.load(f)
    with open(os.path.join(a.dir, "rss.csv"), encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["rss_kb"]]
    t = [float(r["t_s"]) for r in rows]
    rss = [float(r["rss_kb"]) / 1024.0 for r in rows]
    load = [float(r["load1"]) for r in rows]
    d = s["distributed"]
    per_minute = d["loop_misses"].get("late_commands_per_minute", [])
    step = s.get("step_s") or 0.002
    cycles_per_minute = round(60.0 / step)
    # The memory after the first minute (start-up) to the end: its slope, MB per minute.
    after = [(x, y) for x, y in zip(t, rss) if x >= 60.0]
    slope = 60.0 * fit_slope([x for x, _ in after], [y for _, y in after]) if len(after) > 2 else None
    result = {
        "note": a.note,
        "scenario": "scenarios/sits/table1_scvg.yaml, co-located (--inproc), real time",
        "stop_reason": s.get("stop_reason"),
        "steps": s.get("steps"), "planned_steps": s.get("planned_steps"),
        "skipped_cycles": d.get("skipped_cycles"),
        "late_commands": d["loop_misses"].get("late_commands"),
        "late_commands_per_minute": per_minute,
        "late_percent_per_minute": [100.0 * n / cycles_per_minute for n in per_minute],
        "rig_timer_misses": d["loop_misses"].get("rig_timer_misses"),
        "bare_timer": d.get("bare_timer"),
        "latency_sample_to_command": d.get("latency_sample_to_command"),
        "realtime": d.get("realtime"),
        "rss_mb": {"first": rss[0] if rss else None, "at_1_min": after[0][1] if after else None,
                   "last": rss[-1] if rss else None, "max": max(rss) if rss else None,
                   "slope_mb_per_min_after_1_min": slope},
        "load1": {"min": min(load) if load else None, "max": max(load) if load else None},
    }
    with open(a.results, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    minutes = [i + 0.5 for i in range(len(per_minute))]
    ax1.bar(minutes, result["late_percent_per_minute"], width=0.8, color="tab:red")
    ax1.set_ylabel("late commands, % of the minute's cycles")
    ax1.set_title(f"SITS co-located, real time, {len(per_minute)} min: "
                  f"{result['late_commands']} late of {s.get('steps')} cycles "
                  f"({result['stop_reason'] or 'finished'})")
    ax1.grid(alpha=0.3)
    ax2.plot([x / 60.0 for x in t], rss, color="tab:blue", label="resident memory (MB)")
    ax2.set_ylabel("resident memory, MB")
    ax2.set_xlabel("time, min")
    ax2.grid(alpha=0.3)
    ax3 = ax2.twinx()
    ax3.plot([x / 60.0 for x in t], load, color="tab:gray", alpha=0.5, label="load average (1 min)")
    ax3.set_ylabel("load average, 1 min")
    fig.tight_layout()
    fig.savefig(a.plot, dpi=90)
    print(json.dumps({k: result[k] for k in ("stop_reason", "steps", "planned_steps",
                                             "skipped_cycles", "late_commands", "rss_mb",
                                             "load1")}, indent=1))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    r.add_argument("--seconds", type=float, default=3600.0)
    r.add_argument("--rt", action="store_true")
    r.add_argument("--dir", required=True)
    q = sub.add_parser("report")
    q.add_argument("--dir", required=True)
    q.add_argument("--results", required=True)
    q.add_argument("--plot", required=True)
    q.add_argument("--note", default="", help="how the soak was run, for the results file")
    a = p.parse_args()
    return run(a) if a.what == "run" else report(a)


if __name__ == "__main__":
    sys.exit(main())
