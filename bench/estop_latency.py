#!/usr/bin/env python3
"""E-stop latency through the services (issue 15, defect 8; docs/performance.md, "Emergency stop").

`hyloop up --serve` starts the six services as processes on loopback. N times: a real-time run of
the SITS SCVG scenario (T = 2 ms, Tc = 4 ms) is started, an EmergencyStop is sent to the
coordinator at a random instant 0.5-1.5 s into it, the run ends ESTOPPED, and an operator Reset
clears the latch for the next run. Per stop it records
  estop_latency_us  the summary's number, measured in the actuator: from the arrival of the
                    EmergencyStop call in its gRPC handler (CLOCK_MONOTONIC) to the send of the first
                    command of the stopping ramp to the rig (the rig applies it at its next tick,
                    at most T later);
  rpc_us            the client's EmergencyStop round trip: client -> coordinator, the coordinator's
                    calls to the actuator (first), dynamics, sensor and rig emulator, and back.
Writes the stops and their percentiles (p50, p90, p99, max) as JSON.
Usage: bench/estop_latency.py [--n 50] [--build build] [--out bench/results/estop_latency.json]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time


def percentiles(values):
    v = sorted(values)
    if not v:
        return {"n": 0}
    at = lambda q: v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]
    return {"n": len(v), "p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "max": v[-1],
            "min": v[0]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=50)
    p.add_argument("--build", default="build")
    p.add_argument("--out", default="bench/results/estop_latency.json")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(os.path.abspath(a.build), "python"))
    import grpc
    from hyloop.v1 import control_pb2, control_pb2_grpc

    runs = "/tmp/hyloop-estop-bench-%d" % os.getpid()
    os.makedirs(runs, exist_ok=True)
    up = subprocess.Popen([os.path.join(a.build, "bin", "hyloop"), "up", "--serve", "--runs-dir",
                           runs], stdout=subprocess.PIPE, text=True)
    address = security = None
    while address is None:
        line = up.stdout.readline()
        if not line:
            raise SystemExit("hyloop up --serve did not start")
        parts = line.split()
        if parts and parts[0] == "hyloop-security-dir":
            security = parts[1]
        if len(parts) == 3 and parts[0] == "hyloop-coordinator" and parts[1] == "grpc":
            address = parts[2]
    token = open(os.path.join(security, "tokens", "operator")).read().strip()
    creds = grpc.composite_channel_credentials(
        grpc.ssl_channel_credentials(open(os.path.join(security, "ca.crt"), "rb").read()),
        grpc.access_token_call_credentials(token))
    stub = control_pb2_grpc.ExperimentStub(grpc.secure_channel(address, creds))
    scenario = open(os.path.join(root, "scenarios/sits/table1_scvg.yaml")).read()
    stub.LoadScenario(control_pb2.LoadScenarioRequest(
        scenario_yaml=scenario, overrides=["timing.duration_s=30"]), timeout=20)
    rng = random.Random(a.seed)
    stops = []
    skipped = []  # runs that ended by themselves before the stop was sent
    load_before = open("/proc/loadavg").read().split()[:3]
    try:
        for i in range(a.n):
            name = "stop_%03d" % i
            stub.Start(control_pb2.StartRequest(out_dir=name,
                                                mode=control_pb2.CLOCK_MODE_REAL_TIME), timeout=20)
            s = stub.GetStatus(control_pb2.StatusRequest(), timeout=20)
            while s.cycle < 10 and s.state < control_pb2.RUN_STATE_FINISHED:
                time.sleep(0.02)
                s = stub.GetStatus(control_pb2.StatusRequest(), timeout=20)
            if s.state >= control_pb2.RUN_STATE_FINISHED:  # ended before the stop (a fault)
                print("%3d ended before the stop: %s" % (i, s.message), flush=True)
                stub.Reset(control_pb2.ResetRequest(reason="bench"), timeout=20)
                skipped.append(s.message)
                continue
            time.sleep(rng.uniform(0.5, 1.5))
            t0 = time.monotonic_ns()
            stub.EmergencyStop(control_pb2.EmergencyStopRequest(reason="bench"), timeout=20)
            rpc_us = (time.monotonic_ns() - t0) * 1e-3
            while True:
                s = stub.GetStatus(control_pb2.StatusRequest(), timeout=20)
                if s.state >= control_pb2.RUN_STATE_FINISHED:
                    break
                time.sleep(0.05)
            summary = json.load(open(os.path.join(runs, name, "summary.json")))
            d = summary["distributed"]
            stops.append({"state": control_pb2.RunState.Name(s.state),
                          "estop_latency_us": d.get("estop_latency_us"), "rpc_us": rpc_us,
                          "cycle": summary["steps"]})
            stub.Reset(control_pb2.ResetRequest(reason="bench"), timeout=20)
            print("%3d %s estop_latency %s us, rpc %.0f us" %
                  (i, stops[-1]["state"], stops[-1]["estop_latency_us"], rpc_us), flush=True)
    finally:
        up.terminate()
        up.wait(10)
        subprocess.run(["rm", "-rf", runs])
    latency = [s["estop_latency_us"] for s in stops if s["estop_latency_us"]]
    result = {"n": len(stops), "period_s": 0.002, "control_period_s": 0.004,
              "estopped": sum(s["state"] == "RUN_STATE_ESTOPPED" for s in stops),
              "load_before": load_before, "load_after": open("/proc/loadavg").read().split()[:3],
              "estop_latency_us": percentiles(latency),
              "within_control_period": sum(x < 4000.0 for x in latency),
              "rpc_us": percentiles([s["rpc_us"] for s in stops]), "stops": stops,
              "ended_before_stop": skipped}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps({k: result[k] for k in ("n", "estopped", "estop_latency_us",
                                             "within_control_period", "rpc_us")}, indent=2))


if __name__ == "__main__":
    main()
