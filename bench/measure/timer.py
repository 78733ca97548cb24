"""The reference bare timer: Debian rt-tests' cyclictest at a loop's period.

Run as the loop's services run: SCHED_OTHER (`--policy other`, priority 0; the services ask for
no real-time policy), one thread, absolute deadlines (clock_nanosleep TIMER_ABSTIME, cyclictest's
default), no mlockall, `--default-system` (it leaves /dev/cpu_dma_latency alone: the machine is
shared). The measurement thread's timer slack is set to 1 ns through /proc/TID/timerslack_ns as
soon as the thread exists (hyloop's PeriodicClock sets 1 ns; cyclictest keeps the default 50 µs,
and a slack set before exec does not survive it); the first few wake-ups keep the default.
A miss = a wake-up at least one period late, the definition of hyloop's PeriodicClock.
Latencies in µs from cyclictest's per-µs histogram (`-h`, `--json`).
"""
import json
import os
import subprocess
import tempfile
import time

HIST_MAX_US = 20000  # histogram range; later wake-ups count as overflows (still misses)


def interval_us(rate_hz):
    """cyclictest's interval (whole µs) nearest to 1/rate_hz."""
    return max(1, round(1e6 / rate_hz))


def _set_slack(pid, ns=1):
    """Timer slack of every thread of `pid` to `ns`; True if every write succeeded."""
    ok = True
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tids:
        try:
            with open(f"/proc/{tid}/timerslack_ns", "w", encoding="ascii") as f:
                f.write(str(ns))
        except OSError:
            ok = False
    return ok and len(tids) >= 2


def _run(rate_hz, seconds, json_path):
    """Runs cyclictest; returns (return code, stderr, slack set)."""
    loops = max(1, round(seconds * 1e6 / interval_us(rate_hz)))  # -D takes whole seconds only
    cmd = ["cyclictest", "-q", "-l", str(loops), "-i", str(interval_us(rate_hz)),
           "-h", str(HIST_MAX_US), "--policy", "other", "--default-system",
           f"--json={json_path}"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    slack = False
    for _ in range(50):  # the measurement thread appears within milliseconds
        time.sleep(0.005)
        if _set_slack(p.pid):
            slack = True
            break
    _, err = p.communicate()
    return p.returncode, err.strip(), slack, " ".join(cmd[:-1] + ["--json=FILE"])


def _percentile(hist, total, q):
    """Nearest-rank percentile (µs) of a {µs: count} histogram over `total` samples; None when
    it lies beyond the histogram (an overflow)."""
    rank, seen = max(1, int(-(-q * total // 1))), 0
    for us in sorted(hist):
        seen += hist[us]
        if seen >= rank:
            return float(us)
    return None


def row(rate_hz, seconds):
    """One bare-timer row: wake-up latency percentiles (µs) and misses at `rate_hz`."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ct.json")
        rc, err, slack, cmd = _run(rate_hz, seconds, path)
        if rc != 0 or not os.path.exists(path):
            return {"error": f"cyclictest exit {rc}: {err}", "command": cmd}
        with open(path, encoding="utf-8") as f:
            thread = json.load(f)["thread"]["0"]
    hist = {int(k): v for k, v in thread["histogram"].items()}
    cycles = thread["cycles"]
    period = interval_us(rate_hz)
    misses = cycles - sum(v for k, v in hist.items() if k < period)
    return {"command": cmd, "interval_us": period, "timer_slack_1ns": slack,
            "histogram_max_us": HIST_MAX_US,
            "n": cycles,
            "latency_us": {"p50": _percentile(hist, cycles, 0.5),
                           "p99": _percentile(hist, cycles, 0.99),
                           "p99_9": _percentile(hist, cycles, 0.999),
                           "max": float(thread["max"])},
            "late": misses, "timer_misses": misses, "deadlines": cycles,
            "miss_rate": misses / cycles if cycles else None,
            "warning": err if err else None}
