"""End-to-end test of hyloop_client against the real stack (`hyloop up --serve`)."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import IO, Optional

import grpc

from hyloop_client import HyloopClient, control_pb2, control_pb2_grpc, state_name

REPO = Path(__file__).resolve().parents[2]
BIN_DIR = Path(os.environ.get("HYLOOP_BIN_DIR", REPO / "build" / "bin"))
SCENARIO = REPO / "scenarios" / "sits" / "table1_scvg.yaml"
# 2 s at T = 2 ms; the metrics window must fit in the shorter run.
OVERRIDES = ["timing.duration_s=2", "metrics.window_s=1"]
CYCLES = 1000
ADDRESS_LINE = re.compile(r"^hyloop-coordinator grpc (\S+)\s*$")
SECURITY_LINE = re.compile(r"^hyloop-security-dir (\S+)\s*$")


def _drain(stream: IO[str], lines: "queue.Queue[Optional[str]]") -> None:
    """Forward the stack's stdout lines (so its pipe never fills up)."""
    for line in stream:
        lines.put(line)
    lines.put(None)


class StackTest(unittest.TestCase):
    """One `hyloop up --serve` for the class; the tests run in name order, SIGTERM last."""

    proc: subprocess.Popen
    address: str
    security_dir: Path  # `up --serve` prints its private security directory

    @classmethod
    def setUpClass(cls) -> None:
        exe = BIN_DIR / "hyloop"
        if not exe.is_file():
            raise RuntimeError(f"{exe} not built")
        cls.tmp = Path(tempfile.mkdtemp(prefix="hyloop_client_test_"))
        cls.proc = subprocess.Popen([str(exe), "up", "--serve", "--runs-dir", str(cls.tmp)],
                                    stdout=subprocess.PIPE,
                                    text=True, cwd=REPO, start_new_session=True)
        lines: "queue.Queue[Optional[str]]" = queue.Queue()
        threading.Thread(target=_drain, args=(cls.proc.stdout, lines), daemon=True).start()
        deadline = time.monotonic() + 30
        address = None
        while address is None:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                cls._kill()
                raise RuntimeError("`hyloop up --serve` printed no 'hyloop-coordinator grpc ADDR' "
                                   "line within 30 s")
            match = SECURITY_LINE.match(line)
            if match:
                cls.security_dir = Path(match.group(1))
            match = ADDRESS_LINE.match(line)
            if match:
                address = match.group(1)
        cls.address = address

    @classmethod
    def tearDownClass(cls) -> None:
        cls._kill()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def _kill(cls) -> None:
        """Last resort: end the stack's process group (this test started it)."""
        if cls.proc.poll() is None:
            os.killpg(cls.proc.pid, signal.SIGKILL)
            cls.proc.wait()

    def test_1_lockstep_run(self) -> None:
        out = self.tmp / "run"
        with HyloopClient(self.address, security_dir=self.security_dir) as c:
            loaded = c.load_scenario(str(SCENARIO), overrides=OVERRIDES)
            self.assertEqual(loaded.kind, "sits")
            self.assertEqual(loaded.total_cycles, CYCLES)
            self.assertAlmostEqual(loaded.step_s, 0.002)
            started = c.start("run", mode="lockstep")  # in the stack's --runs-dir
            self.assertEqual(Path(started.out_dir), out.resolve())
            self.assertEqual(state_name(started.state), "RUNNING")
            frames = []
            for frame in c.telemetry(decimation=10):
                frames.append(frame)
                if len(frames) >= 3:
                    break
            self.assertGreaterEqual(len(frames), 1, "no telemetry frame")
            self.assertIn("x[m]", frames[0]["values"])
            final = c.wait(timeout_s=120)
            self.assertEqual(state_name(final.state), "FINISHED", final.message)
            self.assertEqual(final.cycle, CYCLES)
            samples = (out / "samples.csv").read_text().splitlines()
            self.assertEqual(len(samples), 1 + CYCLES)
            self.assertTrue(samples[0].startswith("time[s],"))
            on_disk = json.loads((out / "summary.json").read_text())
            self.assertEqual(c.summary(), on_disk)
            self.assertEqual(c.summary(final.run_id), on_disk)
            self.assertIn(final.run_id, [r.run_id for r in c.runs()])

    def test_2_invalid_scenario_names_the_field(self) -> None:
        with HyloopClient(self.address, security_dir=self.security_dir) as c:
            with self.assertRaises(grpc.RpcError) as cm:
                c.load_scenario(str(SCENARIO), overrides=["timing.step_s=-1"])
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("timing.step_s", cm.exception.details())
            # The coordinator is still serving.
            self.assertNotEqual(c.status().state, control_pb2.RUN_STATE_RUNNING)

    def test_2_tokens_are_checked(self) -> None:
        # Without a token: UNAUTHENTICATED; the observer cannot start; any role may e-stop.
        ca = self.security_dir / "ca.crt"
        channel = grpc.secure_channel(
            self.address, grpc.ssl_channel_credentials(root_certificates=ca.read_bytes()))
        stub = control_pb2_grpc.ExperimentStub(channel)
        with self.assertRaises(grpc.RpcError) as cm:
            stub.GetStatus(control_pb2.StatusRequest(), timeout=10)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        self.assertIn("Experiment.GetStatus", cm.exception.details())
        channel.close()
        with HyloopClient(self.address, security_dir=self.security_dir, role="observer") as c:
            self.assertNotEqual(c.status().state, control_pb2.RUN_STATE_RUNNING)
            with self.assertRaises(grpc.RpcError) as cm:
                c.start("observer-run")
            self.assertEqual(cm.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
            self.assertIn("Experiment.Start needs the operator role", cm.exception.details())

    def test_2_a_private_security_directory(self) -> None:
        # In a private (0700) temporary directory of this user, keys and tokens 0600.
        for d in (self.security_dir.parent, self.security_dir, self.security_dir / "tokens"):
            st = d.stat()
            self.assertEqual(st.st_mode & 0o777, 0o700, d)
            self.assertEqual(st.st_uid, os.geteuid(), d)
        for f in ("coordinator.key", "tokens/operator", "curve/actuator.secret"):
            self.assertEqual((self.security_dir / f).stat().st_mode & 0o777, 0o600, f)

    def test_2_ctl_takes_the_security_dir_or_refuses(self) -> None:
        ctl = [str(BIN_DIR / "hyloop"), "ctl", self.address, "status"]
        r = subprocess.run([*ctl, "--security-dir", str(self.security_dir), "--role", "observer"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("state:", r.stdout)
        r = subprocess.run(ctl, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1)
        self.assertIn("give one of --security-dir DIR, --ca FILE --token-file FILE, or --insecure",
                      r.stderr)
        r = subprocess.run([*ctl, "--insecure"], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0, "a plaintext client must be refused")

    def test_3_sigterm_stops_the_stack(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.fail("`hyloop up --serve` still running 15 s after SIGTERM")
        self.assertEqual(code, 0)
        # `up` removes its private security directory (keys and tokens) when it ends.
        self.assertFalse(self.security_dir.exists(), self.security_dir)
        self.assertFalse(self.security_dir.parent.exists(), self.security_dir.parent)


if __name__ == "__main__":
    unittest.main()
