"""Tests of the figures each experiment kind gets from tools/report.py (run from the repository
root; HYLOOP_BIN names the directory of the hyloop binary for the shipped-scenario test):

    HYLOOP_BIN=build/bin /usr/bin/python3 -m unittest tools/test_report_kinds.py

The kind table (hyloop_report/kinds.py) decides the figures: a SITS, RHT, FCU or vrths run
gets exactly its set, an unknown kind gets the generic figure (every column against time) with a
notice, and the shipped scenarios give the figure and panel titles recorded in
tools/testdata/report_titles.json (captured from report.py before it became a package).
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRIPT = os.path.join(HERE, "report.py")
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
SITS_FIGURES = ("velocity", "force", "power", "gain_energy", "recovery", "overview", "signals")
RHT_COLUMNS = ["time[s]", "ground_accel[m/s^2]", "d_desired[m]", "d_command[m]",
               "d_measured[m]", "force[N]", "omega[rad/s]"]
FCU_COLUMNS = ["time[s]", "pla[deg]", "x_c[kg/s]", "x_m[kg/s]", "fuel_flow[kg/s]", "n[%]",
               "n_ideal[%]", "e_n[%]"]
VRTHS_COLUMNS = ["time[s]", "ag[m/s^2]", "y1[m]", "y2[m]", "y3[m]", "r1[m]", "r2[m]", "r3[m]",
                 "x_m[m]", "f_e[N]", "u[m]"]
SHIPPED = {"sits_table1_fgc": "scenarios/sits/table1_fgc.yaml",
           "rht_p4": "scenarios/rht/p4.yaml",
           "fcu_polynomial": "scenarios/fcu/polynomial.yaml"}


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write_columns(d, columns, kind, n=400):
    """A run directory with `columns` (smooth distinct signals) and summary kind `kind`."""
    os.makedirs(d, exist_ok=True)
    t = np.arange(n) * 0.01
    data = [t] + [np.sin((i + 1) * t) * (i + 1) for i in range(len(columns) - 1)]
    np.savetxt(os.path.join(d, "samples.csv"), np.column_stack(data), delimiter=",",
               fmt="%.17g", header=",".join(columns), comments="")
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump({"scenario": os.path.basename(d), "kind": kind}, f)
    return d


def describe(fig):
    sup = fig._suptitle.get_text() if fig._suptitle is not None else ""
    return {"suptitle": sup, "axes": [[ax.get_title(), ax.get_ylabel()] for ax in fig.axes]}


class KindFiguresTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mod = load("hyloop_report_kinds_test", SCRIPT)
        cls.figures_mod = sys.modules["hyloop_report.figures"]
        cls.tr = load("hyloop_test_report", os.path.join(HERE, "test_report.py"))
        cls.tmp = tempfile.TemporaryDirectory(prefix="hyloop_report_kinds_")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def figures(self, run_dir):
        """{file name: Figure} that report_one would save (none is written)."""
        figs = {}

        def keep(fig, path, written):
            figs[os.path.basename(path)] = fig
            written.append(path)

        self.figures_mod.report_one(self.mod.Run(run_dir), run_dir, save=keep)
        return figs

    def sits_run(self, name, kind):
        d = self.tr.write_run(os.path.join(self.tmp.name, name), "table1_fgc", seconds=8.0)
        with open(os.path.join(d, "summary.json")) as f:
            s = json.load(f)
        s["kind"] = kind
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump(s, f)
        return d

    def test_each_kind_gets_exactly_its_figures(self):
        runs = {"sits": (self.sits_run("sits", "sits"), SITS_FIGURES),
                "rht": (write_columns(os.path.join(self.tmp.name, "rht"), RHT_COLUMNS, "rht"),
                        ("tracking", "signals")),
                "fcu": (write_columns(os.path.join(self.tmp.name, "fcu"), FCU_COLUMNS, "fcu"),
                        ("tracking", "signals")),
                "vrths": (write_columns(os.path.join(self.tmp.name, "vrths"), VRTHS_COLUMNS,
                                        "vrths"), ("tracking", "signals"))}
        for kind, (d, expected) in runs.items():
            with self.subTest(kind=kind):
                run = self.mod.Run(d)
                self.assertEqual(tuple(self.mod.figures_for(run)), expected)
                self.assertEqual(sorted(self.figures(d)),
                                 sorted(f"{name}.png" for name in expected))

    def test_fcu_tracking_reads_columns_by_name(self):
        # Columns in another order: the figure still compares n with n_ideal, by name.
        cols = ["time[s]", "n[%]", "x_m[kg/s]", "n_ideal[%]", "x_c[kg/s]"]
        d = write_columns(os.path.join(self.tmp.name, "fcu_order"), cols, "fcu")
        fig = self.figures(d)["tracking.png"]
        labels = {ln.get_label() for ax in fig.axes for ln in ax.get_lines()}
        self.assertTrue({"n_ideal", "n", "n − n_ideal"} <= labels, labels)

    def test_vrths_tracking_compares_x_m_with_the_target_y1(self):
        d = write_columns(os.path.join(self.tmp.name, "vrths_tracking"), VRTHS_COLUMNS, "vrths")
        fig = self.figures(d)["tracking.png"]
        labels = {ln.get_label() for ax in fig.axes for ln in ax.get_lines()}
        self.assertTrue({"y1", "x_m", "x_m − y1"} <= labels, labels)

    def test_unknown_kind_gets_generic_figures_only(self):
        d = self.sits_run("unknown", "structural_plant")
        p = subprocess.run([PY, SCRIPT, d, "--out", os.path.join(d, "o")], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("unknown kind 'structural_plant'", p.stderr)
        self.assertEqual(p.stdout.split(), [os.path.join(d, "o", "signals.png")])
        run = self.mod.Run(d)
        self.assertEqual(tuple(self.mod.figures_for(run)), ("all_signals",))
        fig = self.figures(d)["signals.png"]
        drawn = {ln.get_label() for ax in fig.axes for ln in ax.get_lines()}
        self.assertEqual(drawn, set(run.cols) - {"time"})  # every column against time

    def test_shipped_scenarios_keep_their_titles(self):
        bin_dir = os.environ.get("HYLOOP_BIN")
        if not bin_dir:
            self.skipTest("HYLOOP_BIN not set (ctest sets it)")
        with open(os.path.join(HERE, "testdata", "report_titles.json"), encoding="utf-8") as f:
            expected = json.load(f)
        self.assertEqual(set(expected), set(SHIPPED))
        for name, scenario in SHIPPED.items():
            with self.subTest(run=name):
                d = os.path.join(self.tmp.name, "shipped", name)
                subprocess.run([os.path.join(bin_dir, "hyloop"), "run",
                                os.path.join(ROOT, scenario), "--out", d, "--force"],
                               check=True, capture_output=True, timeout=300)
                got = {k: describe(v) for k, v in self.figures(d).items()}
                self.assertEqual(list(got), list(expected[name]))
                self.assertEqual(got, expected[name])


if __name__ == "__main__":
    unittest.main()
