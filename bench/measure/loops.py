"""The real loop through the services: `hyloop up <scenario> --mode real_time`, as processes
(the six services on loopback, ipc:// loop channels) or co-located (`--inproc`: the services as
components of one process, inproc:// channels), with /proc sampled while it runs. A placement
ending in "+fifo" (e.g. "colocated+fifo") runs the same with every loop thread's real-time
set-up asked for (`--service-config` with `rt: {enabled: true}`: SCHED_FIFO priority 80,
mlockall, timer slack 1 ns; issue 26's lever), and records what each thread got
(summary.json's distributed.realtime).

From the run's summary.json (`distributed`, written by services/coordinator): sample→command
latency percentiles (µs, measured at the actuator from the rig's sample time to the command's
arrival), late commands (cycles the rig ran on a held command), the rig's timer misses, the
coordinator's own bare PeriodicClock at the loop's period (its ticks and misses), skipped cycles
and the run's state. Late % = late commands / the run's steps, for a run that ran all its
planned steps only (a run a stop rule ended has counts but no rate).
"""
import json
import os
import shutil
import subprocess
import tempfile

from . import procstat

# The FCU scenario needs a run longer than its 2 s ramp-in and twice its 1 s delay search:
# runs shorter than 2.5 s fail its validation (the row then holds hyloop's message).
LOOPS = {  # name: (scenario relative to the repository, rate Hz)
    "sits": ("scenarios/sits/table1_scvg.yaml", 500),
    "fcu": ("scenarios/fcu/polynomial.yaml", 1000),
    "vrths": ("scenarios/vrths/case1_amb.yaml", 4096),
}


FIFO = "+fifo"
RT_CONFIG = "rt: {enabled: true, priority: 80, lock_memory: true, timer_slack_ns: 1}\n"


def _command(binary_dir, root, loop, placement, seconds, out, rt_config):
    """The hyloop up command line of one loop row (`rt_config`: the service configuration file
    of a "+fifo" placement)."""
    cmd = [os.path.join(binary_dir, "hyloop"), "up", os.path.join(root, LOOPS[loop][0]),
           "--out", out, "--mode", "real_time", "--set", f"timing.duration_s={seconds:g}"]
    if placement.endswith(FIFO):
        cmd += ["--service-config", rt_config]
    return cmd + (["--inproc"] if placement.startswith("colocated") else [])


def _from_summary(summary):
    """The row's figures from a run's summary.json."""
    d = summary["distributed"]
    lat, miss, bare = d.get("latency_sample_to_command", {}), d.get("loop_misses", {}), \
        d.get("bare_timer", {})
    steps, planned = summary.get("steps") or 0, summary.get("planned_steps")
    late = miss.get("late_commands")
    # A run a stop rule ended early is no rate: the rig goes on counting late commands while it
    # holds at rest, so its count can exceed the cycles run.
    complete = bool(steps) and steps == planned and late is not None
    return {"n": lat.get("n"), "steps": steps, "planned_steps": planned, "complete": complete,
            "latency_us": {k: lat.get(k + "_us") for k in ("p50", "p99", "p99_9", "max")},
            "late": late, "late_percent": 100.0 * late / steps if complete else None,
            "timer_misses": miss.get("rig_timer_misses"), "deadlines": steps,
            "miss_rate": late / steps if complete else None,
            "loop_miss_rate": miss.get("rate"),
            "own_clock": {"ticks": bare.get("ticks"), "misses": bare.get("misses"),
                          "rate": bare.get("rate")},
            "state": d.get("state"), "message": d.get("message"),
            "skipped_cycles": d.get("skipped_cycles"),
            "deadline_misses": d.get("deadline_misses"),
            "rejected_messages_total": d.get("rejected_messages_total"),
            "realtime": d.get("realtime")}


def _resources(sampler, placement, rate_hz):
    """Per-process CPU and wake-ups per cycle over the window the loop's clock was running."""
    clock = "hyloop" if placement.startswith("colocated") else "hyloop-rig-emulator"
    window = procstat.active_window(sampler.samples, clock, rate_hz)
    if window is None:
        return {"error": f"no sampling interval in which {clock} woke ≥ rate/2 times a second "
                         f"({len(sampler.samples)} samples): run too short for the sampler"}
    res = procstat.per_cycle(sampler.samples, window, rate_hz)
    res["window_rule"] = (f"sampling intervals in which {clock} woke ≥ rate/2 times a second, "
                          "less the first and last of them")
    return res


def row(binary_dir, root, loop, placement, seconds, sample_period_s):
    """Runs one loop; returns its row (figures, per-process resources, the command)."""
    tmp = tempfile.mkdtemp(prefix="loop_measure-")
    try:
        out = os.path.join(tmp, "run")
        rt_config = os.path.join(tmp, "rt.yaml")
        with open(rt_config, "w", encoding="utf-8") as f:
            f.write(RT_CONFIG)
        cmd = _command(binary_dir, root, loop, placement, seconds, out, rt_config)
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             cwd=tmp)
        sampler = procstat.Sampler(p.pid, sample_period_s)
        sampler.start()
        _, err = p.communicate()
        sampler.stop()
        r = {"name": loop, "placement": placement, "rate_hz": LOOPS[loop][1],
             "command": " ".join(cmd).replace(out, "RUN_DIR").replace(rt_config, "RT_YAML")
             .replace(root + "/", ""),
             "exit_code": p.returncode}
        summary_path = os.path.join(out, "summary.json")
        if not os.path.exists(summary_path):
            r["error"] = f"no summary.json (exit {p.returncode}): {err.strip()[-500:]}"
            return r
        with open(summary_path, encoding="utf-8") as f:
            r.update(_from_summary(json.load(f)))
        r["resources"] = _resources(sampler, placement, LOOPS[loop][1])
        return r
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
