"""Tests of hyloop_client (and `hyloop ctl`) against a fake Experiment server in process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
from concurrent import futures
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import grpc

from hyloop_client import HyloopClient, control_pb2, control_pb2_grpc, read_token, state_name

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "scenarios" / "sits" / "table1_scvg.yaml"
BIN_DIR = Path(os.environ.get("HYLOOP_BIN_DIR", REPO / "build" / "bin"))
NAMES = ["time[s]", "x[m]", "v[m/s]", "k_h[N*s/m]", "f_meas[N]"]


class FakeExperiment(control_pb2_grpc.ExperimentServicer):
    """Runs a pretend scenario of `total` cycles of 2 ms in a background thread."""

    def __init__(self, total: int = 200, cycle_s: float = 0.002) -> None:
        self.total = total
        self.cycle_s = cycle_s  # wall-clock time per cycle
        self.lock = threading.Condition()
        self.status = control_pb2.RunStatus(state=control_pb2.RUN_STATE_IDLE)
        self.loaded: Optional[control_pb2.LoadScenarioRequest] = None
        self.runs: List[control_pb2.RunInfo] = []
        self.summaries: Dict[str, str] = {}
        self.stop_reason = ""
        self.runs_dir = Path.cwd()  # as the coordinator's --runs-dir: out_dir names a run in it

    # -- RPCs -------------------------------------------------------------------------------
    def LoadScenario(self, request, context):
        for o in request.overrides:
            key, _, value = o.partition("=")
            if key == "timing.step_s" and float(value) <= 0:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                              f"{request.source_name}: timing.step_s = {value}: must be in (0, 1] s")
        if "kind:" not in request.scenario_yaml:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{request.source_name}: kind missing")
        with self.lock:
            if self.status.state == control_pb2.RUN_STATE_RUNNING:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "a run is in progress")
            self.loaded = request
            self.status = control_pb2.RunStatus(state=control_pb2.RUN_STATE_LOADED,
                                                scenario="fake", total_cycles=self.total)
        return control_pb2.LoadScenarioReply(name="fake", kind="sits", resolved_yaml="kind: sits\n",
                                             total_cycles=self.total, step_s=0.002)

    def Start(self, request, context):
        with self.lock:
            if self.loaded is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no scenario loaded")
            if self.status.state == control_pb2.RUN_STATE_RUNNING:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "a run is in progress")
            out_dir = str(self.runs_dir / request.out_dir)  # the full path, as the coordinator
            if os.path.exists(out_dir):
                context.abort(grpc.StatusCode.ALREADY_EXISTS, f"{out_dir} exists")
            run_id = f"run-{len(self.runs) + 1}"
            self.status = control_pb2.RunStatus(
                state=control_pb2.RUN_STATE_RUNNING, run_id=run_id, scenario="fake",
                total_cycles=self.total, out_dir=out_dir,
                services=[control_pb2.ServiceStatus(
                    name="sensor", address="127.0.0.1:1",
                    state=control_pb2.LIFECYCLE_STATE_ACTIVE, healthy=True)])
            self.runs.append(control_pb2.RunInfo(run_id=run_id, scenario="fake",
                                                 out_dir=out_dir,
                                                 state=control_pb2.RUN_STATE_RUNNING))
            self.stop_reason = ""
            status = control_pb2.RunStatus()
            status.CopyFrom(self.status)
        threading.Thread(target=self._run, daemon=True).start()
        return status

    def Stop(self, request, context):
        return self._request_stop(control_pb2.RUN_STATE_STOPPED, "stopped on request")

    def EmergencyStop(self, request, context):
        return self._request_stop(control_pb2.RUN_STATE_ESTOPPED, request.reason)

    def Reset(self, request, context):
        with self.lock:
            self.reset_reason = request.reason
            self.status.message = "emergency stop reset"
            status = control_pb2.RunStatus()
            status.CopyFrom(self.status)
            return status

    def GetStatus(self, request, context):
        with self.lock:
            status = control_pb2.RunStatus()
            status.CopyFrom(self.status)
            return status

    def StreamTelemetry(self, request, context) -> Iterator[control_pb2.TelemetryFrame]:
        decimation = max(1, request.decimation)
        sent_names = False
        next_cycle = 0
        while context.is_active():
            with self.lock:
                self.lock.wait_for(lambda: self.status.cycle > next_cycle
                                   or self.status.state != control_pb2.RUN_STATE_RUNNING, 0.5)
                cycle, state = self.status.cycle, self.status.state
            while next_cycle < cycle:
                frame = control_pb2.TelemetryFrame(
                    cycle=next_cycle, virtual_time_s=next_cycle * 0.002, state=state,
                    values=[next_cycle * 0.002, 0.001 * next_cycle, 0.05, -80.8, 1.5])
                if not sent_names:
                    frame.names.extend(NAMES)
                    sent_names = True
                yield frame
                next_cycle += decimation
            if state != control_pb2.RUN_STATE_RUNNING:
                return

    def ListRuns(self, request, context):
        with self.lock:
            return control_pb2.ListRunsReply(runs=self.runs)

    def GetRunSummary(self, request, context):
        with self.lock:
            run_id = request.run_id or (self.runs[-1].run_id if self.runs else "")
            if run_id not in self.summaries:
                context.abort(grpc.StatusCode.NOT_FOUND, f"no finished run {run_id!r}")
            run = next(r for r in self.runs if r.run_id == run_id)
            return control_pb2.RunSummaryReply(run_id=run_id, out_dir=run.out_dir,
                                               summary_json=self.summaries[run_id])

    # -- the pretend run --------------------------------------------------------------------
    def _request_stop(self, state: int, reason: str) -> control_pb2.RunStatus:
        with self.lock:
            if self.status.state == control_pb2.RUN_STATE_RUNNING:
                self.stop_reason = reason
                self.lock.wait_for(lambda: self.status.state != control_pb2.RUN_STATE_RUNNING, 5)
                self.status.state = state
                self.status.message = reason
                self.runs[-1].state = state
            status = control_pb2.RunStatus()
            status.CopyFrom(self.status)
            return status

    def _run(self) -> None:
        for cycle in range(1, self.total + 1):
            time.sleep(self.cycle_s)
            with self.lock:
                if self.stop_reason:
                    break
                self.status.cycle = cycle
                self.status.virtual_time_s = cycle * 0.002
                self.lock.notify_all()
        with self.lock:
            out = Path(self.status.out_dir)
            out.mkdir(parents=True)
            n = self.status.cycle
            rows = "".join(f"{i * 0.002},{i * 0.001},0.05,-80.8,1.5\n" for i in range(n))
            (out / "samples.csv").write_text(",".join(NAMES) + "\n" + rows)
            summary = json.dumps({"run_id": self.status.run_id, "cycles": n,
                                  "metrics": {"e_R": 1.0, "window_s": 1.0}}, indent=2)
            (out / "summary.json").write_text(summary + "\n")
            self.summaries[self.status.run_id] = summary
            if not self.stop_reason:
                self.status.state = control_pb2.RUN_STATE_FINISHED
                self.runs[-1].state = control_pb2.RUN_STATE_FINISHED
            else:
                self.status.state = control_pb2.RUN_STATE_STOPPED
            self.lock.notify_all()


class FakeServerCase(unittest.TestCase):
    """Starts a fresh fake coordinator per test."""

    total = 200
    cycle_s = 0.002

    def setUp(self) -> None:
        self.fake = FakeExperiment(self.total, self.cycle_s)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        control_pb2_grpc.add_ExperimentServicer_to_server(self.fake, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.address = f"127.0.0.1:{port}"
        self.tmp = Path(tempfile.mkdtemp(prefix="hyloop_client_fake_"))
        self.fake.runs_dir = self.tmp

    def tearDown(self) -> None:
        self.server.stop(grace=None).wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


class ClientTest(FakeServerCase):
    def test_run_to_the_end(self) -> None:
        with HyloopClient(self.address, insecure=True) as c:
            reply = c.load_scenario(str(SCENARIO), overrides=["timing.duration_s=2"])
            self.assertEqual(reply.total_cycles, self.total)
            self.assertEqual(self.fake.loaded.source_name, str(SCENARIO))
            self.assertEqual(list(self.fake.loaded.overrides), ["timing.duration_s=2"])
            self.assertEqual(self.fake.loaded.scenario_yaml, SCENARIO.read_text())
            status = c.start(self.tmp / "run")
            self.assertEqual(status.state, control_pb2.RUN_STATE_RUNNING)
            self.assertEqual(status.out_dir, str(self.tmp / "run"))
            frames = list(c.telemetry(decimation=10))
            self.assertGreater(len(frames), 0)
            self.assertEqual(set(frames[0]), {"cycle", "t", "state", "values"})
            self.assertEqual(list(frames[-1]["values"]), NAMES)  # names carried past frame 0
            self.assertEqual([f["cycle"] for f in frames[:3]], [0, 10, 20])
            final = c.wait(timeout_s=10)
            self.assertEqual(state_name(final.state), "FINISHED")
            self.assertEqual(final.cycle, self.total)
            on_disk = json.loads((self.tmp / "run" / "summary.json").read_text())
            self.assertEqual(c.summary(), on_disk)
            self.assertEqual(c.summary(final.run_id), on_disk)
            self.assertEqual([r.run_id for r in c.runs()], [final.run_id])

    def test_load_text_and_path(self) -> None:
        with HyloopClient(self.address, insecure=True) as c:
            c.load_scenario(SCENARIO)
            self.assertEqual(self.fake.loaded.source_name, str(SCENARIO))
            c.load_scenario("kind: sits\nname: inline\n")
            self.assertEqual(self.fake.loaded.source_name, "<text>")

    def test_invalid_scenario_names_the_field(self) -> None:
        with HyloopClient(self.address, insecure=True) as c:
            with self.assertRaises(grpc.RpcError) as cm:
                c.load_scenario(str(SCENARIO), overrides=["timing.step_s=-1"])
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("timing.step_s", cm.exception.details())

    def test_unreachable(self) -> None:
        with HyloopClient("127.0.0.1:1", timeout_s=5, insecure=True) as c:
            with self.assertRaises(grpc.RpcError) as cm:
                c.status()
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE)

    def test_bad_mode(self) -> None:
        with HyloopClient(self.address, insecure=True) as c:
            with self.assertRaises(ValueError):
                c.start(self.tmp / "run", mode="fast")


class SlowClientTest(FakeServerCase):
    total = 100000  # 200 s of wall time: ends only when stopped
    cycle_s = 0.002

    def test_wait_times_out_then_stop(self) -> None:
        with HyloopClient(self.address, insecure=True) as c:
            c.load_scenario(SCENARIO)
            c.start(self.tmp / "run")
            with self.assertRaises(TimeoutError):
                c.wait(timeout_s=0.3)
            first = next(iter(c.telemetry(decimation=1)))
            self.assertIn("x[m]", first["values"])
            status = c.stop()
            self.assertEqual(status.state, control_pb2.RUN_STATE_STOPPED)
            self.assertEqual(c.wait(timeout_s=5).state, control_pb2.RUN_STATE_STOPPED)
            self.assertTrue((self.tmp / "run" / "summary.json").is_file())

    def test_estop(self) -> None:
        with HyloopClient(self.address, insecure=True) as c:
            c.load_scenario(SCENARIO)
            c.start(self.tmp / "run")
            status = c.estop("operator pressed the button")
            self.assertEqual(state_name(status.state), "ESTOPPED")
            self.assertEqual(status.message, "operator pressed the button")

    def test_reset_sends_the_reason(self) -> None:
        with HyloopClient(self.address, insecure=True) as c:
            status = c.reset("checked the rig")
            self.assertEqual(status.message, "emergency stop reset")
            self.assertEqual(self.fake.reset_reason, "checked the rig")


class _RecordMetadata(grpc.ServerInterceptor):
    """Keeps each call's method and authorization metadata."""

    def __init__(self) -> None:
        self.calls: List[tuple] = []

    def intercept_service(self, continuation, handler_call_details):  # type: ignore[no-untyped-def]
        md = dict(handler_call_details.invocation_metadata)
        self.calls.append((handler_call_details.method, md.get("authorization")))
        return continuation(handler_call_details)


def _hyloop_has_certs() -> bool:
    exe = BIN_DIR / "hyloop"
    if not exe.is_file():
        return False
    r = subprocess.run([str(exe), "certs", "--help"], capture_output=True, text=True, timeout=30)
    return r.returncode == 0


@unittest.skipUnless(_hyloop_has_certs(), "build/bin/hyloop without the certs subcommand")
class TlsClientTest(unittest.TestCase):
    """The client over TLS with a token, against the fake served with `hyloop certs` files."""

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="hyloop_client_tls_"))
        self.lab = self.tmp / "lab"
        self.other = self.tmp / "other"
        for d in (self.lab, self.other):
            r = subprocess.run([str(BIN_DIR / "hyloop"), "certs", "--out", str(d)],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
        self.recorder = _RecordMetadata()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4),
                                  interceptors=[self.recorder])
        control_pb2_grpc.add_ExperimentServicer_to_server(FakeExperiment(), self.server)
        credentials = grpc.ssl_server_credentials(
            [((self.lab / "coordinator.key").read_bytes(),
              (self.lab / "coordinator.crt").read_bytes())])
        port = self.server.add_secure_port("127.0.0.1:0", credentials)
        self.server.start()
        self.address = f"127.0.0.1:{port}"

    def tearDown(self) -> None:
        self.server.stop(grace=None).wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_sends_the_roles_token_over_tls(self) -> None:
        for role in ("observer", "operator"):
            with HyloopClient(self.address, security_dir=self.lab, role=role) as c:
                self.assertEqual(state_name(c.status().state), "IDLE")
            token = read_token(self.lab / "tokens" / role)
            self.assertEqual(self.recorder.calls[-1],
                             ("/hyloop.v1.Experiment/GetStatus", f"Bearer {token}"))
        with HyloopClient(self.address, ca_file=self.lab / "ca.crt",
                          token_file=self.lab / "tokens" / "operator") as c:
            c.status()
        self.assertEqual(self.recorder.calls[-1][1],
                         "Bearer " + read_token(self.lab / "tokens" / "operator"))

    def test_a_server_of_another_ca_is_refused(self) -> None:
        calls = len(self.recorder.calls)
        with HyloopClient(self.address, timeout_s=5, ca_file=self.other / "ca.crt",
                          token_file=self.lab / "tokens" / "operator") as c:
            with self.assertRaises(grpc.RpcError) as e:
                c.status()
            self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(len(self.recorder.calls), calls, "the token must never reach it")

    def test_security_options_are_required_and_checked(self) -> None:
        with self.assertRaises(ValueError):
            HyloopClient(self.address)
        with self.assertRaises(ValueError):
            HyloopClient(self.address, insecure=True, security_dir=self.lab)
        with self.assertRaises(ValueError):
            HyloopClient(self.address, security_dir=self.lab, role="admin")
        (self.lab / "tokens" / "observer").chmod(0o644)
        with self.assertRaisesRegex(ValueError, "mode 0644"):
            HyloopClient(self.address, security_dir=self.lab, role="observer")


def _hyloop_has_ctl() -> bool:
    exe = BIN_DIR / "hyloop"
    if not exe.is_file():
        return False
    try:
        r = subprocess.run([str(exe), "ctl", "--help"], capture_output=True, text=True,
                           timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 and "coordinator address" in r.stdout


@unittest.skipUnless(_hyloop_has_ctl(), "build/bin/hyloop without the ctl subcommand")
class CtlTest(FakeServerCase):
    """`hyloop ctl` (C++) against the same fake coordinator."""

    def ctl(self, *args: str, address: Optional[str] = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(BIN_DIR / "hyloop"), "ctl", address or self.address,
                               "--insecure", *args],
                              capture_output=True, text=True, timeout=60, cwd=self.tmp)

    def test_start_watch_summary_runs(self) -> None:
        r = self.ctl("load", "--scenario", str(SCENARIO), "--set", "timing.duration_s=2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("fake (sits): 200 cycles", r.stdout)
        r = self.ctl("start", "--out", "run")  # relative to the ctl's working directory
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("RUNNING", r.stdout)
        self.assertIn(f"out dir:           {self.tmp / 'run'}", r.stdout)
        r = self.ctl("watch", "--decimation", "20")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertTrue(lines[0].startswith("cycle        0"), lines[0])
        for name in ("x[m]=", "v[m/s]=", "k_h[N*s/m]=", "f_meas[N]="):
            self.assertIn(name, lines[0])
        self.assertNotIn("time[s]=", lines[0])
        self.assertIn("stream ended", lines[-1])
        HyloopClient(self.address, insecure=True).wait(timeout_s=10)
        r = self.ctl("status")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("state:             FINISHED", r.stdout)
        self.assertIn("cycle:             200 / 200", r.stdout)
        self.assertRegex(r.stdout, r"sensor +127\.0\.0\.1:1 +ACTIVE +healthy")
        r = self.ctl("summary")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["cycles"], 200)
        r = self.ctl("runs")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"run-1 +FINISHED +fake +/")

    def test_start_with_scenario_then_estop(self) -> None:
        self.fake.total = 100000
        r = self.ctl("start", "--scenario", str(SCENARIO), "--out", str(self.tmp / "run"),
                     "--mode", "realtime")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("loaded fake", r.stdout)
        r = self.ctl("watch", "--timeout", "0.5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("stopped after 0.5 s", r.stdout)
        r = self.ctl("estop", "--reason", "test")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ESTOPPED", r.stdout)
        self.assertIn("message:           test", r.stdout)

    def test_refused_and_unreachable(self) -> None:
        r = self.ctl("load", "--scenario", str(SCENARIO), "--set", "timing.step_s=-1")
        self.assertEqual(r.returncode, 1)
        self.assertIn("timing.step_s = -1", r.stderr)
        r = self.ctl("start", "--out", "run")  # nothing loaded
        self.assertEqual(r.returncode, 1)
        self.assertIn("no scenario loaded", r.stderr)
        r = self.ctl("start")
        self.assertEqual(r.returncode, 1)
        self.assertIn("--out", r.stderr)
        r = self.ctl("status", address="127.0.0.1:1")
        self.assertEqual(r.returncode, 2)
        self.assertIn("hyloop ctl: cannot reach the coordinator at 127.0.0.1:1: ", r.stderr)
        r = self.ctl("bogus")
        self.assertNotEqual(r.returncode, 0)


if __name__ == "__main__":
    unittest.main()
