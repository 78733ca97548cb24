"""What an attacker and a bad day still found (issue 27, findings 6, 7 and the low ones), as the
hyloop tool meets them:

    HYLOOP_BIN_DIR=build/bin /usr/bin/python3 -m unittest tests/cli/test_run_files.py

A run directory's files are read only as regular files inside it (export, summary, recovery);
scenario text that is not UTF-8 is refused at validation; a failed write is named by recovery; a
security directory others may write, or a secret they may read, stops a service at start-up;
`up` keeps no CA key and removes the directories of `up`s that are gone.
"""

import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("HYLOOP_BIN_DIR", REPO / "build" / "bin"))
HYLOOP = str(BIN / "hyloop")
FGC = str(REPO / "scenarios" / "sits" / "table1_fgc.yaml")
SECRET = "root:$6$SECRET-HASH-OF-THE-VICTIM:19000:0:99999:7:::\n"


def hyloop(*args, timeout=120, **kwargs):
    return subprocess.run([HYLOOP, *args], capture_output=True, encoding="utf-8",
                          errors="replace", timeout=timeout, **kwargs)


class RunDirectoryFiles(unittest.TestCase):
    """Finding 6: export, summary and recovery open only regular files inside the run
    directory: a link is refused (never followed), a FIFO does not block, a device is never
    read, a file above its limit is refused naming the limit."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="hyloop_cli_files_")
        cls.root = Path(cls.tmp.name)
        r = hyloop("run", FGC, "--out", str(cls.root / "run"), "--set", "timing.duration_s=1")
        assert r.returncode == 0, r.stderr
        cls.secret = cls.root / "shadow"
        cls.secret.write_text(SECRET)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def copy(self, name):
        d = self.root / name
        shutil.copytree(self.root / "run", d, symlinks=True)
        return d

    def test_linked_scenario_is_refused_by_export(self):
        for fmt in ("hdf5", "mat"):
            with self.subTest(fmt=fmt):
                d = self.copy("linked_" + fmt)
                (d / "scenario.yaml").unlink()
                (d / "scenario.yaml").symlink_to(self.secret)
                out = self.root / f"export.{fmt}"
                r = hyloop("export", str(d), "--format", fmt, "--out", str(out))
                self.assertNotEqual(r.returncode, 0, r.stderr)
                self.assertIn("scenario.yaml: a symbolic link: refused", r.stderr)
                if out.exists():
                    self.assertNotIn(b"SECRET-HASH", out.read_bytes())

    def test_fifo_samples_does_not_block_export(self):
        d = self.copy("fifo")
        (d / "samples.csv").unlink()
        os.mkfifo(d / "samples.csv")
        r = hyloop("export", str(d), "--format", "hdf5", "--out", str(self.root / "f.h5"),
                   timeout=30)
        self.assertNotEqual(r.returncode, 0, r.stderr)
        self.assertIn("samples.csv: a FIFO: refused", r.stderr)

    def test_device_and_oversized_tables_are_refused(self):
        d = self.copy("zero")
        (d / "cycles.csv").unlink()
        (d / "cycles.csv").symlink_to("/dev/zero")
        r = hyloop("export", str(d), "--format", "hdf5", "--out", str(self.root / "z.h5"),
                   timeout=30)
        self.assertNotEqual(r.returncode, 0, r.stderr)
        self.assertIn("cycles.csv: a symbolic link: refused", r.stderr)
        (d / "cycles.csv").unlink()
        with open(d / "cycles.csv", "wb") as f:
            f.truncate((64 << 30) + 1)  # sparse: no disk used
        r = hyloop("export", str(d), "--format", "mat", "--out", str(self.root / "z.mat"),
                   timeout=60)
        self.assertNotEqual(r.returncode, 0, r.stderr)
        self.assertIn("cycles.csv: 68719476737 bytes, larger than the limit of 64 GiB", r.stderr)
        (d / "cycles.csv").write_bytes(b"cycle[-]\n" + b"7" * (2 << 20))  # no newline
        r = hyloop("export", str(d), "--format", "hdf5", "--out", str(self.root / "l.h5"),
                   timeout=60)
        self.assertNotEqual(r.returncode, 0, r.stderr)
        self.assertIn("cycles.csv: a line longer than 1 MiB: not a table", r.stderr)

    def test_summary_refuses_a_linked_summary(self):
        d = self.copy("linked_summary")
        (d / "summary.json").unlink()
        (d / "summary.json").symlink_to(self.secret)
        r = hyloop("summary", str(d))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("summary.json: a symbolic link: refused", r.stderr)
        self.assertNotIn("SECRET-HASH", r.stdout)

    def test_recovery_never_writes_through_a_link(self):
        d = self.copy("recover_link")
        self.assertTrue((d / "journal.sqlite").is_file())
        (d / "INCOMPLETE").write_text("left by a recorder that died\n")
        (d / "samples.csv").unlink()
        (d / "samples.csv").symlink_to(self.secret)
        r = hyloop("summary", "--recover", str(d))
        self.assertNotEqual(r.returncode, 0, r.stderr)
        self.assertIn("samples.csv: a symbolic link: refused", r.stderr)
        self.assertEqual(self.secret.read_text(), SECRET)

    def test_report_refuses_a_linked_plots_directory(self):
        d = self.copy("linked_plots")
        outside = self.root / "outside"
        outside.mkdir()
        (d / "plots").symlink_to(outside)
        r = hyloop("report", str(d), timeout=300)
        self.assertNotEqual(r.returncode, 0, r.stderr)
        self.assertIn("plots: a symbolic link: refused", r.stderr)
        self.assertEqual(list(outside.iterdir()), [])

    def test_report_takes_a_run_directorys_name_as_it_is(self):
        # hyloop report handed its arguments to report.py through a shell, each in single
        # quotes: a quote in a run directory's name broke the command, and a crafted one ran a
        # command of its own. Now the script gets them as they are (fork and exec).
        d = self.copy("it's a run")
        r = hyloop("report", str(d), timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue((d / "plots" / "overview.png").is_file(), r.stderr)
        marker = self.root / "INJECTED"
        crafted = str(self.root / "x") + "'; touch '" + str(marker) + "'; '"
        r = hyloop("report", crafted, timeout=300)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("not a run directory", r.stderr)
        self.assertFalse(marker.exists())


class NonUtf8Text(unittest.TestCase):
    """Finding 7: a scenario text that is not UTF-8 is refused at validation, naming the field
    and the byte; `run` then leaves nothing, `up` says why."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hyloop_cli_utf8_")
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_validate_names_the_field_and_the_byte(self):
        text = Path(FGC).read_bytes().replace(b"name: table1_fgc", b"name: ab\xffc")
        scenario = self.root / "bad.yaml"
        scenario.write_bytes(text)
        r = hyloop("validate", str(scenario))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("name: not valid UTF-8 (byte 2 of the value is 0xFF)", r.stderr)
        r = hyloop("validate", FGC, "--set", b"name=ab\xffc")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--set name: not valid UTF-8 (byte 7 of the override is 0xFF)", r.stderr)

    def test_run_leaves_nothing(self):
        out = self.root / "run"
        r = hyloop("run", FGC, "--out", str(out), "--set", "timing.duration_s=1", "--set",
                   b"name=ab\xffc")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("not valid UTF-8", r.stderr)
        self.assertFalse(out.exists())

    def test_up_says_why(self):
        out = self.root / "up"
        r = hyloop("up", FGC, "--out", str(out), "--set", "timing.duration_s=1", "--set",
                   b"name=ab\xffc")
        self.assertNotEqual(r.returncode, 0, r.stderr)
        last = r.stderr.strip().splitlines()[-1]
        self.assertIn("--set name: not valid UTF-8", last)
        self.assertFalse(out.exists())


class WriteFailureRecovery(unittest.TestCase):
    """Low: a run whose recording failed (a full disk, a write error) is recovered with that
    reason, not as "recorder killed"."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hyloop_cli_full_")
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_recovery_names_the_write_error(self):
        def limit_file_size():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, 256 * 1024))

        out = self.root / "run"
        r = hyloop("run", FGC, "--out", str(out), "--set", "timing.duration_s=20",
                   preexec_fn=limit_file_size)
        self.assertNotEqual(r.returncode, 0, r.stderr)
        self.assertTrue((out / "INCOMPLETE").exists(), r.stderr)
        r = hyloop("summary", "--recover", str(out))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("recorder killed", r.stderr)
        self.assertRegex(r.stderr, r"(the disk was full|a write failed): hyloop run could not "
                                   r"write the run directory \(.+\); the journal holds \d+ cycles")

    def test_a_full_disk_is_named(self):
        disk = self.root / "disk"
        disk.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(disk)],
                          capture_output=True).returncode != 0:
            self.skipTest("cannot mount a 200 kB tmpfs (needs root)")
        try:
            out = disk / "run"
            r = hyloop("run", FGC, "--out", str(out), "--set", "timing.duration_s=20")
            self.assertNotEqual(r.returncode, 0, r.stderr)
            subprocess.run(["mount", "-o", "remount,size=64m", str(disk)], check=True)
            r = hyloop("summary", "--recover", str(out))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("the disk was full: hyloop run could not write the run directory",
                          r.stderr)
        finally:
            subprocess.run(["umount", "-l", str(disk)], capture_output=True)


class SecurityDirAtStartUp(unittest.TestCase):
    """Low: a security directory others may write, a secret they may read or a file of another
    user stops a service at start-up (not at Configure), naming the path and its mode."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hyloop_cli_sec_")
        self.sec = Path(self.tmp.name) / "lab"
        r = hyloop("certs", "--out", str(self.sec), "--days", "2")
        self.assertEqual(r.returncode, 0, r.stderr)

    def tearDown(self):
        self.tmp.cleanup()

    def start_sensor(self):
        p = subprocess.Popen([str(BIN / "hyloop-sensor"), "--security-dir", str(self.sec),
                              "--grpc-address", "127.0.0.1:0"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, encoding="utf-8", errors="replace")
        try:
            out, err = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            self.fail(f"hyloop-sensor started and served: {out}{err}")
        return p.returncode, err

    def test_a_world_writable_directory_is_refused(self):
        os.chmod(self.sec, 0o777)
        rc, err = self.start_sensor()
        self.assertEqual(rc, 1, err)
        self.assertIn(f"{self.sec} has mode 0777: writable by anyone (chmod go-w)", err)

    def test_a_readable_curve_secret_is_refused_at_start_up(self):
        secret = self.sec / "curve" / "sensor.secret"
        os.chmod(secret, 0o644)
        rc, err = self.start_sensor()
        self.assertEqual(rc, 1, err)
        self.assertIn(f"{secret} has mode 0644: readable by group or others (a secret: chmod 600)", err)

    def test_a_file_of_another_user_is_refused(self):
        if os.geteuid() != 0:
            self.skipTest("chown to another user needs root")
        cert = self.sec / "sensor.crt"
        os.chown(cert, 4242, 4242)
        rc, err = self.start_sensor()
        self.assertEqual(rc, 1, err)
        self.assertIn(f"{cert} is owned by uid 4242", err)


class UpKeepsNoCaKey(unittest.TestCase):
    """Low: `up` keeps no CA key in its temporary security directory, and removes those of
    `up`s that are gone (a dead pid, or a pid that now belongs to a process started after)."""

    def test_no_ca_key_and_stale_directories_removed(self):
        with tempfile.TemporaryDirectory(prefix="hyloop_cli_up_") as tmp:
            stale = Path(tmp) / f"hyloop-up-{os.getpid()}-AbCdEf"
            (stale / "security").mkdir(parents=True)
            (stale / "security" / "ca.key").write_text("a CA key a power cut left\n")
            hour_ago = time.time() - 3600
            os.utime(stale, (hour_ago, hour_ago))
            stack = subprocess.Popen([HYLOOP, "up", "--serve", "--runs-dir", tmp],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env={**os.environ, "TMPDIR": tmp})
            security = None
            try:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    line = stack.stdout.readline()
                    if not line or line.startswith("hyloop-coordinator grpc "):
                        break
                    if line.startswith("hyloop-security-dir "):
                        security = Path(line.split(None, 1)[1].strip())
                self.assertIsNotNone(security, "hyloop up --serve printed no security dir")
                self.assertTrue((security / "ca.crt").is_file())
                self.assertTrue((security / "sensor.key").is_file())
                self.assertFalse((security / "ca.key").exists())
                self.assertFalse(stale.exists())
            finally:
                stack.terminate()
                try:
                    stack.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    stack.kill()
                    stack.wait()


if __name__ == "__main__":
    unittest.main()
