"""Tests of tools/report.py (run from the repository root):

    /usr/bin/python3 -m unittest tools/test_report.py

Builds synthetic SITS run directories in a temp dir with a small 1-D hybrid-simulation loop
(delayed force, optional gain compensation, ideal twin), runs the script as the C++ tool does,
and checks the plots, the compare output and the errors on malformed input.
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
SCRIPT = os.path.join(HERE, "report.py")
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

SITS_COLUMNS = [
    "time[s]", "x[m]", "v[m/s]", "x_ideal[m]", "v_ideal[m/s]", "x_cmd[m]", "x_robot[m]",
    "v_robot[m/s]", "v_est[m/s]", "f_contact[N]", "f_meas[N]", "f_ideal[N]", "f_input[N]",
    "f_comp[N]", "k_h[N*s/m]", "eps_h[J]", "eps_sum[J*s]", "energy[J]", "energy_ideal[J]",
    "power[W]", "power_ideal[W]",
]
# What a SITS run's summary.json says its signals are (the SITS kind's Kind::signal_roles).
SITS_ROLES = {
    "target": "x[m]", "measured": "x_robot[m]", "ideal": "x_ideal[m]", "command": "x_cmd[m]",
    "force": "f_meas[N]", "velocity": "v[m/s]", "velocity_ideal": "v_ideal[m/s]",
    "force_input": "f_input[N]", "force_ideal": "f_ideal[N]", "power": "power[W]",
    "power_ideal": "power_ideal[W]", "energy": "energy[J]", "energy_ideal": "energy_ideal[J]",
    "gain": "k_h[N*s/m]", "observed_energy": "eps_h[J]",
}
ONE_RUN_PLOTS = ["tracking.png", "velocity.png", "force.png", "power.png", "gain_energy.png",
                 "recovery.png", "overview.png"]
COMPARE_PLOTS = ["compare_velocity_error.png", "compare_recovery.png",
                 "compare_force_error.png", "compare_velocity.png"]


def simulate(seconds=20.0, T=0.002, delay_steps=1, kh=lambda t: 0.0, m=500.0, K=20000.0,
             B=50.0, v0=0.05):
    """Table-1-like loop: F' = F[k-d] + K_h*v_hat; semi-implicit Euler; ideal twin beside."""
    n = int(round(seconds / T))
    cols = {c.split("[")[0]: np.zeros(n) for c in SITS_COLUMNS}
    x = xi = 0.0
    v = vi = v0
    hist = [0.0] * (delay_steps + 1)
    eps_sum = 0.0
    for k in range(n):
        t = k * T
        xr, vr = x, v                       # robot bypassed
        f = -K * xr - B * vr
        hist.append(f)
        fm = hist[-1 - delay_steps]
        g = kh(t)
        fc = g * vr
        fin = fm + fc
        e = -K * xi - B * vi
        eps = e * xi - fin * xr
        eps_sum += abs(eps) * T
        row = dict(time=t, x=x, v=v, x_ideal=xi, v_ideal=vi, x_cmd=x, x_robot=xr, v_robot=vr,
                   v_est=vr, f_contact=f, f_meas=fm, f_ideal=e, f_input=fin, f_comp=fc, k_h=g,
                   eps_h=eps, eps_sum=eps_sum, energy=0.5 * m * v * v + 0.5 * K * x * x,
                   energy_ideal=0.5 * m * vi * vi + 0.5 * K * xi * xi, power=fin * v,
                   power_ideal=e * vi)
        for name, val in row.items():
            cols[name][k] = val
        v += T * fin / m
        x += T * v
        vi += T * e / m
        xi += T * vi
    return cols


def cycles_from(cols):
    """Cycles cut at the twin's upward velocity zero-crossings (DESIGN.md §7)."""
    t, v, vi = cols["time"], cols["v"], cols["v_ideal"]
    up = np.flatnonzero((vi[:-1] < 0) & (vi[1:] >= 0)) + 1
    rows = []
    for c, (a, b) in enumerate(zip(up[:-1], up[1:]), start=1):
        seg = slice(a, b)
        ip = a + int(np.argmax(np.abs(vi[seg])))
        e_r = abs(v[ip]) / abs(vi[ip])
        amp = np.max(np.abs(v[seg])) / np.max(np.abs(vi[seg]))
        e_f = np.max(np.abs(cols["f_ideal"][seg] - cols["f_input"][seg]))
        e_v = np.max(np.abs(v[seg] - vi[seg]))
        rows.append([c, t[a], t[b], e_r, amp, np.max(np.abs(v[seg])), np.max(np.abs(vi[seg])),
                     np.max(cols["energy"][seg]), e_f, e_v])
    return np.array(rows).reshape(-1, 10)


def write_run(d, scenario="table1_fgc", kh=lambda t: -40.0, seconds=20.0, columns=None,
              with_cycles=True, with_summary=True, compensator="fgc"):
    os.makedirs(d, exist_ok=True)
    cols = simulate(seconds=seconds, kh=kh)
    header = columns or SITS_COLUMNS
    data = np.column_stack([cols.get(h.split("[")[0], np.ones_like(cols["time"]))
                            for h in header])
    np.savetxt(os.path.join(d, "samples.csv"), data, delimiter=",", fmt="%.17g",
               header=",".join(header), comments="")
    if with_cycles:
        cyc = cycles_from(cols)
        np.savetxt(os.path.join(d, "cycles.csv"), cyc, delimiter=",", fmt="%.17g",
                   header="cycle[-],t_start[s],t_end[s],e_R[-],amplitude_ratio[-],v_peak[m/s],"
                          "v_ideal_peak[m/s],energy_max[J],e_F_peak[N],e_V_peak[m/s]",
                   comments="")
    if with_summary:
        t = cols["time"]
        w = t >= t[-1] - 5.0
        summary = {
            "scenario": scenario, "signals": SITS_ROLES, "steps": int(t.size), "duration_s": float(t[-1]),
            "wall_time_s": 0.5, "diverged": False, "energy_ratio": 1.0, "compensator":
                compensator,
            "metrics": {
                "e_F_peak_N": float(np.max(np.abs(cols["f_ideal"][w] - cols["f_input"][w]))),
                "e_V_peak_mps": float(np.max(np.abs(cols["v"][w] - cols["v_ideal"][w]))),
                "e_R": 1.002, "amplitude_ratio": 1.001},
        }
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump(summary, f, indent=2)
    return d


def run_script(*args):
    return subprocess.run([PY, SCRIPT, *args], capture_output=True, text=True, timeout=300)


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 1000


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="hyloop_report_test_")
        root = cls.tmp.name
        cls.fgc = write_run(os.path.join(root, "run_fgc"), "table1_fgc", lambda t: -40.0)
        cls.lgc = write_run(os.path.join(root, "run_lgc"), "table1_lgc",
                            lambda t: -30.0 - 0.5 * t, compensator="lgc")
        cls.none = write_run(os.path.join(root, "run_none"), "table1_none", lambda t: 0.0,
                             compensator="none")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertPlots(self, out, names, stdout):
        listed = stdout.split()
        for n in names:
            p = os.path.join(out, n)
            self.assertTrue(os.path.isfile(p), f"{p} not written")
            self.assertTrue(is_png(p), f"{p} is not a non-empty PNG")
            self.assertIn(p, listed, f"{p} not listed on stdout")

    def assertBadInput(self, proc, *fragments):
        self.assertEqual(proc.returncode, 2, proc.stderr)
        err = proc.stderr.strip().splitlines()
        self.assertTrue(err, "no message on stderr")
        last = err[-1]
        self.assertTrue(last.startswith("report.py: error: "), last)
        for frag in fragments:
            self.assertIn(frag, last)

    # ------------------------------------------------------------------ one run
    def test_one_run_default_out(self):
        p = run_script(self.fgc)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertPlots(os.path.join(self.fgc, "plots"), ONE_RUN_PLOTS + ["signals.png"],
                         p.stdout)

    def test_one_run_out_dir(self):
        out = os.path.join(self.tmp.name, "out_lgc")
        p = run_script(self.lgc, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertPlots(out, ONE_RUN_PLOTS, p.stdout)

    def test_zero_gain_panel_skipped(self):
        out = os.path.join(self.tmp.name, "out_none")
        p = run_script(self.none, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertPlots(out, ONE_RUN_PLOTS, p.stdout)  # gain_energy.png says so in the panel

    def test_extra_and_missing_columns(self):
        d = os.path.join(self.tmp.name, "run_partial")
        cols = ["time[s]", "v[m/s]", "v_ideal[m/s]", "f_input[N]", "f_ideal[N]",
                "mystery_signal[V]"]
        write_run(d, "partial", columns=cols, with_cycles=False, seconds=5.0)
        p = run_script(d, "--out", os.path.join(d, "o"))
        self.assertEqual(p.returncode, 0, p.stderr)
        o = os.path.join(d, "o")
        self.assertPlots(o, ["velocity.png", "force.png", "overview.png", "signals.png"],
                         p.stdout)
        for absent in ("power.png", "gain_energy.png", "recovery.png"):
            self.assertFalse(os.path.exists(os.path.join(o, absent)), absent)
        self.assertIn("recovery.png", p.stderr)

    def test_long_run_envelope(self):
        # 200 000 rows: read and decimated without losing the peaks.
        d = os.path.join(self.tmp.name, "run_long")
        os.makedirs(d)
        n = 200_000
        t = np.arange(n) * 0.002
        v = 0.05 * np.sin(2 * np.pi * 1.0 * t)
        v[123_457] = 0.9  # a one-sample spike must survive decimation
        np.savetxt(os.path.join(d, "samples.csv"), np.column_stack([t, v, v * 0.99]),
                   delimiter=",", fmt="%.17g", header="time[s],v[m/s],v_ideal[m/s]",
                   comments="")
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump({"scenario": "long", "signals": {"velocity": "v[m/s]",
                                                       "velocity_ideal": "v_ideal[m/s]"}}, f)
        p = run_script(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertPlots(os.path.join(d, "plots"), ["velocity.png", "overview.png"], p.stdout)

    # ------------------------------------------------------------------ compare
    def test_compare(self):
        out = os.path.join(self.tmp.name, "cmp")
        p = run_script("--compare", self.none, self.fgc, self.lgc, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertPlots(out, COMPARE_PLOTS, p.stdout)
        md = os.path.join(out, "metrics.md")
        self.assertIn(md, p.stdout.split())
        with open(md, encoding="utf-8") as f:
            text = f.read()
        header = next(l for l in text.splitlines() if l.startswith("| metric"))
        for lab in ("table1_none", "table1_fgc", "table1_lgc"):
            self.assertIn(lab, header)
        for key in ("e_F_peak_N", "e_V_peak_mps", "e_R", "amplitude_ratio", "energy_ratio",
                    "compensator"):
            self.assertRegex(text, rf"\| (metrics\.)?{key} \|")

    def test_compare_same_scenario_labels_disambiguated(self):
        out = os.path.join(self.tmp.name, "cmp_same")
        d2 = write_run(os.path.join(self.tmp.name, "run_fgc_b"), "table1_fgc", lambda t: -45.0,
                       seconds=8.0)
        p = run_script("--compare", self.fgc, d2, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "metrics.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("table1_fgc (run_fgc)", text)
        self.assertIn("table1_fgc (run_fgc_b)", text)

    def test_compare_bad_run(self):
        bad = os.path.join(self.tmp.name, "cmp_bad_run")
        os.makedirs(bad)
        p = run_script("--compare", self.fgc, bad, "--out", os.path.join(self.tmp.name, "x"))
        self.assertBadInput(p, "samples.csv", "missing file")

    def test_compare_usage(self):
        p = run_script("--compare", self.fgc, "--out", os.path.join(self.tmp.name, "y"))
        self.assertEqual(p.returncode, 2)
        p = run_script("--compare", self.fgc, self.lgc)
        self.assertEqual(p.returncode, 2)

    # ------------------------------------------------------------------ malformed input
    def _bad_dir(self, name):
        d = os.path.join(self.tmp.name, name)
        os.makedirs(d)
        return d

    def test_missing_dir(self):
        p = run_script(os.path.join(self.tmp.name, "does_not_exist"))
        self.assertBadInput(p, "does_not_exist")

    def test_missing_samples(self):
        d = self._bad_dir("bad_nosamples")
        with open(os.path.join(d, "summary.json"), "w") as f:
            f.write("{}")
        self.assertBadInput(run_script(d), "samples.csv", "missing file")

    def test_missing_time_column(self):
        d = self._bad_dir("bad_notime")
        with open(os.path.join(d, "samples.csv"), "w") as f:
            f.write("v[m/s],v_ideal[m/s]\n1,2\n3,4\n")
        self.assertBadInput(run_script(d), "samples.csv", "missing column 'time'")

    def test_ragged_rows(self):
        d = self._bad_dir("bad_ragged")
        with open(os.path.join(d, "samples.csv"), "w") as f:
            f.write("time[s],v[m/s],v_ideal[m/s]\n0,1,2\n0.002,3\n")
        self.assertBadInput(run_script(d), "samples.csv", "malformed data")

    def test_non_numeric(self):
        d = self._bad_dir("bad_text")
        with open(os.path.join(d, "samples.csv"), "w") as f:
            f.write("time[s],v[m/s],v_ideal[m/s]\n0,1,2\n0.002,abc,4\n")
        self.assertBadInput(run_script(d), "samples.csv", "malformed data")

    def test_header_only(self):
        d = self._bad_dir("bad_empty")
        with open(os.path.join(d, "samples.csv"), "w") as f:
            f.write("time[s],v[m/s],v_ideal[m/s]\n")
        self.assertBadInput(run_script(d), "samples.csv", "no data rows")

    def test_bad_summary(self):
        d = self._bad_dir("bad_summary")
        write_run(d, seconds=1.0, with_summary=False)
        with open(os.path.join(d, "summary.json"), "w") as f:
            f.write("{not json")
        self.assertBadInput(run_script(d), "summary.json", "malformed JSON")

    def test_bad_cycles(self):
        d = self._bad_dir("bad_cycles")
        write_run(d, seconds=1.0, with_cycles=False)
        with open(os.path.join(d, "cycles.csv"), "w") as f:
            f.write("cycle[-],e_R[-]\n1,1.0\n2,oops\n")
        self.assertBadInput(run_script(d), "cycles.csv", "malformed data")

    def test_only_time(self):
        d = self._bad_dir("bad_onlytime")
        with open(os.path.join(d, "samples.csv"), "w") as f:
            f.write("time[s]\n0\n0.002\n")
        self.assertBadInput(run_script(d), "no plottable columns")


class RunFilesTest(unittest.TestCase):
    """Issue 27 finding 6: report opens only regular files inside the run directory (no link,
    FIFO or device; size limits) and writes only into a real plots/ inside it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hyloop_report_files_")
        self.root = self.tmp.name
        self.run = write_run(os.path.join(self.root, "run"), seconds=2.0)
        self.secret = os.path.join(self.root, "secret.txt")
        with open(self.secret, "w") as f:
            f.write("time[s],v[m/s]\n0,1\n")

    def tearDown(self):
        self.tmp.cleanup()

    def assertRefused(self, proc, *fragments):
        self.assertNotEqual(proc.returncode, 0, proc.stderr)
        for frag in fragments:
            self.assertIn(frag, proc.stderr)

    def test_symlinked_plots_is_refused_and_nothing_written_outside(self):
        outside = os.path.join(self.root, "outside")
        os.mkdir(outside)
        os.symlink(outside, os.path.join(self.run, "plots"))
        p = run_script(self.run)
        self.assertRefused(p, "plots", "a symbolic link", "refused")
        self.assertEqual(os.listdir(outside), [])

    def test_a_planted_link_in_plots_is_not_written_through(self):
        os.mkdir(os.path.join(self.run, "plots"))
        os.symlink(self.secret, os.path.join(self.run, "plots", "velocity.png"))
        p = run_script(self.run)
        self.assertNotEqual(p.returncode, 0, p.stderr)
        with open(self.secret) as f:
            self.assertEqual(f.read(), "time[s],v[m/s]\n0,1\n")

    def test_symlinked_samples_and_summary_are_refused(self):
        for name in ("samples.csv", "summary.json", "cycles.csv"):
            with self.subTest(name=name):
                run = write_run(os.path.join(self.root, "link_" + name), seconds=1.0)
                os.remove(os.path.join(run, name))
                os.symlink(self.secret, os.path.join(run, name))
                p = run_script(run)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(f"{name}: a symbolic link: refused", p.stderr)

    def test_fifo_samples_is_refused_at_once(self):
        os.remove(os.path.join(self.run, "samples.csv"))
        os.mkfifo(os.path.join(self.run, "samples.csv"))
        p = subprocess.run([PY, SCRIPT, self.run], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("samples.csv: a FIFO: refused", p.stderr)

    def test_oversized_files_are_refused_naming_the_limit(self):
        with open(os.path.join(self.run, "summary.json"), "r+b") as f:
            f.truncate((16 << 20) + 1)  # sparse
        p = run_script(self.run)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("summary.json: 16777217 bytes, larger than the limit of 16 MiB", p.stderr)
        os.remove(os.path.join(self.run, "summary.json"))
        with open(os.path.join(self.run, "cycles.csv"), "r+b") as f:
            f.truncate((64 << 30) + 1)  # sparse: no disk used
        p = run_script(self.run)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("cycles.csv: 68719476737 bytes, larger than the limit of 64 GiB", p.stderr)


class FigureLayoutTest(unittest.TestCase):
    """Issue 15 plots: v and v_i stay apart where they coincide; ε_h cannot hide K_h; the metric
    window follows the summary. Figures are taken from report_one before they are saved."""

    @classmethod
    def setUpClass(cls):
        spec = importlib.util.spec_from_file_location("hyloop_report_layout", SCRIPT)
        cls.mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(cls.mod)
        cls.tmp = tempfile.TemporaryDirectory(prefix="hyloop_report_layout_")
        cls.figs = cls.figures(write_run(os.path.join(cls.tmp.name, "scvg"), "table1_scvg",
                                         lambda t: -80.0 - 0.05 * t, seconds=12.0,
                                         compensator="scvg"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def figures(cls, run_dir):
        figs = {}
        save = cls.mod._save

        def keep(fig, path, written):
            figs[os.path.basename(path)] = fig
            written.append(path)

        cls.mod._save = keep
        try:
            cls.mod.report_one(cls.mod.Run(run_dir), os.path.join(run_dir, "plots"))
        finally:
            cls.mod._save = save
        return figs

    @staticmethod
    def line(fig, prefix):
        found = [(ax, ln) for ax in fig.axes for ln in ax.get_lines()
                 if ln.get_label().startswith(prefix)]
        if not found:
            raise AssertionError(f"no line labelled {prefix}...")
        return found[0]

    def test_twin_lines_stay_distinct_where_they_coincide(self):
        # The twin is drawn above the hybrid signal, at most half as wide and in another colour:
        # where the two coincide the wider line still shows on both sides of the thin one.
        from matplotlib.colors import to_rgba
        for fname, hybrid, twin in (("velocity.png", "v (", "v_i ("),
                                    ("force.png", "F′", "E ("),
                                    ("power.png", "P (", "P_i ("),
                                    ("overview.png", "v (", "v_i (")):
            with self.subTest(plot=fname):
                ax_h, h = self.line(self.figs[fname], hybrid)
                ax_t, t = self.line(self.figs[fname], twin)
                self.assertIs(ax_h, ax_t)
                self.assertGreaterEqual(h.get_linewidth(), 2.0 * t.get_linewidth())
                self.assertGreater(t.get_zorder(), h.get_zorder())
                self.assertNotEqual(to_rgba(h.get_color())[:3], to_rgba(t.get_color())[:3])

    def test_eps_trace_cannot_hide_the_gain(self):
        fig = self.figs["overview.png"]
        fig.canvas.draw()
        by_label = {ax.get_ylabel().split(" [")[0]: ax for ax in fig.axes if ax.get_lines()}
        ax_k, ax_e = by_label["K_h"], by_label["ε_h"]
        self.assertIsNot(ax_k, ax_e)
        bk = ax_k.get_window_extent()
        be = ax_e.get_window_extent()
        overlap_w = min(bk.x1, be.x1) - max(bk.x0, be.x0)
        overlap_h = min(bk.y1, be.y1) - max(bk.y0, be.y0)
        self.assertFalse(overlap_w > 0 and overlap_h > 0, f"K_h axes {bk} overlap ε_h axes {be}")

    def test_metric_window_from_summary(self):
        d = write_run(os.path.join(self.tmp.name, "short"), "short_fgc", seconds=3.0)
        with open(os.path.join(d, "summary.json")) as f:
            s = json.load(f)
        s["metrics"]["window_s"] = 2.0
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump(s, f)
        fig = self.figures(d)["velocity.png"]
        titles = [ax.get_title() for ax in fig.axes]
        self.assertTrue(any("final 2 s" in t for t in titles), titles)
        self.assertFalse(any("final 5 s" in t for t in titles), titles)


class EnvelopeTest(unittest.TestCase):
    """The min/max decimation keeps every extreme of the full series."""

    @classmethod
    def setUpClass(cls):
        spec = importlib.util.spec_from_file_location("hyloop_report", SCRIPT)
        cls.mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(cls.mod)

    def test_peaks_kept(self):
        rng = np.random.default_rng(1)
        n = 500_001
        t = np.arange(n) * 0.002
        y = rng.normal(size=n)
        y[77_777] = 50.0
        y[400_001] = -60.0
        tt, yy = self.mod.envelope(t, y, max_points=2000)
        self.assertLessEqual(yy.size, 2004)
        self.assertEqual(yy.max(), y.max())
        self.assertEqual(yy.min(), y.min())
        self.assertTrue(np.all(np.diff(tt) > 0))
        self.assertEqual(tt[0], t[0])
        self.assertEqual(tt[-1], t[-1])
        # Every bucket's min and max survive: the envelope over any window matches.
        size = int(np.ceil(n / 1000))
        for b in (0, 123, n // size - 1):
            seg = y[b * size:(b + 1) * size]
            sel = (tt >= t[b * size]) & (tt <= t[min(n, (b + 1) * size) - 1])
            self.assertTrue(seg.size)
            self.assertEqual(yy[sel].max(), seg.max())
            self.assertEqual(yy[sel].min(), seg.min())

    def test_short_series_untouched_and_nonfinite_gaps(self):
        t = np.arange(10.0)
        y = np.array([0, 1, np.inf, 3, np.nan, 5, 6, 7, 8, 9], dtype=float)
        tt, yy = self.mod.envelope(t, y)
        self.assertEqual(tt.size, 10)
        self.assertTrue(np.isnan(yy[2]) and np.isnan(yy[4]))

    def test_scaled_unit(self):
        k, u = self.mod.scaled_unit("m/s", [np.array([1.4e-4, -2e-4])])
        self.assertEqual((k, u), (1e6, "µm/s"))
        k, u = self.mod.scaled_unit("N*s/m", [np.array([-120.0])])
        self.assertEqual(u, "N·s/m")
        k, u = self.mod.scaled_unit("-", [np.array([1.02])])
        self.assertEqual((k, u), (1.0, "-"))


if __name__ == "__main__":
    unittest.main()
