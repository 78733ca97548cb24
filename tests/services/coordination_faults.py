#!/usr/bin/env python3
"""Faults of coordination and keys (issue 27; part of the fault matrix, docs/reliability.md).

The services run as processes (hyloop certs, one hyloop-NAME each, coordinators started with
--services), driven by `hyloop ctl` as an operator would:
  timed_out_load      finding 2: `ctl load ... name=A_long --timeout 1` (which timed out before
                      finding 3's fix and lands in time since), then `ctl load ... name=B_short`
                      succeeds; once A's load is over the coordinator must still hold B_short,
                      and Start runs B's cycles.
  second_coordinator  finding 4: a second coordinator's Start while the first runs real time:
                      the second is refused naming the first coordinator (its lease), the first
                      run finishes.
  curve_mismatch      finding 5: the actuator holds another lab's dynamics CURVE key: the
                      real-time run must fail (not FINISHED), naming the CURVE handshake and the
                      channel, within a few seconds of its start.
Each case reports its checks; exit status 0 when every check passed. Run with --bin of an older
build to see which checks the fixes changed (the fail-before of issue 27).
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "deploy"))
from service_process import Service  # noqa: E402

LOOP_SERVICES = ["rig-emulator", "actuator", "dynamics", "sensor"]
SCENARIO = "scenarios/sits/table1_scvg.yaml"
TERMINAL = ("FINISHED", "STOPPED", "ESTOPPED", "FAILED")


def free_ports(n: int) -> list:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def certs(bindir: str, directory: Path) -> Path:
    """A lab's security directory (`hyloop certs`), made unless it exists."""
    if not directory.exists():
        subprocess.run([os.path.join(bindir, "hyloop"), "certs", "--out", str(directory)],
                       check=True, capture_output=True)
    return directory


class Stack:
    """The loop services as processes; coordinators over them on demand."""

    def __init__(self, bindir: str, work: Path, security_of=None):
        self.bindir = bindir
        self.work = work
        self.security = certs(bindir, work / "security")
        self.processes = []
        security_of = security_of or {}
        for name in LOOP_SERVICES:
            sd = security_of.get(name, self.security)
            self.processes.append(Service(bindir, name, "127.0.0.1:0",
                                          ("--security-dir", str(sd))))
        self.spec = ",".join(f"{s.name}={s.address}" for s in self.processes)

    def coordinator(self, runs: str, endpoints: str = "") -> Service:
        runs_dir = self.work / runs
        runs_dir.mkdir()
        extra = ["--services", self.spec, "--security-dir", str(self.security),
                 "--runs-dir", str(runs_dir)]
        if endpoints:
            extra += ["--endpoints", endpoints]
        c = Service(self.bindir, "coordinator", "127.0.0.1:0", extra)
        self.processes.append(c)
        return c

    def ctl(self, address: str, *args, timeout: float = 300) -> tuple:
        r = subprocess.run([os.path.join(self.bindir, "hyloop"), "ctl", address, *args,
                            "--security-dir", str(self.security), "--role", "operator"],
                           capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout + r.stderr

    def status(self, address: str) -> dict:
        _, out = self.ctl(address, "status")
        fields = {}
        for line in out.splitlines():
            m = re.match(r"^([a-z ]+):\s+(.*)$", line)
            if m:
                fields[m.group(1)] = m.group(2)
        return fields

    def wait(self, address: str, timeout: float) -> dict:
        until = time.monotonic() + timeout
        while True:
            st = self.status(address)
            if st.get("state", "").upper() in TERMINAL or time.monotonic() > until:
                return st
            time.sleep(0.1)

    def stop(self):
        for p in reversed(self.processes):
            p.stop()


def timed_out_load(args, work: Path) -> dict:
    stack = Stack(args.bin, work)
    scenario = str(Path(args.source) / SCENARIO)
    r = {"case": "timed_out_load", "checks": {}}
    try:
        coord = stack.coordinator("runs").address
        # How long reading A takes here (validate builds the same per-step arrays).
        t0 = time.monotonic()
        subprocess.run([os.path.join(args.bin, "hyloop"), "validate", scenario, "--set",
                        f"timing.duration_s={args.long_s}"], capture_output=True, check=True)
        r["validate_long_s"] = round(time.monotonic() - t0, 2)
        rc, out = stack.ctl(coord, "load", "--scenario", scenario, "--set",
                            f"timing.duration_s={args.long_s}", "--set", "name=A_long",
                            "--timeout", "1")
        # Before finding 3 was fixed A's load took seconds and timed out; now it lands within its
        # deadline (loading no longer depends on the run's length) and B must still supersede it.
        # The load that loses its caller mid-read is tested with a slow test kind
        # (ControlRequests.ALoadWhoseCallerTimedOutNeverLandsAfterANewerOne).
        r["a_timed_out"] = rc != 0
        r["a_load"] = out.strip()[-300:]
        rc, out = stack.ctl(coord, "load", "--scenario", scenario, "--set",
                            "timing.duration_s=3", "--set", "name=B_short")
        r["checks"]["B's load succeeded"] = rc == 0
        time.sleep(2 * r["validate_long_s"] + 3)  # A's load is over by now
        held = stack.status(coord).get("scenario", "")
        r["held_after_wait"] = held
        r["checks"]["B_short still held once A's load is over"] = held == "B_short"
        rc, out = stack.ctl(coord, "start", "--out", "run")
        st = stack.wait(coord, 120)
        r["run"] = {k: st.get(k, "") for k in ("state", "scenario", "cycle", "message")}
        r["checks"]["Start ran B's 1500 cycles"] = st.get("cycle", "").replace(" ", "") == \
            "1500/1500" and st.get("scenario") == "B_short"
    finally:
        stack.stop()
    return r


def second_coordinator(args, work: Path) -> dict:
    stack = Stack(args.bin, work)
    scenario = str(Path(args.source) / SCENARIO)
    r = {"case": "second_coordinator", "checks": {}}
    try:
        first = stack.coordinator("runs-a")
        second = stack.coordinator("runs-b")
        rc, out = stack.ctl(first.address, "start", "--scenario", scenario, "--mode", "realtime",
                            "--set", "timing.duration_s=6", "--out", "first")
        r["checks"]["the first run started"] = rc == 0
        time.sleep(1.5)
        rc, out = stack.ctl(second.address, "start", "--scenario", scenario, "--set",
                            "timing.duration_s=2", "--out", "second")
        b = stack.wait(second.address, 60) if rc == 0 else {"state": "refused", "message": out}
        a = stack.wait(first.address, 60)
        r["first"] = {k: a.get(k, "") for k in ("state", "cycle", "message")}
        r["second"] = {k: b.get(k, "") for k in ("state", "message")}
        r["checks"]["the first run finished"] = a.get("state") == "FINISHED"
        r["checks"]["the second was refused naming the first coordinator's lease"] = \
            b.get("state") != "FINISHED" and \
            re.search(rf"leased to coordinator coordinator-\S+-{first.proc.pid}-",
                      b.get("message", "")) is not None
    finally:
        stack.stop()
    return r


def curve_mismatch(args, work: Path) -> dict:
    scenario = str(Path(args.source) / SCENARIO)
    r = {"case": "curve_mismatch", "checks": {}}
    # The actuator's security directory: the lab's, with another lab's dynamics key.
    lab = certs(args.bin, work / "security")
    other_lab = certs(args.bin, work / "other-lab")
    actuator_sd = work / "actuator-security"
    shutil.copytree(lab, actuator_sd)
    shutil.copyfile(other_lab / "curve" / "dynamics.public",
                    actuator_sd / "curve" / "dynamics.public")
    stack = None
    try:
        stack = Stack(args.bin, work, security_of={"actuator": actuator_sd})
        ports = free_ports(5)
        channels = ["rig_to_sensor", "sensor_to_dynamics", "dynamics_to_actuator",
                    "actuator_to_rig", "telemetry"]
        endpoints = ",".join(f"{c}=tcp://127.0.0.1:{p}" for c, p in zip(channels, ports))
        coord = stack.coordinator("runs", endpoints).address
        t0 = time.monotonic()
        rc, out = stack.ctl(coord, "start", "--scenario", scenario, "--mode", "realtime",
                            "--set", "timing.duration_s=6", "--out", "run")
        st = stack.wait(coord, 60)
        r["ended_after_s"] = round(time.monotonic() - t0, 2)
        r["run"] = {k: st.get(k, "") for k in ("state", "cycle", "message")}
        message = st.get("message", "")
        r["checks"]["the run did not finish"] = st.get("state") in ("FAILED", "ESTOPPED")
        r["checks"]["the CURVE handshake and the channel are named"] = \
            "CURVE" in message and "dynamics_to_actuator" in message
        r["checks"]["it ended within 3 s of the start (not the 6 s run)"] = r["ended_after_s"] < 3
    finally:
        if stack:
            stack.stop()
    return r


CASES = {"timed_out_load": timed_out_load, "second_coordinator": second_coordinator,
         "curve_mismatch": curve_mismatch}


def run_cases(args, names) -> list:
    results = []
    for name in names:
        work = Path(tempfile.mkdtemp(prefix=f"hyloop-coord-{name}-"))
        xdg = work / "xdg"
        xdg.mkdir(mode=0o700)
        os.environ["XDG_RUNTIME_DIR"] = str(xdg)
        try:
            r = CASES[name](args, work)
        except Exception as e:  # a case that could not run is a failed case
            r = {"case": name, "checks": {}, "error": repr(e)}
        bad = [k for k, v in r["checks"].items() if not v] + (["error"] if "error" in r else [])
        print(f"{name:20s} {'OK' if not bad else 'FAILED: ' + '; '.join(bad)}\n"
              f"  {json.dumps({k: v for k, v in r.items() if k not in ('case', 'checks')})}",
              flush=True)
        results.append(r)
        if not getattr(args, "keep", False):
            shutil.rmtree(work, ignore_errors=True)
    return results


def add_arguments(p):
    p.add_argument("--long-s", type=float, default=5000,
                   help="timed_out_load: A's duration_s (reading it must take well over 1 s)")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--keep", action="store_true")
    add_arguments(p)
    args = p.parse_args()
    results = run_cases(args, args.cases.split(","))
    failed = sum(1 for r in results if "error" in r or not all(r["checks"].values()))
    print(f"coordination faults: {len(results) - failed} of {len(results)} cases passed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
