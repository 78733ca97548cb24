#!/usr/bin/env python3
"""The metrics of the deployment, end to end (issue 4; DESIGN §9).

Starts every service with its metrics port (deploy/prometheus/prometheus-local.yml's targets),
checks each /metrics with `promtool check metrics`, starts Debian's Prometheus on loopback with
the project's scrape configuration, then drives the stack through the Python client:
  real-time SITS SCVG, real-time adaptive RHT, real-time FCU with polynomial extrapolation, a
  SITS run with a tight rate limit (limit hits), online RLS during an identification run through
  the stack, an emergency stop, and last a run whose dynamics service hangs (watchdog).
Then, through Prometheus's HTTP API: every PromQL expression of the Grafana dashboards returns
data while the whole stack is up; every metric of docs/metrics.md has samples and every series
changed during the test (not merely exists). Writes a JSON report (--out).
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from service_process import Service

SERVICES = ["rig-emulator", "sensor", "actuator", "dynamics", "identification", "coordinator"]
PORTS = {name: 9464 + i for i, name in enumerate(SERVICES)}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url, timeout=5):
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=timeout) as r:
        return r.read().decode()


SECURITY = {"dir": ""}  # `hyloop certs` output: TLS and tokens of the control plane


def start(bindir, name, extra=()):
    return Service(bindir, name, "127.0.0.1:0",
                   ("--metrics-address", "127.0.0.1:%d" % PORTS[name],
                    "--security-dir", SECURITY["dir"], *extra))


def contract_metrics(source):
    """(name, type) of every metric in docs/metrics.md's tables (check_dashboards reads them)."""
    sys.path.insert(0, os.path.join(source, "deploy/grafana"))
    from check_dashboards import contract  # noqa: E402
    return sorted(contract().items())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--stubs", required=True)
    p.add_argument("--out", default="")
    a = p.parse_args()
    prometheus = shutil.which("prometheus")
    promtool = shutil.which("promtool")
    if prometheus is None or promtool is None:
        print("SKIP: Debian's prometheus (server and promtool) is not installed")
        return 77
    sys.path.insert(0, os.path.join(a.source, "clients/python"))
    os.environ["HYLOOP_PYTHON_STUBS"] = a.stubs
    from hyloop_client import HyloopClient  # noqa: E402
    import grpc  # noqa: E402
    sys.path.insert(0, a.stubs)
    from hyloop.v1 import control_pb2, control_pb2_grpc  # noqa: E402

    work = tempfile.mkdtemp(prefix="hyloop-prom-")
    services, prom = [], None
    report = {"problems": []}
    try:
        SECURITY["dir"] = os.path.join(work, "security")
        subprocess.run([os.path.join(a.bin, "hyloop"), "certs", "--out", SECURITY["dir"]],
                       check=True, capture_output=True)

        def operator_channel(address):
            with open(os.path.join(SECURITY["dir"], "ca.crt"), "rb") as f:
                ca = f.read()
            with open(os.path.join(SECURITY["dir"], "tokens", "operator")) as f:
                token = f.read().strip()
            return grpc.secure_channel(address, grpc.composite_channel_credentials(
                grpc.ssl_channel_credentials(root_certificates=ca),
                grpc.access_token_call_credentials(token)))

        for name in SERVICES[:-1]:
            services.append(start(a.bin, name))
        spec = ",".join("%s=%s" % (s.name, s.address) for s in services)
        services.append(start(a.bin, "coordinator", ("--services", spec, "--runs-dir", work)))
        coordinator = services[-1].address

        # promtool check metrics on every service's exposition.
        for s in services:
            text = http("http://127.0.0.1:%d/metrics" % PORTS[s.name])
            r = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                               capture_output=True)
            if r.returncode != 0:
                report["problems"].append("promtool check metrics %s: %s" % (s.name, r.stdout + r.stderr))
        prom_port = free_port()
        prom = subprocess.Popen(
            [prometheus, "--config.file=" + os.path.join(a.source, "deploy/prometheus/prometheus-local.yml"),
             "--storage.tsdb.path=" + os.path.join(work, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % prom_port, "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        api = "http://127.0.0.1:%d/api/v1/" % prom_port
        for _ in range(100):
            try:
                http(api + "status/buildinfo")
                break
            except Exception:
                time.sleep(0.2)
        time.sleep(2)  # a first scrape before anything runs

        client = HyloopClient(coordinator, security_dir=SECURITY["dir"])
        sits = os.path.join(a.source, "scenarios/sits/table1_scvg.yaml")
        rht = os.path.join(a.source, "scenarios/rht/p4_noise.yaml")
        fcu = os.path.join(a.source, "scenarios/fcu/polynomial.yaml")

        def run(name, scenario, overrides, mode="realtime", action=None):
            client.load_scenario(scenario, overrides)
            client.start(name, mode)  # a run directory in the coordinator's --runs-dir
            if action:
                action()
            st = client.wait(300)
            report.setdefault("runs", {})[name] = "%s: %s" % (
                control_pb2.RunState.Name(st.state), st.message)
            return st

        run("sits_rt", sits, ["timing.duration_s=8", "metrics.window_s=5",
                              "compensator.switch_time_s=2"])
        run("rht_rt", rht, ["timing.duration_s=6", "metrics.settle_time_s=1"])
        run("fcu_rt", fcu, ["timing.duration_s=6"])
        # Faults that move the event series: a tight rate limit (limit hits) and a rig link
        # that corrupts every 100th measurement (rejected as malformed by the sensor). A rig held
        # to 5 mm/s cannot follow the model: the energy guard would stop it at 0.08 s, before the
        # series move, so it is off here.
        run("sits_rate_limited", sits, ["timing.duration_s=3", "metrics.window_s=2",
                                        "safety.rate_limit_mps=0.005", "guard.enabled=false",
                                        "rig.faults.corrupt_message_every=100"])
        ident = control_pb2_grpc.IdentificationStub(operator_channel(services[4].address))
        ident.StartOnlineRls(control_pb2.OnlineRlsRequest(parameters=4, forgetting_factor=0.99))
        coord_ident = control_pb2_grpc.IdentificationStub(operator_channel(coordinator))
        coord_ident.RunIdentification(control_pb2.RunIdentificationRequest(
            scenario_yaml=open(os.path.join(a.source, "scenarios/sits/identify.yaml")).read()),
            timeout=120)
        run("sits_estop", sits, ["timing.duration_s=20", "metrics.window_s=5"],
            action=lambda: (time.sleep(2), client.estop("metrics test")))
        client.reset("metrics test: the e-stop was intended")  # it latches until reset
        time.sleep(3)  # scrapes of the healthy stack

        def query(expr):
            body = json.loads(http(api + "query?" + urllib.parse.urlencode({"query": expr})))
            if body.get("status") != "success":
                raise RuntimeError(expr + ": " + json.dumps(body))
            return body["data"]["result"]

        # Every dashboard expression returns data while the whole stack is up.
        dash = subprocess.run([sys.executable, os.path.join(a.source, "deploy/grafana/check_dashboards.py")],
                              capture_output=True, text=True, check=True).stdout
        exprs = [line.split("\t") for line in dash.splitlines() if line.count("\t") == 2]
        empty = []
        for board, panel, expr in exprs:
            try:
                if not query(expr):
                    empty.append("%s / %s: %s" % (board, panel, expr))
            except Exception as e:  # noqa: BLE001
                empty.append("%s / %s: %s (%s)" % (board, panel, expr, e))
        report["dashboard_expressions"] = len(exprs)
        report["dashboard_expressions_without_data"] = empty
        report["problems"] += ["dashboard: " + e for e in empty]
        if not exprs:
            report["problems"].append("dashboard: check_dashboards.py listed no expression")

        # Last, a fault: the dynamics service hangs mid-run (SIGSTOP); the actuator's watchdog
        # trips long before the coordinator's health check times out; then it is killed.
        def hang():
            time.sleep(2)
            services[3].proc.send_signal(signal.SIGSTOP)
        run("sits_hang", sits, ["timing.duration_s=20", "metrics.window_s=5"], action=hang)
        services[3].stop(signal.SIGKILL)
        time.sleep(4)  # the last scrapes

        window = "[15m]"
        metrics = {}
        for name, kind in contract_metrics(a.source):
            series = name + ("_count" if kind == "histogram" else "")
            present = query("count(last_over_time(%s%s))" % (series, window))
            if kind == "gauge":
                changed = query("count(changes(%s%s) > 0)" % (series, window))
                total = query("count(count_over_time(%s%s))" % (series, window))
            else:
                changed = query("count(increase(%s%s) > 0)" % (series, window))
                total = query("count(count_over_time(%s%s))" % (series, window))
            n_total = int(float(total[0]["value"][1])) if total else 0
            n_changed = int(float(changed[0]["value"][1])) if changed else 0
            metrics[name] = {"type": kind, "series": n_total, "changed": n_changed}
            if not present:
                report["problems"].append("%s: no samples" % name)
            elif n_changed == 0:
                report["problems"].append("%s: present but never changed" % name)
        report["metrics"] = metrics

    finally:
        for s in reversed(services):
            s.stop()
        if prom is not None:
            prom.terminate()
            prom.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=2)
    print(json.dumps({k: v for k, v in report.items() if k != "metrics"}, indent=2))
    for name, m in sorted(report.get("metrics", {}).items()):
        print("%-52s %-9s series %3d changed %3d" % (name, m["type"], m["series"], m["changed"]))
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
