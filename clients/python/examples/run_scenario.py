#!/usr/bin/env python3
"""Run a scenario through a coordinator, print some telemetry and the summary's metrics.

    python3 run_scenario.py 127.0.0.1:50051 scenarios/sits/table1_scvg.yaml run1 --security-dir DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # hyloop_client

import grpc  # noqa: E402

from hyloop_client import HyloopClient, state_name  # noqa: E402


def main() -> int:
    """Parse the arguments, run the scenario, print the results."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("address", help="coordinator host:port")
    p.add_argument("scenario", help="scenario YAML file")
    p.add_argument("out", help="run directory to write: a name in the coordinator's --runs-dir")
    p.add_argument("--security-dir", help="the lab's security directory (ca.crt, tokens/)")
    p.add_argument("--role", default="operator", help="token of --security-dir to use")
    p.add_argument("--ca", help="CA certificate (with --token-file)")
    p.add_argument("--token-file", help="token file (with --ca)")
    p.add_argument("--insecure", action="store_true", help="plaintext (a stack run --insecure)")
    p.add_argument("--set", action="append", default=[], dest="overrides",
                   help="override a field: dotted.path=value (repeatable)")
    p.add_argument("--mode", choices=("lockstep", "real_time", "realtime"), default="lockstep")
    p.add_argument("--lines", type=int, default=5, help="telemetry lines to print")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the end")
    args = p.parse_args()

    with HyloopClient(args.address, security_dir=args.security_dir, role=args.role,
                      ca_file=args.ca, token_file=args.token_file,
                      insecure=args.insecure) as client:
        loaded = client.load_scenario(args.scenario, args.overrides)
        print(f"loaded {loaded.name} ({loaded.kind}): {loaded.total_cycles} cycles "
              f"of {loaded.step_s} s")
        status = client.start(args.out, mode=args.mode)
        print(f"started run {status.run_id} -> {status.out_dir}")
        decimation = max(1, loaded.total_cycles // max(1, args.lines))
        for i, frame in enumerate(client.telemetry(decimation=decimation)):
            if i < args.lines:
                values = [(k, v) for k, v in frame["values"].items()
                          if not k.startswith("time[")][:4]
                shown = "  ".join(f"{k}={v:.6g}" for k, v in values)
                print(f"cycle {frame['cycle']:8d}  t {frame['t']:9.4f} s  {shown}")
        final = client.wait(timeout_s=args.timeout)
        print(f"run {final.run_id}: {state_name(final.state)} after {final.cycle} cycles"
              + (f" ({final.message})" if final.message else ""))
        summary = client.summary(final.run_id)
    for key in ("kind", "compensator", "duration_s", "diverged"):
        if key in summary:
            print(f"{key}: {summary[key]}")
    for key, value in (summary.get("metrics") or {}).items():
        print(f"metrics.{key}: {value}")
    return 0 if state_name(final.state) == "FINISHED" else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except grpc.RpcError as e:
        sys.exit(f"run_scenario: {e.code().name}: {e.details()}")
