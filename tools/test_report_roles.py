"""Tests of the figures a run gets from tools/report.py, decided by the roles its kind gave its
signals (summary.json "signals"; run from the repository root; HYLOOP_BIN names the directory of
the hyloop binary for the shipped-scenario tests):

    HYLOOP_BIN=build/bin /usr/bin/python3 -m unittest tools/test_report_roles.py

hyloop_report/roles.py decides the figures from the roles alone: the shipped kinds' runs (their
roles as hyloop writes them) get exactly their sets, a kind the report has never heard of gets the
figures its roles call for, a run naming no roles gets the generic figure (every column against
time) with a notice, a role in the wrong unit or on a missing column is not used, no kind name is
written in the report's Python, and the shipped scenarios give the figure and panel titles
recorded in tools/testdata/report_titles.json.
"""

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRIPT = os.path.join(HERE, "report.py")
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
SITS_FIGURES = ("tracking", "velocity", "force", "power", "gain_energy", "recovery", "overview",
                "signals")
RHT_COLUMNS = ["time[s]", "ground_accel[m/s^2]", "d_desired[m]", "d_command[m]",
               "d_measured[m]", "force[N]", "d_numerical[m]", "omega[rad/s]"]
RHT_ROLES = {"target": "d_desired[m]", "measured": "d_measured[m]", "ideal": "d_numerical[m]",
             "command": "d_command[m]", "force": "force[N]"}
FCU_COLUMNS = ["time[s]", "pla[deg]", "x_c[kg/s]", "x_m[kg/s]", "fuel_flow[kg/s]", "n[%]",
               "n_ideal[%]", "e_n[%]"]
FCU_ROLES = {"target": "n_ideal[%]", "measured": "n[%]", "command": "x_c[kg/s]"}
VRTHS_COLUMNS = ["time[s]", "ag[m/s^2]", "y1[m]", "y2[m]", "y3[m]", "r1[m]", "r2[m]", "r3[m]",
                 "x_m[m]", "f_e[N]", "u[m]"]
VRTHS_ROLES = {"target": "y1[m]", "measured": "x_m[m]", "ideal": "r1[m]", "command": "u[m]",
               "force": "f_e[N]"}
SHIPPED = {"sits_table1_fgc": "scenarios/sits/table1_fgc.yaml",
           "rht_p4": "scenarios/rht/p4.yaml",
           "fcu_polynomial": "scenarios/fcu/polynomial.yaml"}


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write_columns(d, columns, kind, roles=None, n=400):
    """A run directory with `columns` (smooth distinct signals), summary kind and signals."""
    os.makedirs(d, exist_ok=True)
    t = np.arange(n) * 0.01
    data = [t] + [np.sin((i + 1) * t) * (i + 1) for i in range(len(columns) - 1)]
    np.savetxt(os.path.join(d, "samples.csv"), np.column_stack(data), delimiter=",",
               fmt="%.17g", header=",".join(columns), comments="")
    summary = {"scenario": os.path.basename(d), "kind": kind}
    if roles is not None:
        summary["signals"] = roles
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f)
    return d


def describe(fig):
    sup = fig._suptitle.get_text() if fig._suptitle is not None else ""
    return {"suptitle": sup, "axes": [[ax.get_title(), ax.get_ylabel()] for ax in fig.axes]}


class RoleFiguresTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mod = load("hyloop_report_roles_test", SCRIPT)
        cls.figures_mod = sys.modules["hyloop_report.figures"]
        cls.tr = load("hyloop_test_report", os.path.join(HERE, "test_report.py"))
        cls.tmp = tempfile.TemporaryDirectory(prefix="hyloop_report_roles_")

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

    def tracking_labels(self, d):
        fig = self.figures(d)["tracking.png"]
        return {ln.get_label() for ax in fig.axes for ln in ax.get_lines()}

    def test_each_shipped_kind_gets_exactly_its_figures(self):
        runs = {"sits": (self.sits_run("sits", "sits"), SITS_FIGURES),
                "rht": (write_columns(os.path.join(self.tmp.name, "rht"), RHT_COLUMNS, "rht",
                                      RHT_ROLES), ("tracking", "signals")),
                "fcu": (write_columns(os.path.join(self.tmp.name, "fcu"), FCU_COLUMNS, "fcu",
                                      FCU_ROLES), ("tracking", "signals")),
                "vrths": (write_columns(os.path.join(self.tmp.name, "vrths"), VRTHS_COLUMNS,
                                        "vrths", VRTHS_ROLES), ("tracking", "signals"))}
        for kind, (d, expected) in runs.items():
            with self.subTest(kind=kind):
                run = self.mod.Run(d)
                self.assertEqual(tuple(self.mod.figures_for(run)), expected)
                self.assertEqual(sorted(self.figures(d)),
                                 sorted(f"{name}.png" for name in expected))

    def test_tracking_reads_the_roles_whatever_the_column_order(self):
        cols = ["time[s]", "n[%]", "x_m[kg/s]", "n_ideal[%]", "x_c[kg/s]"]
        d = write_columns(os.path.join(self.tmp.name, "fcu_order"), cols, "fcu", FCU_ROLES)
        self.assertTrue({"n_ideal", "n", "n − n_ideal"} <= self.tracking_labels(d))
        d = write_columns(os.path.join(self.tmp.name, "vrths_tracking"), VRTHS_COLUMNS, "vrths",
                          VRTHS_ROLES)
        self.assertTrue({"y1", "x_m", "x_m − y1"} <= self.tracking_labels(d))

    def test_a_kind_the_report_never_heard_of_gets_what_its_roles_call_for(self):
        cols = ["time[s]", "q_set[rad]", "q[rad]", "torque[N*m]"]
        d = write_columns(os.path.join(self.tmp.name, "torsion"), cols, "torsion_rig",
                          {"target": "q_set[rad]", "measured": "q[rad]"})
        run = self.mod.Run(d)
        self.assertEqual(tuple(self.mod.figures_for(run)), ("tracking", "signals"))
        self.assertTrue({"q_set", "q", "q − q_set"} <= self.tracking_labels(d))

    def test_a_role_in_another_unit_or_on_no_column_is_not_used(self):
        roles = dict(RHT_ROLES, measured="d_measured[mm]", ideal="d_missing[m]")
        d = write_columns(os.path.join(self.tmp.name, "rht_bad_roles"), RHT_COLUMNS, "rht",
                          roles)
        p = subprocess.run([PY, SCRIPT, d, "--out", os.path.join(d, "o")], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("signals.measured: column 'd_measured' is in [m], the kind says [mm]",
                      p.stderr)
        self.assertIn("signals.ideal = 'd_missing[m]': not a column of samples.csv", p.stderr)
        self.assertEqual(p.stdout.split(), [os.path.join(d, "o", "signals.png")])

    def test_malformed_signals_is_bad_input(self):
        d = write_columns(os.path.join(self.tmp.name, "bad_signals"), RHT_COLUMNS, "rht",
                          ["d_desired[m]"])
        p = subprocess.run([PY, SCRIPT, d], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("signals: must be an object", p.stderr)

    def test_no_roles_gets_generic_figures_only(self):
        d = write_columns(os.path.join(self.tmp.name, "no_roles"), RHT_COLUMNS, "rht")
        p = subprocess.run([PY, SCRIPT, d, "--out", os.path.join(d, "o")], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("names no signal roles", p.stderr)
        self.assertEqual(p.stdout.split(), [os.path.join(d, "o", "signals.png")])
        run = self.mod.Run(d)
        self.assertEqual(tuple(self.mod.figures_for(run)), ("all_signals",))
        fig = self.figures(d)["signals.png"]
        drawn = {ln.get_label() for ax in fig.axes for ln in ax.get_lines()}
        self.assertEqual(drawn, set(run.cols) - {"time"})  # every column against time

    def test_no_kind_name_in_the_reports_python(self):
        names = ("sits", "rht", "fcu", "vrths", "sits6")
        literal = re.compile(r"[\"']([^\"'\n]*)[\"']")
        pkg = os.path.join(HERE, "hyloop_report")
        found = []
        for f in sorted(os.listdir(pkg)):
            if not f.endswith(".py"):
                continue
            with open(os.path.join(pkg, f), encoding="utf-8") as src:
                for n, line in enumerate(src, 1):
                    code = line.split("#", 1)[0]
                    found += [f"{f}:{n}: {m}" for m in literal.findall(code)
                              if m.lower() in names]
        self.assertEqual(found, [])

    def test_shipped_runs_name_their_roles(self):
        bin_dir = os.environ.get("HYLOOP_BIN")
        if not bin_dir:
            self.skipTest("HYLOOP_BIN not set (ctest sets it)")
        expected = {"sits_table1_fgc": ("target", "measured", "velocity", "gain"),
                    "rht_p4": ("target", "measured", "ideal", "command", "force"),
                    "fcu_polynomial": ("target", "measured", "command")}
        for name, roles in expected.items():
            with self.subTest(run=name):
                d = self.shipped(bin_dir, name)
                run = self.mod.Run(d)
                self.assertTrue(set(roles) <= set(run.roles), run.roles)

    def shipped(self, bin_dir, name):
        d = os.path.join(self.tmp.name, "shipped", name)
        if not os.path.isdir(d):
            subprocess.run([os.path.join(bin_dir, "hyloop"), "run",
                            os.path.join(ROOT, SHIPPED[name]), "--out", d, "--force"],
                           check=True, capture_output=True, timeout=300)
        return d

    def test_shipped_scenarios_keep_their_titles(self):
        bin_dir = os.environ.get("HYLOOP_BIN")
        if not bin_dir:
            self.skipTest("HYLOOP_BIN not set (ctest sets it)")
        with open(os.path.join(HERE, "testdata", "report_titles.json"), encoding="utf-8") as f:
            expected = json.load(f)
        self.assertEqual(set(expected), set(SHIPPED))
        for name in SHIPPED:
            with self.subTest(run=name):
                d = self.shipped(bin_dir, name)
                got = {k: describe(v) for k, v in self.figures(d).items()}
                self.assertEqual(list(got), list(expected[name]))
                self.assertEqual(got, expected[name])


if __name__ == "__main__":
    unittest.main()
