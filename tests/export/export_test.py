"""Run export and HDF5 recording (issue 14 §2), read back the way labs read them.

`hyloop export RUN --format hdf5|mat` of a SITS, an RHT and an FCU run, read with h5py and
scipy.io.loadmat: every column of samples.csv and cycles.csv equal bit for bit, its unit an
attribute, summary.json and scenario.yaml as metadata. `outputs.format: hdf5` writes run.h5 while
recording with the same rows; a run killed mid-recording is recovered with run.h5 rewritten from
the journal; an incomplete run directory is refused; a wrong outputs.format is named.

Usage: export_test.py HYLOOP_BINARY (run by ctest from the source directory).
"""
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

import h5py
import numpy as np
import scipy.io

HYLOOP = None
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

RUNS = {
    # name: (scenario, overrides); short runs, every kind.
    # A description outside ASCII: the metadata keeps UTF-8 text as written.
    "sits": ("scenarios/sits/table1_scvg.yaml",
             ["timing.duration_s=8", "description=Température τ ≥ 2 ms"]),
    "rht": ("scenarios/rht/p4.yaml", []),
    "fcu": ("scenarios/fcu/polynomial.yaml", ["timing.duration_s=5"]),
}


def hyloop(*args, check=True):
    r = subprocess.run([HYLOOP, *args], capture_output=True, text=True, cwd=SOURCE)
    if check and r.returncode != 0:
        raise AssertionError(f"hyloop {' '.join(args)}: rc {r.returncode}\n{r.stderr}")
    return r


def split_header(header):
    """'x[m]' -> ('x', 'm'), as the CSV reader of tools/report.py does."""
    name, _, rest = header.partition("[")
    return name, rest[:-1] if rest.endswith("]") else ""


def read_csv(path):
    """headers and a (rows, columns) float64 array: Python's float() reads the 17 significant
    digits back to the same double."""
    with open(path, encoding="utf-8") as f:
        headers = f.readline().rstrip("\n").split(",")
        rows = [[float(v) for v in line.rstrip("\n").split(",")] for line in f if line.strip()]
    values = np.array(rows, dtype=np.float64).reshape(len(rows), len(headers))
    return headers, values


def bits(a):
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).view(np.uint64)


class Export(unittest.TestCase):
    tmp = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hyloop-export-")
        cls.dirs = {}
        for name, (scenario, overrides) in RUNS.items():
            d = os.path.join(cls.tmp, name)
            args = ["run", scenario, "--out", d]
            for o in overrides:
                args += ["--set", o]
            hyloop(*args)
            cls.dirs[name] = d

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def assert_group_equals_csv(self, group, csv_path):
        headers, values = read_csv(csv_path)
        self.assertGreater(values.shape[0], 0, csv_path)
        self.assertEqual(list(group.attrs["columns"]), headers)
        for c, header in enumerate(headers):
            name, unit = split_header(header)
            ds = group[name]
            self.assertEqual(ds.attrs["unit"], unit, header)
            self.assertEqual(ds.attrs["header"], header)
            self.assertEqual(ds.dtype, np.float64)
            np.testing.assert_array_equal(bits(ds[:]), bits(values[:, c]), err_msg=header)

    def assert_metadata(self, attrs, run_dir):
        with open(os.path.join(run_dir, "summary.json"), encoding="utf-8") as f:
            summary = f.read()
        with open(os.path.join(run_dir, "scenario.yaml"), encoding="utf-8") as f:
            scenario = f.read()
        self.assertEqual(attrs["summary_json"], summary)
        self.assertEqual(json.loads(attrs["summary_json"])["steps"], json.loads(summary)["steps"])
        self.assertEqual(attrs["scenario_yaml"], scenario)

    def test_hdf5_export_holds_every_value_unit_and_the_metadata(self):
        for name, d in self.dirs.items():
            with self.subTest(kind=name):
                out = os.path.join(self.tmp, name + ".h5")
                hyloop("export", d, "--format", "hdf5", "--out", out)
                with h5py.File(out, "r") as f:
                    self.assertEqual(f.attrs["format"], "hyloop-run/1")
                    self.assert_group_equals_csv(f["samples"], os.path.join(d, "samples.csv"))
                    self.assert_metadata(f.attrs, d)
                    if os.path.exists(os.path.join(d, "cycles.csv")):
                        self.assert_group_equals_csv(f["cycles"], os.path.join(d, "cycles.csv"))
                    else:
                        self.assertNotIn("cycles", f)

    def test_mat_export_holds_every_value_unit_and_the_metadata(self):
        for name, d in self.dirs.items():
            with self.subTest(kind=name):
                out = os.path.join(self.tmp, name + ".mat")
                hyloop("export", d, "--format", "mat", "--out", out)
                m = scipy.io.loadmat(out, simplify_cells=True)
                tables = [("samples", "samples.csv")]
                if os.path.exists(os.path.join(d, "cycles.csv")):
                    tables.append(("cycles", "cycles.csv"))
                else:
                    self.assertNotIn("cycles", m)
                for var, csv in tables:
                    headers, values = read_csv(os.path.join(d, csv))
                    self.assertEqual(list(m[var + "_columns"]), headers)
                    self.assertEqual(list(m[var].keys()), [split_header(h)[0] for h in headers])
                    for c, header in enumerate(headers):
                        name_, unit = split_header(header)
                        self.assertEqual(m[var + "_units"][name_], unit, header)
                        column = np.atleast_1d(m[var][name_])
                        np.testing.assert_array_equal(bits(column), bits(values[:, c]),
                                                      err_msg=f"{var}.{name_}")
                self.assert_metadata(m, d)

    def test_outputs_format_hdf5_records_run_h5_with_the_rows_of_samples_csv(self):
        scenario, overrides = RUNS["sits"]
        d = os.path.join(self.tmp, "live")
        args = ["run", scenario, "--out", d, "--set", "outputs.format=hdf5"]
        for o in overrides:
            args += ["--set", o]
        hyloop(*args)
        with h5py.File(os.path.join(d, "run.h5"), "r") as f:
            self.assert_group_equals_csv(f["samples"], os.path.join(d, "samples.csv"))
            self.assert_group_equals_csv(f["cycles"], os.path.join(d, "cycles.csv"))
            self.assert_metadata(f.attrs, d)
        # FCU: the record columns are samples.csv's and four more the summary needs.
        scenario, overrides = RUNS["fcu"]
        d = os.path.join(self.tmp, "live_fcu")
        args = ["run", scenario, "--out", d, "--set", "outputs.format=hdf5"]
        for o in overrides:
            args += ["--set", o]
        hyloop(*args)
        headers, values = read_csv(os.path.join(d, "samples.csv"))
        with h5py.File(os.path.join(d, "run.h5"), "r") as f:
            columns = list(f["samples"].attrs["columns"])
            self.assertEqual(columns[: len(headers)], headers)
            self.assertGreater(len(columns), len(headers))
            for c, header in enumerate(headers):
                ds = f["samples"][split_header(header)[0]]
                np.testing.assert_array_equal(bits(ds[:]), bits(values[:, c]), err_msg=header)

    def test_a_run_killed_while_recording_hdf5_is_recovered_with_run_h5(self):
        scenario, _ = RUNS["sits"]
        d = os.path.join(self.tmp, "killed")
        # Long enough to be killed mid-run (an hour of simulated time).
        p = subprocess.Popen([HYLOOP, "run", scenario, "--out", d, "--set",
                              "outputs.format=hdf5", "--set", "timing.duration_s=3600",
                              "--set", "outputs.samples=false"],
                             cwd=SOURCE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journal = os.path.join(d, "journal.sqlite")
        deadline = time.monotonic() + 30
        rows = 0
        while time.monotonic() < deadline and rows < 20000:
            time.sleep(0.2)
            try:
                with sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=1) as db:
                    rows = db.execute("SELECT count(*) FROM rows").fetchone()[0]
            except sqlite3.Error:
                pass
        p.send_signal(signal.SIGKILL)
        p.wait()
        self.assertGreaterEqual(rows, 20000, "the run did not record in time")
        self.assertTrue(os.path.exists(os.path.join(d, "INCOMPLETE")))
        r = hyloop("export", d, "--format", "hdf5", "--out", os.path.join(self.tmp, "k.h5"),
                   check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("hyloop summary --recover", r.stderr)
        hyloop("summary", "--recover", d)
        with h5py.File(os.path.join(d, "run.h5"), "r") as f:
            n = f["samples"]["time"].shape[0]
            self.assertGreaterEqual(n, rows)
            with open(os.path.join(d, "summary.json"), encoding="utf-8") as s:
                summary = json.load(s)
            self.assertEqual(summary["cycles_recovered"], n)
            self.assertTrue(json.loads(f.attrs["summary_json"])["incomplete"])
            # The rows are the run's: time advances by the step, cycle after cycle.
            t = f["samples"]["time"][:]
            np.testing.assert_allclose(np.diff(t), 0.002, rtol=1e-9)
        # outputs.samples: false leaves samples.csv empty: export takes the rows from run.h5.
        out = os.path.join(self.tmp, "killed.mat")
        hyloop("export", d, "--format", "mat", "--out", out)
        m = scipy.io.loadmat(out, simplify_cells=True)
        with h5py.File(os.path.join(d, "run.h5"), "r") as f:
            np.testing.assert_array_equal(bits(m["samples"]["x"]), bits(f["samples"]["x"][:]))

    def test_an_incomplete_run_directory_is_refused(self):
        d = os.path.join(self.tmp, "incomplete")
        shutil.copytree(self.dirs["sits"], d)
        with open(os.path.join(d, "INCOMPLETE"), "w", encoding="utf-8") as f:
            f.write("test\n")
        for fmt in ("hdf5", "mat"):
            out = os.path.join(self.tmp, "incomplete." + fmt)
            r = hyloop("export", d, "--format", fmt, "--out", out, check=False)
            self.assertEqual(r.returncode, 1)
            self.assertIn("incomplete run directory (INCOMPLETE)", r.stderr)
            self.assertIn(f"hyloop summary --recover {d}", r.stderr)
            self.assertFalse(os.path.exists(out))

    def test_wrong_formats_are_named_with_the_allowed_values(self):
        r = hyloop("validate", RUNS["sits"][0], "--set", "outputs.format=parquet", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn('outputs.format = "parquet": must be csv or hdf5', r.stderr)
        r = hyloop("export", self.dirs["sits"], "--format", "csv", "--out",
                   os.path.join(self.tmp, "x.csv"), check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('--format = "csv": must be hdf5 or mat', r.stderr)


if __name__ == "__main__":
    HYLOOP = os.path.abspath(sys.argv.pop(1))
    unittest.main()
