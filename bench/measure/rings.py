"""The rings: raw UDS, bare ZeroMQ and hyloop, 4 hops, as processes and as threads
(bench/ring_bench.cpp; docs/performance.md, "Loop rings"), with ring_bench's own bare timer
(hyloop's PeriodicClock with no ring) at each rate.

One ring_bench invocation per round runs, in its order, the back-to-back rings and then, per
rate, its timer followed by the six paced rings. It is run with `--spin-us 0` (sleep only, timer
slack 1 ns, miss = a wake-up one period late or a round trip not back by the next deadline), the
configuration of the services' rig emulator and of the coordinator's bare timer.
The load average before and after is the invocation's, not each ring's.
"""
import json
import os
import subprocess
import tempfile

from . import procstat


def _row(r):
    """One ring_bench row in the results file's row shape (latency µs: the round trip)."""
    lat = r["latency_us"]
    timer = r["transport"] == "timer"
    if timer:
        lat = dict(r["wake_lateness_us"] or {})
        lat.setdefault("p99_9", None)
    return {"name": "PeriodicClock (ring_bench)" if timer else r["transport"],
            "placement": "none" if timer else r["placement"],
            "pacing": r["pacing"], "rate_hz": r["rate_hz"], "n": r["n"] or r["deadlines"],
            "latency_us": {k: lat.get(k) for k in ("p50", "p99", "p99_9", "max")},
            "late": r["missed"] if r["rate_hz"] else None,
            "timer_misses": (r["clock_misses"] + r["clock_skipped"]) if r["rate_hz"] else None,
            "deadlines": r["deadlines"] if r["rate_hz"] else None,
            "miss_rate": r["miss_rate"] if r["rate_hz"] else None,
            "ratio_to_own_clock": r["miss_ratio_vs_timer"] if r["rate_hz"] else None,
            "lost": r["lost"], "rejected": r["rejected"], "error": r["error"]}


def rows(binary_dir, rates_hz, seconds, roundtrips):
    """Runs ring_bench once; returns (rows, load before, load after, command)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ring.json")
        cmd = [os.path.join(binary_dir, "ring_bench"), "--rates", ",".join(map(str, rates_hz)),
               "--seconds", f"{seconds:g}", "--roundtrips", str(roundtrips),
               "--warmup", str(max(10, roundtrips // 20)), "--spin-us", "0", "--out", out]
        before = procstat.load_average()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           check=False)
        after = procstat.load_average()
        if not os.path.exists(out):
            return [{"name": "ring_bench", "error": f"exit {p.returncode}: {p.stderr[-500:]}"}], \
                before, after, " ".join(cmd)
        with open(out, encoding="utf-8") as f:
            result = json.load(f)
    return [_row(r) for r in result["rows"]], before, after, " ".join(cmd[:-2])

