"""Tests of the Monte Carlo figures (`hyloop report` on a `hyloop montecarlo` directory), run from
the repository root (HYLOOP_BIN names the directory of the hyloop binary for the end-to-end test):

    HYLOOP_BIN=build/bin /usr/bin/python3 -m unittest tools/test_report_montecarlo.py

A directory with montecarlo.json (and no samples.csv) gets montecarlo.png, one panel per metric in
runs.csv's order whose mean line and band are montecarlo.json's statistics, the stopped runs drawn
apart; montecarlo_sensitivity.png holds Pearson's r of each metric against each plant parameter,
checked against an exact linear relation; a malformed montecarlo.json fails with exit 2 naming
the field.
"""

import importlib.util
import json
import math
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
METRICS = ["J2_percent", "J1_ms", "peak_actuator_force_n"]  # runs.csv order, not alphabetical


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write_montecarlo(d, n=8, stopped=(3,)):
    """n runs: J2 = 2 + 1e-6·k_e exactly (r = 1), J1 constant, force = −1e-3·k_e (r = −1)."""
    os.makedirs(d, exist_ok=True)
    k_e = 1.19e6 * (1 + 0.05 * np.sin(np.arange(1, n + 1)))
    a3 = 3.3 + 0.1 * np.cos(2.0 * np.arange(1, n + 1))
    per_run = []
    for i in range(n):
        per_run.append({"run": i + 1, "J2_percent": 2 + 1e-6 * k_e[i], "J1_ms": 0.244,
                        "peak_actuator_force_n": -1e-3 * k_e[i],
                        "plant": {"k_e_n_per_m": k_e[i], "a3_per_s": a3[i]},
                        "stop_reason": "stability_guard" if i + 1 in stopped else None})
    stats = {}
    for m in METRICS:
        v = np.array([r[m] for r in per_run])
        stats[m] = {"mean": float(v.mean()), "std": float(v.std(ddof=1)), "min": float(v.min()),
                    "max": float(v.max()), "runs": n}
    with open(os.path.join(d, "montecarlo.json"), "w") as f:
        json.dump({"kind": "vrths", "scenario": "synthetic.yaml", "runs": n, "per_run": per_run,
                   "statistics": stats, "stopped_runs": len(stopped)}, f)
    with open(os.path.join(d, "runs.csv"), "w") as f:
        f.write("run," + ",".join(METRICS) + ",stop_reason\n")
    return d, stats


class MonteCarloFiguresTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        load("hyloop_report_mc_test", SCRIPT)  # puts the package on sys.path
        cls.mc = importlib.import_module("hyloop_report.montecarlo")
        cls.tmp = tempfile.TemporaryDirectory(prefix="hyloop_report_mc_")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_one_panel_per_metric_with_the_statistics_and_the_stopped_runs_apart(self):
        d, stats = write_montecarlo(os.path.join(self.tmp.name, "panels"))
        mc = self.mc.MonteCarlo(d)
        self.assertEqual(mc.metrics, METRICS)
        fig = self.mc.metrics_figure(mc)
        axes = [ax for ax in fig.axes if ax.get_visible()]
        self.assertEqual(len(axes), len(METRICS))
        fig.canvas.draw()  # lays the figure out: the band's extent below is final
        for ax, m in zip(axes, METRICS):
            with self.subTest(metric=m):
                self.assertTrue(ax.get_title().startswith(m + ":"), ax.get_title())
                lines = {ln.get_label(): ln for ln in ax.get_lines()}
                self.assertAlmostEqual(lines["mean"].get_ydata()[0], stats[m]["mean"], places=12)
                self.assertEqual(list(lines["stopped early"].get_xdata()), [3.0])
                self.assertEqual(len(lines["run"].get_xdata()), 7)
                ext = ax.patches[0].get_window_extent()  # the mean ± std band, in pixels
                y0, y1 = sorted(ax.transData.inverted().transform(
                    [[0, ext.y0], [0, ext.y1]])[:, 1])
                tol = 1e-6 * max(1.0, abs(stats[m]["mean"]))
                self.assertAlmostEqual(y0, stats[m]["mean"] - stats[m]["std"], delta=tol)
                self.assertAlmostEqual(y1, stats[m]["mean"] + stats[m]["std"], delta=tol)

    def test_sensitivity_is_pearsons_r_over_the_runs(self):
        d, _ = write_montecarlo(os.path.join(self.tmp.name, "sensitivity"))
        mc = self.mc.MonteCarlo(d)
        _, r = self.mc.sensitivity_figure(mc, mc.plant())
        params = list(mc.plant())
        k = params.index("k_e_n_per_m")
        self.assertAlmostEqual(r[METRICS.index("J2_percent"), k], 1.0, places=12)
        self.assertAlmostEqual(r[METRICS.index("peak_actuator_force_n"), k], -1.0, places=12)
        self.assertTrue(math.isnan(r[METRICS.index("J1_ms"), k]))  # constant: no r
        a3 = mc.plant()["a3_per_s"]
        self.assertAlmostEqual(r[0, params.index("a3_per_s")],
                               float(np.corrcoef(a3, mc.values("J2_percent"))[0, 1]), places=12)

    def test_report_writes_both_figures_and_prints_them(self):
        d, _ = write_montecarlo(os.path.join(self.tmp.name, "cli"))
        p = subprocess.run([PY, SCRIPT, d], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), [os.path.join(d, "plots", "montecarlo.png"),
                                            os.path.join(d, "plots",
                                                         "montecarlo_sensitivity.png")])
        for f in p.stdout.split():
            self.assertGreater(os.path.getsize(f), 10000)

    def test_a_malformed_file_fails_naming_the_field(self):
        cases = {"per_run": lambda doc: doc.update(per_run=[]),
                 "statistics.J2_percent": lambda doc: doc["statistics"]["J2_percent"].update(
                     std="wide"),
                 "malformed JSON": None}
        for field, breaker in cases.items():
            with self.subTest(field=field):
                d, _ = write_montecarlo(os.path.join(self.tmp.name, "bad_" + field[:8]))
                path = os.path.join(d, "montecarlo.json")
                if breaker is None:
                    with open(path, "w") as f:
                        f.write("{")
                else:
                    with open(path) as f:
                        doc = json.load(f)
                    breaker(doc)
                    with open(path, "w") as f:
                        json.dump(doc, f)
                p = subprocess.run([PY, SCRIPT, d], capture_output=True, text=True, timeout=300)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(field, p.stderr)
                self.assertFalse(os.path.exists(os.path.join(d, "plots")))

    def test_hyloop_montecarlo_then_report(self):
        bin_dir = os.environ.get("HYLOOP_BIN")
        if not bin_dir:
            self.skipTest("HYLOOP_BIN not set (ctest sets it)")
        hyloop = os.path.join(bin_dir, "hyloop")
        d = os.path.join(self.tmp.name, "hyloop_mc")
        subprocess.run([hyloop, "montecarlo", os.path.join(ROOT, "scenarios/vrths/case2_amb.yaml"),
                        "--runs", "3", "--out", d], check=True, capture_output=True, timeout=600)
        p = subprocess.run([hyloop, "report", d], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([os.path.basename(f) for f in p.stdout.split()],
                         ["montecarlo.png", "montecarlo_sensitivity.png"])
        mc = self.mc.MonteCarlo(d)
        self.assertEqual(mc.metrics[:2], ["J1_ms", "J2_percent"])  # the kind's order
        self.assertEqual(len(mc.per_run), 3)


if __name__ == "__main__":
    unittest.main()
