"""The hyloop tool as a new user meets it (issue 15: defect 2, defect 9, the small items).

    HYLOOP_BIN_DIR=build/bin /usr/bin/python3 -m unittest tests/cli/test_cli.py
"""

import csv
import json
import os
import re
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("HYLOOP_BIN_DIR", REPO / "build" / "bin"))
HYLOOP = str(BIN / "hyloop")
FGC = str(REPO / "scenarios" / "sits" / "table1_fgc.yaml")
SHORT = ["--set", "timing.duration_s=2"]


def hyloop(*args, cwd=None, timeout=120):
    return subprocess.run([HYLOOP, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd)


class OutDirectory(unittest.TestCase):
    """--out EXISTING: the message and --force agree; --force replaces only a run directory."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hyloop_cli_")
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def make_run(self, name):
        r = hyloop("run", FGC, "--out", str(self.root / name), *SHORT)
        self.assertEqual(r.returncode, 0, r.stderr)
        return self.root / name

    def test_up_force_replaces_a_run_directory(self):
        run = self.make_run("run")
        r = hyloop("up", FGC, "--out", str(run), "--inproc", *SHORT)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("use --force to replace it", r.stderr)
        before = (run / "summary.json").stat().st_mtime_ns
        r = hyloop("up", FGC, "--out", str(run), "--inproc", "--force", *SHORT)
        self.assertEqual(r.returncode, 0, r.stderr)
        summary = json.loads((run / "summary.json").read_text())
        self.assertIn("distributed", summary)  # written by up, not the run above
        self.assertNotEqual((run / "summary.json").stat().st_mtime_ns, before)

    def test_force_never_replaces_another_directory(self):
        victim = self.root / "notes"
        (victim / "sub").mkdir(parents=True)
        (victim / "thesis.tex").write_text("years of work\n")
        (victim / "summary.json").write_text("{}\n")  # looks like a run, holds more
        outside = self.root / "outside.txt"
        outside.write_text("keep\n")
        link = self.root / "link"
        link.symlink_to(self.make_run("linked"))
        for cmd in (["run", FGC], ["up", FGC, "--inproc"]):
            with self.subTest(cmd=cmd[0]):
                r = hyloop(*cmd, "--out", str(victim), "--force", *SHORT)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn("not a hyloop run directory", r.stderr)
                self.assertIn("thesis.tex", r.stderr)
                self.assertEqual((victim / "thesis.tex").read_text(), "years of work\n")
                self.assertTrue((victim / "sub").is_dir())
                r = hyloop(*cmd, "--out", str(link), "--force", *SHORT)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn("symbolic link", r.stderr)
                self.assertTrue(link.is_symlink())
                self.assertTrue((self.root / "linked" / "summary.json").is_file())
                r = hyloop(*cmd, "--out", str(outside), "--force", *SHORT)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn("not a directory", r.stderr)
                self.assertEqual(outside.read_text(), "keep\n")

    def test_up_force_keeps_the_old_run_when_the_scenario_is_refused(self):
        run = self.make_run("run")
        r = hyloop("up", FGC, "--out", str(run), "--inproc", "--force",
                   "--set", "timing.step_s=-1")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("timing.step_s = -1", r.stderr)
        self.assertTrue((run / "summary.json").is_file())


class Outcome(unittest.TestCase):
    """Defect 9: gains left at 0 are warned before the run, divergence after it; a short run
    shortens the metrics window, a given longer window is an error naming the fix."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hyloop_cli_")
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_zero_gain_is_warned_and_divergence_too(self):
        r = hyloop("validate", FGC, "--set", "compensator.k_eps0=0")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("warning: compensator.type = fgc with k_eps0 = 0", r.stderr)
        r = hyloop("run", FGC, "--out", str(self.root / "r"), "--set", "compensator.k_eps0=0",
                   "--set", "timing.duration_s=20")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(json.loads(r.stdout)["diverged"])
        self.assertIn("warning: compensator.type = fgc with k_eps0 = 0", r.stderr)
        self.assertRegex(r.stderr, r"WARNING: the loop diverged \(energy_ratio [0-9.]+")
        r = hyloop("run", FGC, "--out", str(self.root / "ok"), "--set", "timing.duration_s=20")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(json.loads(r.stdout)["diverged"])
        self.assertNotIn("warning", r.stderr.lower())

    def test_safety_stop_is_warned(self):
        r = hyloop("run", str(REPO / "scenarios" / "rht" / "none.yaml"), "--out",
                   str(self.root / "rht"))
        self.assertEqual(r.returncode, 0, r.stderr)
        s = json.loads(r.stdout)
        self.assertEqual(s["stop_reason"], "stability_guard")  # before the stroke (4.27 s)
        self.assertIn("WARNING: the run stopped early (stop_reason stability_guard) at t = "
                      f"{s['duration_s']:.3f} s", r.stderr)

    def test_short_run_and_metrics_window(self):
        r = hyloop("run", FGC, "--out", str(self.root / "short"), *SHORT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["metrics"]["window_s"], 2.0)
        self.assertIn("warning: metrics.window_s", r.stderr)
        r = hyloop("run", FGC, "--out", str(self.root / "bad"), *SHORT,
                   "--set", "metrics.window_s=5")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--set metrics.window_s=2", r.stderr)
        self.assertFalse((self.root / "bad").exists())


class Spelling(unittest.TestCase):
    """The small items: one spelling of the real-time mode, compare's help, ctl's words."""

    def test_mode_real_time_and_the_deprecated_spelling(self):
        for mode, deprecated in (("real_time", False), ("realtime", True), ("lockstep", False)):
            r = hyloop("ctl", "127.0.0.1:1", "start", "--out", "x", "--mode", mode,
                       "--insecure", "--timeout", "0.5")
            self.assertEqual(r.returncode, 2, r.stderr)  # parsed; the coordinator is not there
            self.assertEqual("deprecated" in r.stderr, deprecated, r.stderr)
        r = hyloop("up", "--help")
        self.assertIn("lockstep,real_time", r.stdout)

    def test_compare_help_says_what_it_accepts(self):
        r = hyloop("compare", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("2 to 16", r.stdout)
        self.assertNotRegex(r.stdout, r"x 2 REQUIRED")
        self.assertRegex(r.stdout, r"compare \[OPTIONS\] RUN_DIR\.\.\.")
        dirs = [f"d{i}" for i in range(17)]
        r = hyloop("compare", *dirs, "--out", "o")
        self.assertNotEqual(r.returncode, 0)


class CtlAgainstAStack(unittest.TestCase):
    """`ctl start` with nothing loaded names ctl's own verb; `ctl watch` shows e_V = v − v_i,
    equal to the recorded samples of the same cycle."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="hyloop_cli_stack_")
        cls.runs = Path(cls.tmp.name)
        cls.stack = subprocess.Popen([HYLOOP, "up", "--serve", "--runs-dir", str(cls.runs)],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        cls.address = cls.security = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and cls.address is None:
            line = cls.stack.stdout.readline()
            if not line:
                break
            if line.startswith("hyloop-security-dir "):
                cls.security = line.split(None, 1)[1].strip()
            if line.startswith("hyloop-coordinator grpc "):
                cls.address = line.split()[-1]

    @classmethod
    def tearDownClass(cls):
        cls.stack.terminate()
        try:
            cls.stack.wait(timeout=10)
        except subprocess.TimeoutExpired:
            cls.stack.kill()
            cls.stack.wait()
        cls.tmp.cleanup()

    def ctl(self, *args, timeout=60):
        return hyloop("ctl", self.address, "--security-dir", self.security, *args,
                      timeout=timeout)

    def test_start_without_scenario_and_watch_error_against_twin(self):
        self.assertIsNotNone(self.address, "hyloop up --serve printed no address")
        r = self.ctl("start", "--out", "nothing")
        self.assertEqual(r.returncode, 1)
        self.assertNotIn("LoadScenario", r.stderr)
        self.assertIn(f"hyloop ctl {self.address} load --scenario FILE", r.stderr)
        self.assertIn("start --scenario FILE", r.stderr)

        r = self.ctl("start", "--scenario", FGC, "--set", "timing.duration_s=3", "--mode",
                     "real_time", "--out", "watched")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.ctl("watch", "--decimation", "100")
        self.assertEqual(r.returncode, 0, r.stderr)
        frames = [l for l in r.stdout.splitlines() if l.startswith("cycle")]
        self.assertGreater(len(frames), 3, r.stdout)
        for name in ("x[m]=", "v[m/s]=", "e_V[m/s]=", "k_h[N*s/m]="):
            self.assertIn(name, frames[0])
        deadline = time.monotonic() + 30
        out = self.runs / "watched"
        while time.monotonic() < deadline and not (out / "summary.json").is_file():
            time.sleep(0.1)
        with open(out / "samples.csv", newline="") as f:
            rows = list(csv.reader(f))
        head = rows[0]
        t, v, vi = head.index("time[s]"), head.index("v[m/s]"), head.index("v_ideal[m/s]")
        by_step = {round(float(row[t]) / 0.002): float(row[v]) - float(row[vi])
                   for row in rows[1:]}
        checked = 0
        for line in frames:
            step = round(float(re.search(r"\bt +([0-9.]+) s", line).group(1)) / 0.002)
            e_v = float(re.search(r"e_V\[m/s\]=(\S+)", line).group(1))
            if step in by_step:
                self.assertAlmostEqual(e_v, by_step[step], delta=1e-5 * abs(by_step[step])
                                       + 1e-12, msg=line)
                checked += 1
        self.assertGreater(checked, 3)


class TuneOwnTuner(unittest.TestCase):
    """`hyloop tune` of a kind with its own tuner (Kind::tune): --out's table, the --set lines."""

    def test_writes_the_table_and_prints_pasteable_set_lines(self):
        scenario = str(REPO / "scenarios" / "vrths" / "case1_ats.yaml")
        with tempfile.TemporaryDirectory(prefix="hyloop_cli_") as tmp:
            out = Path(tmp) / "tune.json"
            r = hyloop("tune", scenario, "--runs", "1", "--jobs", "2", "--top", "2",
                       "--set", "timing.duration_s=20", "--out", str(out))
            self.assertEqual(r.returncode, 0, r.stderr)
            table = json.loads(out.read_text())
            self.assertEqual(len(table["table"]), table["candidates"])
            self.assertTrue(table["default"]["default"])
            self.assertLessEqual(table["best"]["J2_percent_mean"],
                                 table["default"]["J2_percent_mean"])
            for line in table["best"]["set"]:
                self.assertIn(f"--set '{line}'", r.stdout)
            self.assertIn("the scenario's own: J2", r.stdout)
            self.assertIn("rank", r.stderr)

    def test_refusals_name_the_field_or_option(self):
        vrths = REPO / "scenarios" / "vrths"
        r = hyloop("tune", str(vrths / "case1_sample.yaml"))
        self.assertEqual(r.returncode, 2)
        self.assertIn('controller.type = "sample"', r.stderr)
        r = hyloop("tune", str(vrths / "case1_amb.yaml"), "--runs", "0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--runs = 0: must be in [1, 1000]", r.stderr)
        r = hyloop("tune", str(vrths / "case1_amb.yaml"), "--coarse")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--coarse", r.stderr)
        r = hyloop("tune", str(REPO / "scenarios" / "fcu" / "none.yaml"))
        self.assertEqual(r.returncode, 2)
        self.assertIn('kind = "fcu"', r.stderr)
        r = hyloop("tune", str(REPO / "scenarios" / "rht" / "p4.yaml"))
        self.assertEqual(r.returncode, 2)
        self.assertIn('compensator.type = "adaptive"', r.stderr)
        r = hyloop("tune", FGC, "--runs", "3")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--runs", r.stderr)


if __name__ == "__main__":
    unittest.main()


class OneParse(unittest.TestCase):
    """Issue 23: `hyloop run` and `hyloop validate` parse the scenario's YAML once, for every
    kind (HYLOOP_COUNT_PARSES makes the tool say how many times it did)."""

    SCENARIOS = ["sits/table1_fgc.yaml", "rht/ats.yaml", "fcu/polynomial.yaml",
                 "vrths/case1_amb.yaml"]

    def count(self, *args):
        r = subprocess.run([HYLOOP, *args], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "HYLOOP_COUNT_PARSES": "1"})
        self.assertEqual(r.returncode, 0, r.stderr)
        found = re.findall(r"hyloop: scenario YAML parses: (\d+)", r.stderr)
        self.assertEqual(len(found), 1, r.stderr)
        return int(found[0])

    def test_run_and_validate_parse_once(self):
        with tempfile.TemporaryDirectory(prefix="hyloop_parse_") as tmp:
            for i, s in enumerate(self.SCENARIOS):
                path = str(REPO / "scenarios" / s)
                with self.subTest(scenario=s):
                    short = ["--set", "timing.duration_s=4"]  # the FCU ramps in over 2 s
                    self.assertEqual(self.count("validate", path, *short), 1)
                    self.assertEqual(
                        self.count("run", path, "--out", str(Path(tmp) / str(i)), *short), 1)


class UpServiceConfig(unittest.TestCase):
    """Issue 27, finding 8: `hyloop up --service-config FILE` starts every service with that
    configuration (the input deadline's periods and floor among it); what `up` owns and a value
    out of range are refused before anything starts."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hyloop_svc_cfg_")
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def config(self, text):
        path = self.root / "services.yaml"
        path.write_text(text)
        return str(path)

    def test_every_loop_service_takes_the_deadline_and_the_log_level(self):
        cfg = self.config("log_level: info\ninput_deadline_periods: 3\ninput_deadline_floor_ms: 0\n")
        r = hyloop("up", FGC, "--out", str(self.root / "run"), *SHORT, "--service-config", cfg,
                   timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        lines = re.findall(r"input deadline max\(3 periods, 0 ms\) \(off in lockstep\)", r.stderr)
        self.assertEqual(len(lines), 4, r.stderr[-3000:])  # rig emulator, sensor, dynamics, actuator

    def test_without_it_the_services_keep_ups_defaults(self):
        r = hyloop("up", FGC, "--out", str(self.root / "run"), *SHORT, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertNotIn("input deadline max(", r.stderr)  # up starts them at warn

    def test_inproc_takes_the_deadline_and_rt_only(self):
        ok = self.config("input_deadline_periods: 4\ninput_deadline_floor_ms: 10\n")
        r = hyloop("up", FGC, "--out", str(self.root / "a"), "--inproc", *SHORT,
                   "--service-config", ok)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        found = re.findall(r"input deadline max\(4 periods, 10 ms\)", r.stdout + r.stderr)
        self.assertEqual(len(found), 4, r.stderr[-3000:])  # in process, its log is on stdout
        other = self.config("log_level: info\n")
        r = hyloop("up", FGC, "--out", str(self.root / "b"), "--inproc", *SHORT,
                   "--service-config", other)
        self.assertEqual(r.returncode, 2)
        self.assertIn("log_level applies to services as processes", r.stderr)
        self.assertFalse((self.root / "b").exists())

    def test_the_summary_says_what_real_time_set_up_each_loop_thread_got(self):
        # Issue 26: SCHED_FIFO, locked memory, pinning and timer slack, asked for in the service
        # configuration, in both placements; what took is in summary.json (distributed.realtime),
        # never silently. Whether SCHED_FIFO takes depends on the host (CAP_SYS_NICE): a flag.
        rt = self.config("rt:\n  enabled: true\n  priority: 10\n")
        for placement in ([], ["--inproc"]):
            for asked in (False, True):
                out = self.root / ("rt_%s_%d" % ("inproc" if placement else "processes", asked))
                extra = ["--service-config", rt] if asked else []
                r = hyloop("up", FGC, "--out", str(out), *placement, "--mode", "real_time",
                           *SHORT, *extra, timeout=300)
                self.assertTrue((out / "summary.json").is_file(), r.stderr[-3000:])
                distributed = json.loads((out / "summary.json").read_text())["distributed"]
                # Late commands per minute of the run (one minute here), summing to the total.
                misses = distributed["loop_misses"]
                self.assertEqual(len(misses["late_commands_per_minute"]), 1, misses)
                self.assertEqual(sum(misses["late_commands_per_minute"]), misses["late_commands"])
                block = distributed["realtime"]
                self.assertEqual(sorted(block), ["actuator", "dynamics", "rig-emulator", "sensor"])
                for name, got in block.items():
                    self.assertEqual(got["asked"], asked, (name, placement))
                    self.assertEqual(set(got), {"asked", "sched_fifo", "memory_locked", "pinned",
                                                "timer_slack"})
                    if not asked:
                        self.assertFalse(any(got.values()), (name, placement))
                    else:
                        self.assertTrue(got["timer_slack"], (name, placement))  # always allowed
                        self.assertFalse(got["pinned"], (name, placement))  # not asked (cpu -1)

    def test_refusals_name_the_key_and_the_range(self):
        cases = [("grpc_address: 0.0.0.0:50051\n", "grpc_address is `hyloop up`'s to set"),
                 ("insecure: true\n", "insecure is `hyloop up`'s to set"),
                 ("input_deadline_floor_ms: 5000\n", "input_deadline_floor_ms"),
                 ("input_deadline_periods: 1\n", "input_deadline_periods")]
        for text, expected in cases:
            with self.subTest(config=text):
                r = hyloop("up", FGC, "--out", str(self.root / "run"), *SHORT,
                           "--service-config", self.config(text))
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(expected, r.stderr)
                self.assertFalse((self.root / "run").exists())
