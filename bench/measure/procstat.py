"""Per-process CPU time and context switches read from /proc while a loop runs.

A sampler thread reads, every `period_s` seconds, for a root process and all its descendants:
utime + stime of the whole process (/proc/PID/stat, clock ticks of 1/SC_CLK_TCK s) and the
voluntary + involuntary context switches summed over its threads (/proc/PID/task/*/status; the
process's own status file counts its main thread only). A thread that ends keeps the counts it
had at its last sample (so the totals never go back); its switches after that sample are lost:
the counts are a lower bound. CPU time has a resolution of one clock tick (10 ms
at 100 Hz), so over N cycles the per-cycle CPU time is ±10 ms / N.
"""
import os
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _read(path):
    """The text of a /proc file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def children_of(root):
    """PIDs of `root` and every descendant (one scan of /proc)."""
    parent = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = _read(f"/proc/{name}/stat")
        except OSError:
            continue
        parent[int(name)] = int(stat[stat.rfind(")") + 2:].split()[1])
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(p for p, pp in parent.items() if pp == pid)
    return found


def sample(pid, seen_threads=None):
    """One process's counters: {"name", "cpu_s", "wakeups", "voluntary", "involuntary"}, or None.
    seen_threads: {tid: (voluntary, involuntary)} kept between samples of this process: a thread
    that has ended still counts with its last values."""
    seen = {} if seen_threads is None else seen_threads
    try:
        stat = _read(f"/proc/{pid}/stat")
        name = _read(f"/proc/{pid}/cmdline").split("\0")[0]
        fields = stat[stat.rfind(")") + 2:].split()
        cpu_s = (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime
        for tid in os.listdir(f"/proc/{pid}/task"):
            counts = _switches(f"/proc/{pid}/task/{tid}/status")
            if counts is not None:
                seen[tid] = counts
    except (OSError, IndexError, ValueError):
        return None
    vol = sum(v for v, _ in seen.values())
    invol = sum(i for _, i in seen.values())
    return {"name": os.path.basename(name) or str(pid), "cpu_s": cpu_s, "voluntary": vol,
            "involuntary": invol, "wakeups": vol + invol}


def _switches(status_path):
    """(voluntary, involuntary) context switches of one thread, or None if it has ended."""
    vol = invol = 0
    try:
        for line in _read(status_path).splitlines():
            if line.startswith("voluntary_ctxt_switches"):
                vol = int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches"):
                invol = int(line.split()[1])
    except OSError:
        return None
    return vol, invol


class Sampler:
    """Samples `root` and its descendants every `period_s` seconds until stop()."""

    def __init__(self, root, period_s):
        """root: the PID whose tree is sampled; period_s: seconds between samples."""
        self.root, self.period_s = root, period_s
        self.samples = []  # (monotonic time s, {pid: sample})
        self._threads = {}  # pid: {tid: (voluntary, involuntary)} at its last sample
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        """Starts sampling in a daemon thread."""
        self._thread.start()

    def stop(self):
        """Stops sampling and waits for the thread."""
        self._stop.set()
        self._thread.join()

    def _run(self):
        """The sampling loop: one snapshot of the tree per period."""
        while not self._stop.is_set():
            t = time.monotonic()
            snap = {}
            for pid in children_of(self.root):
                s = sample(pid, self._threads.setdefault(pid, {}))
                if s is not None:
                    snap[pid] = s
            self.samples.append((t, snap))
            self._stop.wait(self.period_s)


def active_window(samples, clock_pid_name, rate_hz):
    """(i, j): the first and last sample bounding the intervals in which the process named
    `clock_pid_name` (the loop's clock: the rig emulator, or the one co-located process) woke at
    least rate_hz / 2 times a second, without the first and the last such interval when there
    are four or more (they may hold start-up or teardown); None if no interval did."""
    active = []
    for i in range(1, len(samples)):
        (t0, a), (t1, b) = samples[i - 1], samples[i]
        pa = next((p for p, s in a.items() if s["name"] == clock_pid_name), None)
        if pa is None or pa not in b or t1 <= t0:
            continue
        if (b[pa]["voluntary"] - a[pa]["voluntary"]) / (t1 - t0) >= 0.5 * rate_hz:
            active.append(i)
    if len(active) >= 4:  # the first and last active intervals may be partly start-up/teardown
        active = active[1:-1]
    return (active[0] - 1, active[-1]) if active else None


def per_cycle(samples, window, rate_hz):
    """Per process over `window`: CPU µs per cycle, wake-ups (context switches) per cycle, CPU %
    of one core. Cycles = window seconds × rate_hz."""
    (t0, a), (t1, b) = samples[window[0]], samples[window[1]]
    cycles = (t1 - t0) * rate_hz
    out = {"window_s": round(t1 - t0, 3), "cycles": round(cycles), "processes": {}}
    for pid, s in b.items():
        if pid not in a:
            continue
        cpu = s["cpu_s"] - a[pid]["cpu_s"]
        key = s["name"] if s["name"] not in out["processes"] else f'{s["name"]}[{pid}]'
        out["processes"][key] = {
            "cpu_us_per_cycle": round(1e6 * cpu / cycles, 2),
            "cpu_percent_of_core": round(100 * cpu / (t1 - t0), 1),
            "wakeups_per_cycle": round((s["wakeups"] - a[pid]["wakeups"]) / cycles, 3),
            "voluntary_per_cycle": round((s["voluntary"] - a[pid]["voluntary"]) / cycles, 3),
            "involuntary_per_cycle": round((s["involuntary"] - a[pid]["involuntary"]) / cycles, 3)}
    return out


def load_average():
    """The load average (1, 5, 15 min) from /proc/loadavg."""
    with open("/proc/loadavg", encoding="ascii") as f:
        return [float(x) for x in f.read().split()[:3]]
