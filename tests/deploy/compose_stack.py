#!/usr/bin/env python3
"""The docker-compose stack on a real Docker engine (issue 14 §1).

Starts its own dockerd (--data-root under the build tree, so images and the debootstrap base are
cached for reruns; --exec-root and the API socket in a temporary directory), makes the offline
base image (deploy/base-image.sh: debootstrap + docker import), builds hyloop:latest from the
host's binaries and hyloop-prometheus:latest (deploy/build-images.sh), then:
  docker-compose up -d; every service's gRPC health check healthy, and the coordinator's through
  its published port from the host; a real-time SITS SCVG run and a lockstep RHT run through the
  published port with the Python client; the lockstep run's samples.csv in the `runs` volume
  byte-identical to `hyloop run` of the same scenario on the host; the in-compose Prometheus
  (HTTP API): up == 1 for each service and hyloop_cycles_total grown for each loop service;
  docker-compose down -v: no container, network or volume left; dockerd stopped by its pid and
  the host's iptables rules, ip_forward and network links as they were before.
Exit 77 (ctest: skipped) only where the engine cannot start: not root, docker.io, docker-compose
or debootstrap not installed (scripts/setup.sh --with-docker), or dockerd not answering.
Writes a JSON report with the time of every phase (--out).
"""
import argparse
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

PROJECT = "hyloopci"
SERVICES = ["rig-emulator", "sensor", "actuator", "dynamics", "identification", "coordinator"]
LOOP_SERVICES = ["rig-emulator", "sensor", "actuator", "dynamics", "coordinator"]
IN_CONTAINER_RUNS = "/var/lib/hyloop/runs"
CAP_SYS_RESOURCE = 24


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(77)


def free_ports(n):
    """n distinct ports free now on 127.0.0.1 (each socket held until all are drawn)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def http(url, timeout=5):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as r:
        return r.read().decode()


def run(cmd, env=None, check=True, timeout=600):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError("%s exited %d:\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-3000:],
                                                    r.stderr[-3000:]))
    return r


# --- the host's network state (dockerd changes it) -------------------------------------------

def iptables_state():
    """{table: sorted policy/chain/rule lines}, without counters; a table holding nothing but
    ACCEPT policies counts as absent (iptables-nft lists a table once anything touched it)."""
    text = run(["iptables-save"]).stdout
    tables, name, lines = {}, None, []
    for line in text.splitlines():
        if line.startswith("*"):
            name, lines = line[1:], []
        elif line == "COMMIT":
            meaningful = [l for l in lines if not (l.startswith(":") and l.split()[1] == "ACCEPT"
                                                   and l[1:].split()[0].isupper()
                                                   and l[1:].split()[0] in BUILTIN_CHAINS)]
            if meaningful:
                tables[name] = sorted(lines)
        elif line and not line.startswith("#"):
            lines.append(line.split(" [")[0] if line.startswith(":") else line)
    return tables


BUILTIN_CHAINS = {"INPUT", "FORWARD", "OUTPUT", "PREROUTING", "POSTROUTING"}


def network_state():
    with open("/proc/sys/net/ipv4/ip_forward") as f:
        ip_forward = f.read().strip()
    links = sorted(l.split(":")[1].strip().split("@")[0]
                   for l in run(["ip", "-o", "link", "show"]).stdout.splitlines())
    return {"iptables": iptables_state(), "ip_forward": ip_forward, "links": links,
            "iptables_save": run(["iptables-save"]).stdout}


def restore_network(before):
    """Undo what dockerd did: its chains and rules, the FORWARD policy, ip_forward, docker0."""
    saved = before["iptables_save"]
    for table in ("filter", "nat"):
        if ("*" + table) in saved:
            section = saved[saved.index("*" + table):]
            section = section[:section.index("COMMIT") + len("COMMIT")] + "\n"
            subprocess.run(["iptables-restore", "--table", table], input=section, text=True,
                           check=False, capture_output=True)
        else:
            subprocess.run(["iptables", "-t", table, "-F"], check=False, capture_output=True)
            subprocess.run(["iptables", "-t", table, "-X"], check=False, capture_output=True)
            for chain in BUILTIN_CHAINS:
                subprocess.run(["iptables", "-t", table, "-P", chain, "ACCEPT"], check=False,
                               capture_output=True)
    with open("/proc/sys/net/ipv4/ip_forward", "w") as f:
        f.write(before["ip_forward"] + "\n")
    for link in ("docker0",):
        if link not in before["links"]:
            subprocess.run(["ip", "link", "del", link], check=False, capture_output=True)


# --- the engine ------------------------------------------------------------------------------

class Engine:
    def __init__(self, dockerd, data_root, tmp):
        self.sock = os.path.join(tmp, "docker.sock")
        self.log = open(os.path.join(tmp, "dockerd.log"), "w+")
        self.proc = subprocess.Popen(
            [dockerd, "--data-root", data_root, "--exec-root", os.path.join(tmp, "exec"),
             "-H", "unix://" + self.sock, "--pidfile", os.path.join(tmp, "dockerd.pid")],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, docker, env, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if os.path.exists(self.sock) and subprocess.run(
                        [docker, "info"], env=env, capture_output=True, timeout=5).returncode == 0:
                    return True
            except subprocess.TimeoutExpired:
                pass
            time.sleep(0.3)
        return False

    def log_tail(self, n=20):
        self.log.flush()
        self.log.seek(0)
        return "".join(self.log.readlines()[-n:])

    def stop(self):
        """SIGTERM to dockerd (it stops its containerd); after 30 s SIGKILL to its process group
        (dockerd and the containerd it started, nothing else: a session of their own)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # a containerd left behind, if any
        except ProcessLookupError:
            pass


def rlimit_override(path):
    """Compose's rtprio 99 and unlimited memlock need CAP_SYS_RESOURCE where the host's hard
    limits are lower (runc cannot raise a hard limit without it: "error setting rlimit type 14").
    Then an override file keeps every other setting and uses the host's hard limits."""
    with open("/proc/self/status") as f:
        cap_eff = int([l for l in f if l.startswith("CapEff:")][0].split()[1], 16)
    rtprio = resource.getrlimit(resource.RLIMIT_RTPRIO)[1]
    memlock = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]
    if cap_eff & (1 << CAP_SYS_RESOURCE) or (
            (rtprio == resource.RLIM_INFINITY or rtprio >= 99) and memlock == resource.RLIM_INFINITY):
        return None
    limits = {"rtprio": min(99, rtprio if rtprio != resource.RLIM_INFINITY else 99),
              "memlock": -1 if memlock == resource.RLIM_INFINITY else memlock}
    with open(path, "w") as f:
        f.write("# compose_stack: no CAP_SYS_RESOURCE here; the host's hard rlimits.\nservices:\n")
        for s in SERVICES:
            f.write("  %s:\n    ulimits: {rtprio: %d, memlock: %d}\n" % (
                s, limits["rtprio"], limits["memlock"]))
    return limits


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True, help="the host build's bin/ (hyloop, hyloop-*)")
    p.add_argument("--source", required=True)
    p.add_argument("--stubs", required=True, help="generated Python stubs (build/python)")
    p.add_argument("--cache", required=True,
                   help="a directory in the build tree: the debootstrap tarball, dockerd's data root")
    p.add_argument("--out", default="")
    a = p.parse_args()
    a.bin, a.source, a.stubs, a.cache = (os.path.abspath(x) for x in (a.bin, a.source, a.stubs,
                                                                      a.cache))
    t_start = time.monotonic()

    if os.geteuid() != 0:
        skip("needs root (dockerd, debootstrap)")
    dockerd = shutil.which("dockerd", path="/usr/sbin:/usr/bin:/sbin:/bin")
    # Debian's CLI, next to its dockerd (another `docker` earlier on PATH may be another version).
    docker = "/usr/bin/docker" if os.access("/usr/bin/docker", os.X_OK) else shutil.which("docker")
    compose = shutil.which("docker-compose")
    missing = [n for n, v in (("dockerd (docker.io)", dockerd), ("docker", docker),
                              ("docker-compose", compose),
                              ("debootstrap", shutil.which("debootstrap", path="/usr/sbin:/usr/bin")),
                              ("iptables", shutil.which("iptables-save")))
               if v is None]
    if missing:
        skip("not installed: %s (scripts/setup.sh --with-docker)" % ", ".join(missing))

    sys.path.insert(0, os.path.join(a.source, "clients/python"))
    os.environ["HYLOOP_PYTHON_STUBS"] = a.stubs
    from hyloop_client import HyloopClient, state_name  # noqa: E402

    os.makedirs(a.cache, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="hyloop-compose-")
    report = {"problems": [], "seconds": {}}
    seconds = report["seconds"]

    def phase(name, t0):
        seconds[name] = round(time.monotonic() - t0, 1)
        print("compose_stack: %-28s %6.1f s" % (name, seconds[name]), flush=True)

    def problem(text):
        report["problems"].append(text)
        print("compose_stack: PROBLEM " + text, flush=True)

    before = network_state()
    env = dict(os.environ, DOCKER_HOST="", DOCKER=docker)
    engine = None
    compose_cmd = None
    try:
        t0 = time.monotonic()
        engine = Engine(dockerd, os.path.join(a.cache, "docker"), tmp)
        env["DOCKER_HOST"] = "unix://" + engine.sock
        if not engine.wait_ready(docker, env):
            tail = engine.log_tail()
            engine.stop()
            engine = None
            restore_network(before)
            shutil.rmtree(tmp, ignore_errors=True)
            skip("the Docker engine did not start:\n" + tail)
        phase("dockerd_start", t0)

        t0 = time.monotonic()
        base = run([os.path.join(a.source, "deploy/base-image.sh"), "--cache",
                    os.path.join(a.cache, "base")], env=env).stdout.strip().splitlines()[-1]
        phase("base_image", t0)
        t0 = time.monotonic()
        run([os.path.join(a.source, "deploy/build-images.sh"), "--base", base,
             "--binaries", a.bin], env=env)
        phase("build_images", t0)

        grpc_port, prom_port = free_ports(2)
        env.update(COMPOSE_PROJECT_NAME=PROJECT, HYLOOP_BASE_IMAGE=base,
                   HYLOOP_GRPC_PORT=str(grpc_port), HYLOOP_PROMETHEUS_PORT=str(prom_port))
        compose_cmd = [compose, "-f", os.path.join(a.source, "docker-compose.yml")]
        limits = rlimit_override(os.path.join(tmp, "rlimits.yml"))
        if limits is not None:
            compose_cmd += ["-f", os.path.join(tmp, "rlimits.yml")]
            report["rlimit_override"] = limits
            print("compose_stack: no CAP_SYS_RESOURCE: ulimits %s instead of rtprio 99, memlock -1"
                  % limits)

        def listing(kind):
            return set(run([docker, kind, "ls", "-q"] if kind != "container"
                           else [docker, "ps", "-aq"], env=env).stdout.split())
        kept = {k: listing(k) for k in ("container", "network", "volume")}

        t0 = time.monotonic()
        run(compose_cmd + ["up", "-d", "--no-build"], env=env, timeout=300)
        ids = {s: run(compose_cmd + ["ps", "-q", s], env=env).stdout.strip() for s in SERVICES}
        deadline = time.monotonic() + 120
        health = {}
        while time.monotonic() < deadline:
            health = {s: run([docker, "inspect", "-f", "{{.State.Health.Status}}", cid],
                             env=env).stdout.strip() for s, cid in ids.items()}
            if all(h == "healthy" for h in health.values()):
                break
            time.sleep(0.5)
        report["health"] = health
        phase("up_until_healthy", t0)
        for s, h in health.items():
            if h != "healthy":
                problem("%s: health %s" % (s, h))

        def volume_path(name):
            return run([docker, "volume", "inspect", "-f", "{{.Mountpoint}}",
                        "%s_%s" % (PROJECT, name)], env=env).stdout.strip()

        # The operator's credentials, out of the security volume (mode 0600 for read_token).
        lab = os.path.join(volume_path("security"), "lab")
        sec = os.path.join(tmp, "security")
        os.makedirs(os.path.join(sec, "tokens"))
        shutil.copy(os.path.join(lab, "ca.crt"), sec)
        shutil.copy(os.path.join(lab, "tokens", "operator"), os.path.join(sec, "tokens"))
        os.chmod(os.path.join(sec, "tokens", "operator"), 0o600)
        address = "127.0.0.1:%d" % grpc_port
        probe = run(["/usr/bin/python3", os.path.join(a.source, "deploy/healthcheck.py"),
                     "--ca", os.path.join(sec, "ca.crt"), address], check=False)
        report["host_health_check"] = (probe.stdout + probe.stderr).strip()
        if probe.returncode != 0:
            problem("health check of the published port %s: %s" % (address,
                                                                    report["host_health_check"]))

        api = "http://127.0.0.1:%d/api/v1/" % prom_port

        def query(expr):
            body = json.loads(http(api + "query?" + urllib.parse.urlencode({"query": expr})))
            if body.get("status") != "success":
                raise RuntimeError(expr + ": " + json.dumps(body))
            return {r["metric"].get("hyloop_service", r["metric"].get("job", "")):
                    float(r["value"][1]) for r in body["data"]["result"]}

        cycles_expr = 'sum by (hyloop_service) (hyloop_cycles_total{job="hyloop"})'
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # Prometheus answers, and has scraped every target
            try:
                if len(query('up{job="hyloop"}')) == len(SERVICES):
                    break
            except Exception:  # noqa: BLE001
                pass
            time.sleep(0.5)
        cycles_before = query(cycles_expr)

        t0 = time.monotonic()
        runs = report["runs"] = {}
        with HyloopClient(address, security_dir=sec) as client:
            # Real time on a shared 2-vCPU VM: a stall of the VM can starve the loop until the
            # actuator's watchdog stops the run (seen once under a load average of 15, with 8
            # builds beside it). One more attempt then; both are in the report.
            for attempt in (1, 2):
                client.load_scenario(os.path.join(a.source, "scenarios/sits/table1_scvg.yaml"),
                                     ["timing.duration_s=6", "metrics.window_s=4",
                                      "compensator.switch_time_s=2"])
                client.start("sits_scvg_rt_%d" % attempt, "realtime")
                st = client.wait(120)
                runs.setdefault("sits_scvg_rt_attempts", []).append(
                    {"state": state_name(st.state), "message": st.message, "cycles": st.cycle})
                if "FINISHED" in state_name(st.state):
                    break
            runs["sits_scvg_rt"] = runs["sits_scvg_rt_attempts"][-1]
            phase("sits_realtime_run", t0)
            t0 = time.monotonic()
            rht = os.path.join(a.source, "scenarios/rht/p4.yaml")
            client.load_scenario(rht, [])
            started = client.start("rht_p4_lockstep", "lockstep")
            st = client.wait(120)
            runs["rht_p4_lockstep"] = {"state": state_name(st.state), "message": st.message,
                                       "cycles": st.cycle, "out_dir": started.out_dir}
            phase("rht_lockstep_run", t0)
        # Lockstep must finish. Real time must finish too, except where the host starved the
        # loop: a run the actuator's watchdog stopped after it had looped (cycles > 0) is a
        # timing outcome of the machine (DESIGN §9: CI never fails on timing), reported as a
        # warning; a loop that never ran, or any other end, is a failure.
        rt = runs["sits_scvg_rt"]
        if "FINISHED" not in rt["state"]:
            if "watchdog" in rt["message"] and rt["cycles"] > 0:
                report.setdefault("warnings", []).append(
                    "real-time SITS stopped by the actuator's watchdog in %d attempts, after %s "
                    "cycles of 3000 (the host starved the loop)" % (
                        len(runs["sits_scvg_rt_attempts"]),
                        "/".join(str(x["cycles"]) for x in runs["sits_scvg_rt_attempts"])))
                print("compose_stack: WARNING " + report["warnings"][-1], flush=True)
            else:
                problem("sits_scvg_rt ended %s after %d cycles: %s" % (rt["state"], rt["cycles"],
                                                                       rt["message"]))
        if "FINISHED" not in runs["rht_p4_lockstep"]["state"]:
            problem("rht_p4_lockstep ended %s: %s" % (runs["rht_p4_lockstep"]["state"],
                                                      runs["rht_p4_lockstep"]["message"]))
        # Either way the real-time run's directory is in the runs volume with its samples.
        rt_samples = os.path.join(volume_path("runs"), "sits_scvg_rt_%d" % len(
            runs["sits_scvg_rt_attempts"]), "samples.csv")
        try:
            with open(rt_samples, "rb") as f:
                rt["sample_rows"] = f.read().count(b"\n") - 1
        except OSError as e:
            rt["sample_rows"] = 0
            problem("real-time samples.csv in the runs volume: %s" % e)
        if rt["sample_rows"] <= 0:
            problem("real-time run: no sample rows in %s" % rt_samples)

        # The lockstep run's samples.csv, in the named volume, against hyloop run on the host.
        out_dir = runs["rht_p4_lockstep"]["out_dir"] or os.path.join(IN_CONTAINER_RUNS,
                                                                     "rht_p4_lockstep")
        in_volume = os.path.join(volume_path("runs"), os.path.relpath(out_dir, IN_CONTAINER_RUNS),
                                 "samples.csv")
        local = os.path.join(tmp, "rht_p4_local")
        run([os.path.join(a.bin, "hyloop"), "run", rht, "--out", local])
        with open(os.path.join(local, "samples.csv"), "rb") as f:
            expected = f.read()
        try:
            with open(in_volume, "rb") as f:
                got = f.read()
        except OSError as e:
            got = b""
            problem("lockstep samples.csv in the runs volume: %s" % e)
        report["lockstep_samples"] = {"path_in_volume": in_volume, "bytes": len(got),
                                      "rows": got.count(b"\n") - 1,
                                      "identical_to_hyloop_run": got == expected}
        if got and got != expected:
            problem("lockstep samples.csv (%d bytes) differs from hyloop run's (%d bytes)"
                    % (len(got), len(expected)))

        # Prometheus: every service up, and the cycle counters grew during the runs.
        time.sleep(2.5)  # two more scrapes (1 s interval)
        up = query('up{job="hyloop"}')
        cycles_after = query(cycles_expr)
        report["prometheus"] = {"up": up, "hyloop_cycles_total_before": cycles_before,
                                "hyloop_cycles_total_after": cycles_after}
        for s in SERVICES:
            if up.get(s) != 1.0:
                problem("prometheus: up{hyloop_service=%r} = %s" % (s, up.get(s)))
        for s in LOOP_SERVICES:
            if not cycles_after.get(s, 0.0) > cycles_before.get(s, 0.0):
                problem("prometheus: hyloop_cycles_total of %s did not grow (%s -> %s)"
                        % (s, cycles_before.get(s), cycles_after.get(s)))

        # The coordinator alone stops (an operator restarting it, or the first step of `down`):
        # the other services must keep serving. A service the coordinator's exit ended would be
        # restarted by compose (restart: unless-stopped) and a `down` racing that restart kills
        # it after the grace period (CI saw exit 137 for four services).
        run(compose_cmd + ["stop", "coordinator"], env=env, timeout=60)
        time.sleep(3.0)
        alone = report["coordinator_stopped_alone"] = {}
        for s, cid in ids.items():
            if s == "coordinator":
                continue
            running, restarts = run([docker, "inspect", "-f", "{{.State.Running}} {{.RestartCount}}",
                                     cid], env=env).stdout.split()
            alone[s] = {"running": running == "true", "restarts": int(restarts)}
            if running != "true" or int(restarts) != 0:
                problem("%s did not keep serving when the coordinator stopped (running %s, "
                        "restarts %s)" % (s, running, restarts))

        # down: first the stop (each container's exit code and time kept: 137 would mean it was
        # killed after the 10 s grace period), then the removal of everything.
        t0 = time.monotonic()
        stop_wall = time.time()
        run(compose_cmd + ["stop"], env=env, timeout=120)
        stops = report["stop"] = {}
        prometheus_id = run(compose_cmd + ["ps", "-q", "prometheus"], env=env).stdout.strip()
        for s, cid in dict(ids, prometheus=prometheus_id).items():
            code, finished = run([docker, "inspect", "-f", "{{.State.ExitCode}} {{.State.FinishedAt}}",
                                  cid], env=env).stdout.split()
            stops[s] = {"exit_code": int(code), "finished_at": finished}
            if int(code) == 137:
                problem("%s was killed (exit 137) by the stop: SIGTERM did not end it" % s)
            if int(code) not in (0, 143):
                # 3: the service's own shutdown deadline ended a step that hung (its log names it).
                if int(code) != 137:
                    print("compose_stack: WARNING %s exited %s at the stop" % (s, code), flush=True)
                logs = run([docker, "logs", "--tail", "25", cid], env=env, check=False)
                stops[s]["log_tail"] = (logs.stdout + logs.stderr).splitlines()
        run(compose_cmd + ["down", "-v", "--remove-orphans"], env=env, timeout=120)
        compose_cmd = None
        phase("down", t0)
        report["stop_started_at"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(stop_wall))
        for kind in ("container", "network", "volume"):
            left = sorted(listing(kind) - kept[kind])
            report.setdefault("left_behind", {})[kind] = left
            if left:
                problem("after down -v: %s %s left" % (kind, " ".join(left)))
        run([docker, "image", "prune", "-f"], env=env, check=False)  # the replaced images
    except Exception as e:  # noqa: BLE001
        problem("%s: %s" % (type(e).__name__, e))
    finally:
        if compose_cmd is not None and engine is not None:  # a failure on the way: clean up
            subprocess.run(compose_cmd + ["down", "-v", "--remove-orphans"], env=env,
                           capture_output=True, timeout=120)
        if engine is not None:
            t0 = time.monotonic()
            engine.stop()
            if engine.proc.returncode not in (0, -signal.SIGTERM):
                report["dockerd_log"] = engine.log_tail()
            restore_network(before)
            phase("dockerd_stop_and_restore", t0)
        shutil.rmtree(tmp, ignore_errors=True)

    after = network_state()
    for key in ("iptables", "ip_forward", "links"):
        if after[key] != before[key]:
            problem("host network: %s differs after the test: before %s, after %s"
                    % (key, json.dumps(before[key]), json.dumps(after[key])))
    seconds["total"] = round(time.monotonic() - t_start, 1)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=2)
    print(json.dumps(report, indent=2))
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
