"""A scenario's rig on the wire (issue 24, rig.driver): an RHT scenario whose rig.driver is a UDP
real-time target runs through `hyloop up --mode real_time --emulate-wire` against the shipped
target emulator (the same servo model behind a real socket) and tracks as the in-process run
does; lockstep and `hyloop run` are refused by name.

    HYLOOP_BIN_DIR=build/bin /usr/bin/python3 -m unittest tests/cli/test_wire_rig.py
"""

import csv
import json
import os
import re
import socket
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("HYLOOP_BIN_DIR", REPO / "build" / "bin"))
HYLOOP = str(BIN / "hyloop")
ATS = REPO / "scenarios" / "rht" / "ats.yaml"
DURATION = ["--set", "timing.duration_s=10"]
# A run over the wire tracks as the in-process run within this factor of its rms error (stated and
# measured in docs/drivers.md, "How closely a run over the wire follows the in-process run").
RMS_FACTOR = 10.0


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def udp_block(velocity=False):
    """The rig.driver block of a udp target on loopback (`velocity`: the measured velocity too)."""
    return """rig:
  driver:
    type: udp
    local_address: 127.0.0.1
    local_port: %d
    peer_address: 127.0.0.1
    peer_port: %d
    timeout_s: 0.2
    udp:
      command:
        - {name: seq, type: u32}
        - {name: position, type: f64}
      measurement:
        - {name: seq, type: u32}
        - {name: echo, type: u32}
        - {name: position, type: f64}
        - {name: force, type: f64}
        - {name: status, type: u8}%s
      signals: {measured_force: force, command_echo: echo, status: status%s}
""" % (free_port(), free_port(), "\n        - {name: velocity, type: f64}" if velocity else "",
       ", measured_velocity: velocity" if velocity else "")


def device_line(stderr):
    lines = [x for x in stderr.splitlines() if "udp target emulator:" in x]
    return lines[-1].replace("hyloop up: ", "") if lines else "no device report"


def hyloop(*args, timeout=180):
    return subprocess.run([HYLOOP, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO)


class WireRig(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hyloop_wire_")
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def scenario(self):
        path = self.root / "ats_udp.yaml"
        path.write_text(ATS.read_text() + udp_block())
        return str(path)

    def metrics(self, run):
        return json.loads((run / "summary.json").read_text())["metrics"]

    def test_hyloop_run_refuses_a_device_on_the_wire(self):
        r = hyloop("run", self.scenario(), "--out", str(self.root / "run"), *DURATION)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("rig.driver.type = udp: hyloop run steps the rig in this process", r.stderr)
        self.assertIn("hyloop up --mode real_time", r.stderr)
        self.assertFalse((self.root / "run" / "samples.csv").exists())

    def test_a_lockstep_run_is_refused_at_start(self):
        for extra in (["--inproc"], []):
            with self.subTest(extra=extra):
                out = self.root / ("lockstep%d" % len(extra))
                r = hyloop("up", self.scenario(), "--out", str(out), "--mode", "lockstep",
                           *extra, *DURATION)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn("rig.driver.type = udp: a lockstep run waits for every cycle",
                              r.stderr)
                self.assertIn("--mode real_time", r.stderr)

    def test_emulate_wire_needs_a_device_on_the_wire(self):
        r = hyloop("up", str(ATS), "--out", str(self.root / "x"), "--inproc", "--emulate-wire",
                   "--mode", "real_time", *DURATION)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--emulate-wire: rig.driver.type = emulator", r.stderr)

    def up_real_time(self, scenario, out, *extra):
        r = hyloop("up", scenario, "--out", str(out), "--mode", "real_time", *extra, *DURATION)
        self.assertTrue((out / "summary.json").is_file(), r.stderr[-2000:])
        self.assertTrue((out / "samples.csv").is_file(), r.stderr[-2000:])
        summary = json.loads((out / "summary.json").read_text())
        return r, summary

    def test_up_over_the_udp_target_emulator_tracks_as_the_in_process_run(self):
        ref = self.root / "ref"
        r = hyloop("run", str(ATS), "--out", str(ref), *DURATION)
        self.assertEqual(r.returncode, 0, r.stderr)
        want = self.metrics(ref)["rms_error_m"]
        seeds = (1, 2, 3)
        within = judged = 0
        lines = []
        for seed in seeds:
            r, wire = self.up_real_time(self.scenario(), self.root / ("wire%d" % seed),
                                        "--emulate-wire", "--wire-jitter-ms", "1",
                                        "--wire-loss", "0.002", "--wire-seed", str(seed))
            # What must hold whatever the load: the run is recorded, the device never faulted
            # (a finished run, or one the supervisor stopped: stability guard, a loaded machine's
            # service fault) and got commands.
            line = device_line(r.stderr)
            self.assertNotEqual(wire["stop_reason"], "driver_fault", line)
            commands = int(re.search(r"(\d+) commands", line).group(1))
            slips = int(re.search(r"(\d+) steps on a held command", line).group(1))
            self.assertGreater(commands, 100, line)
            _, local = self.up_real_time(str(ATS), self.root / ("local%d" % seed))
            got = wire["metrics"]["rms_error_m"]
            # The machine held real time when the same loop over the in-process emulator did;
            # then the target stepped on its held command (a slip) for at most 10 % of the
            # commands it got (a run at load 14, a sanitizer suite beside it, slipped 27 of 265).
            held = local["stop_reason"] is None
            if held:
                self.assertLessEqual(slips, 0.10 * commands, line)
            judged += held
            ok = held and wire["stop_reason"] is None and got <= RMS_FACTOR * want
            within += ok
            lines.append("seed %d: over the wire rms %.3g mm (%s; %d late commands), real-time "
                         "emulator rms %.3g mm (%s), in process %.3g mm; %s" % (
                             seed, 1e3 * got, wire["stop_reason"] or "finished",
                             wire["distributed"]["loop_misses"]["late_commands"],
                             1e3 * local["metrics"]["rms_error_m"],
                             local["stop_reason"] or "finished", 1e3 * want,
                             device_line(r.stderr)))
        report = "\n".join(lines)
        print("\nrht/ats over a udp target: %d of %d seeds (on which the machine held real time) "
              "finished within %g x the in-process rms error\n%s" % (within, judged, RMS_FACTOR,
                                                                    report))
        # Real time on a shared machine is not a CI gate (DESIGN.md 9): the tracking rate is
        # asserted only with HYLOOP_WIRE_TRACKING_GATE=1 (a quiet machine), 2 in 3 of the seeds
        # whose in-process-emulator run held real time.
        if os.environ.get("HYLOOP_WIRE_TRACKING_GATE") == "1" and judged >= 2:
            self.assertGreaterEqual(3 * within, 2 * judged, report)

def robot_block(kind):
    force = "egm: {force: fz}" if kind == "egm" else "rsi: {force_tag: FT}"
    return """rig:
  driver:
    type: %s
    local_address: 127.0.0.1
    local_port: %d
    peer_address: 127.0.0.1
    peer_port: %d
    timeout_s: 0.2
    %s
""" % (kind, free_port(), free_port(), force)


class RobotRig(unittest.TestCase):
    """rig.driver egm and rsi: rht/ats's servo-hydraulic specimen behind an emulated ABB (EGM)
    or KUKA (RSI) controller, stepped on the controller's own 4 ms cycle while the loop runs at
    the scenario's 10 ms, through `hyloop up --mode real_time --emulate-wire`."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hyloop_robot_rig_")
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def run_over(self, kind):
        ref = self.root / "ref"
        if not ref.exists():
            r = hyloop("run", str(ATS), "--out", str(ref), *DURATION)
            self.assertEqual(r.returncode, 0, r.stderr)
        want = json.loads((ref / "summary.json").read_text())["metrics"]["rms_error_m"]
        lines = []
        within = 0
        for seed in (1, 2):
            path = self.root / ("ats_%s.yaml" % kind)
            path.write_text(ATS.read_text() + robot_block(kind))
            out = self.root / ("%s%d" % (kind, seed))
            r = hyloop("up", str(path), "--out", str(out), "--mode", "real_time",
                       "--emulate-wire", "--wire-jitter-ms", "0.5", "--wire-loss", "0.002",
                       "--wire-seed", str(seed), *DURATION)
            self.assertTrue((out / "summary.json").is_file(), r.stderr[-2000:])
            summary = json.loads((out / "summary.json").read_text())
            reports = [x for x in r.stderr.splitlines() if "controller emulator:" in x
                       or "robot emulator:" in x]
            self.assertTrue(reports, r.stderr[-2000:])
            line = reports[-1].replace("hyloop up: ", "")
            # Whatever the load: recorded, the device never faulted and was corrected.
            self.assertNotEqual(summary["stop_reason"], "driver_fault", line)
            corrections = int(re.search(r"(\d+) corrections", line).group(1))
            self.assertGreater(corrections, 0, line)
            got = summary["metrics"]["rms_error_m"]
            ok = summary["stop_reason"] is None and got <= RMS_FACTOR * want
            within += ok
            lines.append("seed %d: rms %.3g mm (%s; %d late commands), in process %.3g mm; %s"
                         % (seed, 1e3 * got, summary["stop_reason"] or "finished",
                            summary["distributed"]["loop_misses"]["late_commands"], 1e3 * want,
                            line))
        print("\nrht/ats over %s: %d of 2 seeds finished within %g x the in-process rms error\n%s"
              % (kind, within, RMS_FACTOR, "\n".join(lines)))
        if os.environ.get("HYLOOP_WIRE_TRACKING_GATE") == "1":
            self.assertGreaterEqual(within, 1, "\n".join(lines))

    def test_up_over_an_emulated_egm_robot(self):
        self.run_over("egm")

    def test_up_over_an_emulated_rsi_controller(self):
        self.run_over("rsi")

    def test_a_shipped_scenario_over_a_robot_with_set_alone(self):
        # No ports given: --emulate-wire puts both ends on free loopback ports.
        out = self.root / "set_only"
        r = hyloop("up", str(ATS), "--out", str(out), "--inproc", "--mode", "real_time",
                   "--emulate-wire", "--set", "rig.driver.type=egm",
                   "--set", "rig.driver.egm.force=fz", "--set", "timing.duration_s=3")
        self.assertTrue((out / "summary.json").is_file(), r.stderr[-2000:])
        self.assertRegex(r.stderr, r"--emulate-wire: rig\.driver\.local_port=\d+")
        summary = json.loads((out / "summary.json").read_text())
        self.assertNotEqual(summary["stop_reason"], "driver_fault", r.stderr[-2000:])
        self.assertRegex(r.stderr, r"egm robot emulator: \d+ EgmRobot, [1-9]\d* corrections")
        # Without the force the RHT loop needs, the field is named.
        r = hyloop("up", str(ATS), "--out", str(self.root / "no_force"), "--inproc", "--mode",
                   "real_time", "--emulate-wire", "--set", "rig.driver.type=egm",
                   "--set", "timing.duration_s=3")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("rig.driver.egm.force", r.stderr)


SITS = REPO / "scenarios" / "sits" / "table1_scvg.yaml"


class SitsOverTheWire(unittest.TestCase):
    """The SITS rig (robot G_R, contact, force sensor delay: hal::SitsAxisPlant) behind each wire
    emulator: a udp target at the scenario's 2 ms step, an EGM robot and an RSI controller at
    their 4 ms cycle with the same 2 ms sensor delay; the loop through the services in real time
    against the in-process run's Table 1 figures."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hyloop_sits_wire_")
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_table1_scvg_over_each_wire_emulator(self):
        ref = self.root / "ref"
        r = hyloop("run", str(SITS), "--out", str(ref), *DURATION)
        self.assertEqual(r.returncode, 0, r.stderr)
        want = json.loads((ref / "summary.json").read_text())
        lines = []
        results = {}
        for kind, block in (("udp", udp_block(velocity=True)), ("egm", robot_block("egm")),
                            ("rsi", robot_block("rsi"))):
            path = self.root / ("sits_%s.yaml" % kind)
            # The scenario has a rig mapping: the driver block goes in at its head.
            text = SITS.read_text()
            self.assertIn("\nrig:\n", text)
            path.write_text(text.replace("\nrig:\n", "\n" + block, 1))
            out = self.root / kind
            r = hyloop("up", str(path), "--out", str(out), "--mode", "real_time",
                       "--emulate-wire", "--wire-jitter-ms", "0.2", "--wire-seed", "1",
                       *DURATION)
            self.assertTrue((out / "summary.json").is_file(), r.stderr[-2000:])
            got = json.loads((out / "summary.json").read_text())
            reports = [x for x in r.stderr.splitlines() if "emulator:" in x]
            self.assertTrue(reports, r.stderr[-2000:])
            line = reports[-1].replace("hyloop up: ", "")
            self.assertNotEqual(got["stop_reason"], "driver_fault", line)
            m, w = got["metrics"], want["metrics"]
            lines.append("%s: %s; e_V %.4g m/s (in process %.4g), e_F %.4g N (%.4g), e_R %.4g "
                         "(%.4g), energy ratio %.4g (%.4g), %d late commands; %s" % (
                             kind, got["stop_reason"] or "finished", m["e_V_peak_mps"],
                             w["e_V_peak_mps"], m["e_F_peak_N"], w["e_F_peak_N"], m["e_R"] or 0,
                             w["e_R"] or 0, got["energy_ratio"] or 0, want["energy_ratio"] or 0,
                             got["distributed"]["loop_misses"]["late_commands"], line))
            results[kind] = got
        report = "\n".join(lines)
        print("\nsits/table1_scvg over the wire, 10 s:\n" + report)
        # EGM and RSI: the robot's 4 ms cycle adds about 3 steps (6 ms) of lag that table1's
        # SCVG gains do not cover; the energy grows and the stability guard (1.2x) stops the run
        # (measured at 1.5-3 s, docs/drivers.md), never the device (asserted in the loop above).
        # Where the machine holds real time that is the guard and nothing else.
        if os.environ.get("HYLOOP_WIRE_TRACKING_GATE") == "1":
            for kind in ("egm", "rsi"):
                self.assertIn(results[kind]["stop_reason"], (None, "stability_guard"), report)
        # The udp target at the scenario's own step: Table 1's figures within 25 % (e_V, e_F) and
        # e_R within 0.05 of the in-process run (measured +3 %, +4 %, +0.004), asserted where the
        # machine holds real time (HYLOOP_WIRE_TRACKING_GATE=1), as the other wire runs.
        if os.environ.get("HYLOOP_WIRE_TRACKING_GATE") == "1":
            m, w = results["udp"]["metrics"], want["metrics"]
            self.assertIsNone(results["udp"]["stop_reason"], report)
            self.assertLessEqual(abs(m["e_V_peak_mps"] / w["e_V_peak_mps"] - 1), 0.25, report)
            self.assertLessEqual(abs(m["e_F_peak_N"] / w["e_F_peak_N"] - 1), 0.25, report)
            self.assertLessEqual(abs(m["e_R"] - w["e_R"]), 0.05, report)


SITS6 = REPO / "scenarios" / "sits6"
# A six-axis run over the EGM robot's whole pose ends with the energy ratio (the body's energy
# against its twin's) within this share of the in-process run's (measured within 3 %, 10 s runs;
# docs/drivers.md).
ENERGY_RATIO_SHARE = 0.10
EGM_POSE = ["--set", "rig.driver.type=egm", "--set", "rig.driver.egm.axis=pose",
            "--set", "rig.driver.egm.force=wrench"]
RSI_POSE = ["--set", "rig.driver.type=rsi", "--set", "rig.driver.rsi.axis=pose",
            "--set", "rig.driver.rsi.force_tag=FT"]
TDPA = ["--set", "compensator.type=tdpa", "--set", "rotational_compensator.type=tdpa"]


class Sits6OverTheWire(unittest.TestCase):
    """The six-axis target's rig (hal::Sits6PosePlant: G_R per axis, the six-axis contact, the
    F/T sensor's delay) behind an emulated ABB robot under EGM and a KUKA controller under RSI,
    the robot's whole pose commanded and its wrench read back (measuredForce; a force tag's Fx..Tz),
    stepped at the controller's 4 ms cycle while the loop runs at 2 ms, the wire jittered by
    0.5 ms and losing 0.2 % of the datagrams. TDPA on every axis (model-free: it does not need the robot's added delay
    stated); the scenarios' own gains, set for the paper's delays, are stopped by the guard as
    the 1-D SITS kind is (docs/drivers.md)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hyloop_sits6_wire_")
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def run_over(self, device, pose, seed):
        lines, finished = [], {}
        for name in ("translation_x", "off_centre", "capture"):
            scenario = str(SITS6 / (name + ".yaml"))
            ref = self.root / (name + "_ref")
            if not ref.exists():
                r = hyloop("run", scenario, "--out", str(ref), *TDPA, *DURATION)
                self.assertEqual(r.returncode, 0, r.stderr)
            want = json.loads((ref / "summary.json").read_text())
            out = self.root / (name + "_" + device)
            r = hyloop("up", scenario, "--out", str(out), "--mode", "real_time", "--emulate-wire",
                       "--wire-jitter-ms", "0.5", "--wire-loss", "0.002", "--wire-seed", str(seed),
                       *pose, *TDPA, *DURATION)
            self.assertTrue((out / "summary.json").is_file(), r.stderr[-2000:])
            got = json.loads((out / "summary.json").read_text())
            reports = [x for x in r.stderr.splitlines()
                       if "robot emulator:" in x or "controller emulator:" in x]
            self.assertTrue(reports, r.stderr[-2000:])
            line = reports[-1].replace("hyloop up: ", "")
            # Whatever the load: recorded, no device fault, corrected, nothing refused.
            self.assertNotEqual(got["stop_reason"], "driver_fault", line)
            self.assertGreater(int(re.search(r"(\d+) corrections", line).group(1)), 0, line)
            self.assertIn(" 0 rejected", line)
            self.assertEqual(got["rejected_commands"], 0, line)
            lines.append("%s: %s, energy ratio %s (in process %.4g), %d late commands; %s" % (
                name, got["stop_reason"] or "finished", got["energy_ratio"],
                want["energy_ratio"], got["distributed"]["loop_misses"]["late_commands"], line))
            finished[name] = (got, want)
        report = "\n".join(lines)
        print("\nsits6 over the %s robot's whole pose, TDPA, 10 s, wire seed %d:\n%s"
              % (device, seed, report))
        if os.environ.get("HYLOOP_WIRE_TRACKING_GATE") == "1":
            for name, (got, want) in finished.items():
                self.assertIsNone(got["stop_reason"], report)
                self.assertLessEqual(abs(got["energy_ratio"] / want["energy_ratio"] - 1),
                                     ENERGY_RATIO_SHARE, report)

    def test_sits6_over_an_emulated_egm_robots_whole_pose(self):
        self.run_over("egm", EGM_POSE, 1)

    def test_sits6_over_an_emulated_rsi_controllers_whole_pose(self):
        self.run_over("rsi", RSI_POSE, 2)

    def test_a_six_axis_rig_takes_the_whole_pose_and_nothing_else(self):
        scenario = str(SITS6 / "translation_x.yaml")
        for sets, field in ((["--set", "rig.driver.type=udp"], "rig.driver.type"),
                            (["--set", "rig.driver.type=rsi", "--set", "rig.driver.rsi.axis=pose"],
                             "rig.driver.rsi.force_tag"),
                            (["--set", "rig.driver.type=rsi", "--set", "rig.driver.rsi.force_tag=FT"],
                             "rig.driver.rsi.axis"),
                            (["--set", "rig.driver.type=egm", "--set", "rig.driver.egm.force=wrench"],
                             "rig.driver.egm.axis"),
                            (["--set", "rig.driver.type=egm", "--set", "rig.driver.egm.axis=pose"],
                             "rig.driver.egm.force")):
            r = hyloop("up", scenario, "--out", str(self.root / "refused"), "--inproc",
                       "--mode", "real_time", "--emulate-wire", *sets)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(field, r.stderr)
        # A one-axis kind refuses the whole pose by name.
        for pose, field in ((EGM_POSE, "rig.driver.egm.axis"), (RSI_POSE, "rig.driver.rsi.axis")):
            r = hyloop("up", str(SITS), "--out", str(self.root / "sits_pose"), "--inproc",
                       "--mode", "real_time", "--emulate-wire", *pose)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(field, r.stderr)


VRTHS = REPO / "scenarios" / "vrths" / "case1_amb.yaml"


class VrthsOverTheWire(unittest.TestCase):
    """The RTHS benchmark's actuator and specimen (VrthsAxisPlant) behind a udp target at the
    benchmark's 4096 Hz, the loop co-located (`--inproc`: four processes cannot keep 4096 Hz on
    this VM, docs/performance.md), against the in-process run's J1-J9."""

    def test_case1_amb_over_a_udp_target_at_4096_hz(self):
        with tempfile.TemporaryDirectory(prefix="hyloop_vrths_wire_") as tmp:
            root = Path(tmp)
            short = ["--set", "timing.duration_s=10"]
            ref = root / "ref"
            r = hyloop("run", str(VRTHS), "--out", str(ref), *short)
            self.assertEqual(r.returncode, 0, r.stderr)
            want = json.loads((ref / "summary.json").read_text())
            path = root / "vrths_udp.yaml"
            path.write_text(VRTHS.read_text() + udp_block())
            out = root / "udp"
            r = hyloop("up", str(path), "--out", str(out), "--inproc", "--mode", "real_time",
                       "--emulate-wire", *short)
            self.assertTrue((out / "summary.json").is_file(), r.stderr[-2000:])
            got = json.loads((out / "summary.json").read_text())
            line = device_line(r.stderr)
            # Whatever the load: recorded, commanded, never a device fault. A loaded machine
            # cannot keep 4096 Hz (beside two CPU hogs the stability guard ended a run at 0.13 s
            # with 521 commands): the figures below are gated, as every real-time figure.
            self.assertNotEqual(got["stop_reason"], "driver_fault", line)
            commands = int(re.search(r"(\d+) commands", line).group(1))
            self.assertGreater(commands, 0, line)
            names = ["J%d_%s" % (i, "ms" if i == 1 else "percent") for i in range(1, 10)]
            def fmt(v):
                return "n/a" if v is None else "%.4g" % v
            report = ", ".join("%s %s (%s)" % (n, fmt(got.get(n)), fmt(want.get(n)))
                               for n in names)
            print("\nvrths/case1_amb over a udp target at 4096 Hz, co-located, 10 s: %s; "
                  "%d late commands; J (in process): %s; %s" % (
                      got["stop_reason"] or "finished",
                      got["distributed"]["loop_misses"]["late_commands"], report, line))
            if os.environ.get("HYLOOP_WIRE_TRACKING_GATE") == "1":
                self.assertIsNone(got["stop_reason"], report)
                self.assertGreater(commands, 0.95 * 40960, line)
                # Every criterion within 10 % of the in-process run's (measured within 0.9 %).
                for n in names:
                    self.assertLessEqual(abs(got[n] / want[n] - 1), 0.10, report)


class SiteRig(unittest.TestCase):
    """rig.driver.type openfresco (issue 25 item 2): the rig service drives an OpenFresco-style
    site, here hyloop's own (`--emulate-wire`), in lockstep: the run through the services equals
    the run over the in-process emulator in every column the device reports."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hyloop_site_rig_")
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def columns(self, run):
        with (run / "samples.csv").open() as f:
            rows = list(csv.reader(f))
        header, body = rows[0], rows[1:]
        return {h: [r[i] for r in body] for i, h in enumerate(header)}

    def test_lockstep_over_the_site_equals_the_emulated_rig(self):
        scenario = str(REPO / "scenarios" / "rht" / "p4_noise.yaml")
        short = ["--set", "timing.duration_s=2"]
        ref = self.root / "ref"
        r = hyloop("up", scenario, "--out", str(ref), "--inproc", *short)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        want = self.columns(ref)
        for transport, extra in (("tcp", []), ("udp", ["--inproc"])):
            with self.subTest(transport=transport, inproc=bool(extra)):
                out = self.root / transport
                r = hyloop("up", scenario, "--out", str(out), "--emulate-wire", *extra, *short,
                           "--set", "rig.driver.type=openfresco",
                           "--set", "rig.driver.openfresco.transport=" + transport,
                           "--set", "rig.driver.peer_port=%d" % free_port())
                self.assertEqual(r.returncode, 0, r.stderr[-2000:])
                # The run's end ends the site's session (terminate, code 99).
                self.assertIn("openfresco site: 1 sessions, 200 commits; 200 trials, terminated",
                              r.stderr)
                got = self.columns(out)
                self.assertEqual(sorted(got), sorted(want))
                # The device reports no truth (d_true, omega: its measurement, NaN).
                for name in want:
                    if name.startswith("d_true") or name.startswith("omega"):
                        continue
                    self.assertEqual(got[name], want[name], name)

    def test_hyloop_run_refuses_it_by_name(self):
        r = hyloop("run", str(ATS), "--out", str(self.root / "run"),
                   "--set", "rig.driver.type=openfresco", "--set", "rig.driver.peer_port=44000")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("rig.driver.type = openfresco: hyloop run steps the rig in this process",
                      r.stderr)

    def test_a_site_port_of_zero_is_refused_naming_the_field(self):
        r = hyloop("validate", str(ATS), "--set", "rig.driver.type=openfresco")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("rig.driver.peer_port", r.stderr)
        self.assertIn("must be 1..65535 for openfresco", r.stderr)


if __name__ == "__main__":
    unittest.main()
