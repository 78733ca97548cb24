#!/usr/bin/python3
"""The figures of docs/sits6.md (issue 28): the integrator's polhode, off_centre's axes, wrench
and errors, and the energy of three scenarios against their ideal twins.

  /usr/bin/python3 tools/sits6_figures.py --hyloop build/bin/hyloop \
      --trace build/bin/rigid_body_trace --out docs/img --scratch /tmp/sits6_figures

Writes OUT/sits6_{polhode,off_centre_axes,off_centre_wrench,off_centre_errors,energy}.png and
prints the numbers the doc quotes. Runs go to SCRATCH (replaced on every call).

The polhode reference is Euler's torque-free solution, computed here with scipy.special.ellipj
(not with core::FreeRigidBody, which is what is being checked). For principal moments
I1 < I2 < I3 and body angular velocity ω0, with 2E = Σ I_i ω_i² and L² = Σ I_i² ω_i²:

  L² > 2E·I2 (the polhode circles axis 3):
    ω1 =     A1 cn(u, m),  A1² = (2E·I3 − L²)/(I1 (I3 − I1))
    ω2 = s · A2 sn(u, m),  A2² = (2E·I3 − L²)/(I2 (I3 − I2))
    ω3 = s · A3 dn(u, m),  A3² = (L² − 2E·I1)/(I3 (I3 − I1)),   s = sign ω3(0)
    m = (I2 − I1)(2E·I3 − L²) / ((I3 − I2)(L² − 2E·I1)),
    u = u0 + t·sqrt((I3 − I2)(L² − 2E·I1)/(I1 I2 I3))
  L² < 2E·I2 (the polhode circles axis 1): the roles of axes 1 and 3 swap,
    ω1 = s · A1 dn(u, m),  A1² = (2E·I3 − L²)/(I1 (I3 − I1)),   s = sign ω1(0)
    ω2 = s · A2 sn(u, m),  A2² = (L² − 2E·I1)/(I2 (I2 − I1))
    ω3 =     A3 cn(u, m),  A3² = (L² − 2E·I1)/(I3 (I3 − I1))
    m = (I3 − I2)(L² − 2E·I1) / ((I2 − I1)(2E·I3 − L²)),
    u = u0 + t·sqrt((I2 − I1)(2E·I3 − L²)/(I1 I2 I3))
u0 = F(φ0 | m), φ0 = atan2(sn, cn) at t = 0 from ω0; the polhode period is 4K(m) over the rate.
(Both branches satisfy I1 ω1' = (I2 − I3) ω2 ω3 and its cyclic permutations: sn' = cn dn,
cn' = −sn dn, dn' = −m sn cn.) u is reduced modulo 4K before ellipj.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import matplotlib
import numpy as np
from scipy.special import ellipj, ellipk, ellipkinc

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DPI = 110
MOMENTS = (40.0, 60.0, 80.0)  # kg m², the trace's body
# (label, ω0 in rad/s): one polhode about the major axis (3), one about the minor axis (1)
POLHODES = (("about axis 3", (0.3, 0.05, 0.4)), ("about axis 1", (0.4, 0.05, 0.1)))
TRACE_STEP, TRACE_DURATION, TRACE_EVERY = 0.002, 600.0, 10  # s, s, steps per row
AXES = ("x", "y", "z")
# the runs of one scenario, in order (the second drawn thick under the third, which may hide it)
RUN_STYLES = (dict(color="C0", lw=0.9), dict(color="C3", lw=2.4), dict(color="C2", lw=0.9, ls="--"))


def sh(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        raise SystemExit("failed: " + " ".join(cmd))


def load_csv(path):
    """Columns by name without the unit: 'x[m]' -> cols['x']."""
    with open(path) as f:
        names = [n.split("[")[0] for n in f.readline().strip().split(",")]
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return {n: data[:, i] for i, n in enumerate(names)}


def run_scenario(hyloop, scratch, tag, scenario, sets=()):
    out = os.path.join(scratch, tag)
    cmd = [hyloop, "run", os.path.join(ROOT, "scenarios/sits6", scenario + ".yaml"), "--out", out,
           "--force"]
    for s in sets:
        cmd += ["--set", s]
    sh(cmd)
    with open(os.path.join(out, "summary.json")) as f:
        return load_csv(os.path.join(out, "samples.csv")), json.load(f)


def run_trace(trace, scratch, tag, omega0, step=TRACE_STEP, every=TRACE_EVERY):
    out = os.path.join(scratch, tag + ".csv")
    sh([trace, "--inertia", *map(str, MOMENTS), "--omega", *map(str, omega0), "--step",
        str(step), "--duration", str(TRACE_DURATION), "--every", str(every), "--out", out])
    return load_csv(out)


def check_polhode(trace, scratch):
    """ctest sits6_polhode: core::RigidBody against scipy's Euler solution over 600 s, for both
    spins: |ω − ω_exact|/|ω0| < 1e-6 (measured 5.0e-7), |ΔL_w|/|L_w| < 1e-12 (1.5e-13),
    |ΔE|/E < 1e-7 (2.1e-8), and second order: halving T divides the error by 4 ± 0.1 (4.000)."""
    failed = []
    for k, (label, w0) in enumerate(POLHODES):
        _, err_w, err_l, err_e, _ = polhode_errors(run_trace(trace, scratch, "c%d" % k, w0))
        _, fine, _, _, _ = polhode_errors(
            run_trace(trace, scratch, "f%d" % k, w0, TRACE_STEP / 2, 2 * TRACE_EVERY))
        order = np.max(err_w) / np.max(fine)
        print("%s: ω error %.3e, L_w drift %.2e, E drift %.2e, error ratio T/(T/2) %.4f"
              % (label, np.max(err_w), np.max(err_l), np.max(err_e), order))
        for name, ok in (("ω error", np.max(err_w) < 1e-6), ("L_w drift", np.max(err_l) < 1e-12),
                         ("E drift", np.max(err_e) < 1e-7), ("order", abs(order - 4) < 0.1)):
            if not ok:
                failed.append("%s: %s" % (label, name))
    print("FAILED: " + ", ".join(failed) if failed else "ok")
    return 1 if failed else 0


def analytic_omega(moments, omega0, t):
    """Euler's torque-free solution (the module docstring): ω(t) as an (n, 3) array, the period."""
    i1, i2, i3 = moments
    w = np.asarray(omega0, dtype=float)
    e2, l2 = np.dot(moments, w ** 2), np.dot(np.square(moments), w ** 2)
    c3, c1 = e2 * i3 - l2, l2 - e2 * i1
    major = l2 > e2 * i2
    if major:  # about axis 3: cn, sn, dn
        amp = np.sqrt([c3 / (i1 * (i3 - i1)), c3 / (i2 * (i3 - i2)), c1 / (i3 * (i3 - i1))])
        m = (i2 - i1) * c3 / ((i3 - i2) * c1)
        rate = np.sqrt((i3 - i2) * c1 / (i1 * i2 * i3))
        s = np.sign(w[2])
        phi0 = np.arctan2(s * w[1] / amp[1], w[0] / amp[0])
    else:  # about axis 1: dn, sn, cn
        amp = np.sqrt([c3 / (i1 * (i3 - i1)), c1 / (i2 * (i2 - i1)), c1 / (i3 * (i3 - i1))])
        m = (i3 - i2) * c1 / ((i2 - i1) * c3)
        rate = np.sqrt((i2 - i1) * c3 / (i1 * i2 * i3))
        s = np.sign(w[0])
        phi0 = np.arctan2(s * w[1] / amp[1], w[2] / amp[2])
    quarter = ellipk(m)
    u = ellipkinc(phi0, m) + rate * np.asarray(t)
    sn, cn, dn, _ = ellipj(u - 4 * quarter * np.round(u / (4 * quarter)), m)
    parts = (cn, s * sn, s * dn) if major else (s * dn, s * sn, cn)
    return np.column_stack([a * p for a, p in zip(amp, parts)]), 4 * quarter / rate


def polhode_errors(tr):
    """|ω − ω_exact|/|ω0|, |L_w − L_w(0)|/|L_w(0)|, |E − E(0)|/E(0) and the period, per row."""
    t = tr["t"]
    w = np.column_stack([tr["wx"], tr["wy"], tr["wz"]])
    exact, period = analytic_omega(MOMENTS, w[0], t)
    lw = np.column_stack([tr["Lwx"], tr["Lwy"], tr["Lwz"]])
    err_w = np.linalg.norm(w - exact, axis=1) / np.linalg.norm(w[0])
    err_l = np.linalg.norm(lw - lw[0], axis=1) / np.linalg.norm(lw[0])
    err_e = np.abs(tr["E"] - tr["E"][0]) / tr["E"][0]
    return exact, err_w, err_l, err_e, period


def positive(x):
    return np.where(x > 0, x, np.nan)  # exact zeros off a log axis


def plot_polhode(axes, n, label, tr):
    """One trace into the four panels (a_t only for the first): ω(t), the ω1–ω2 curve, the error
    against the analytic solution, the drift of L_w and E. Prints the numbers."""
    a_t, a_p, a_e, a_d = axes
    exact, err_w, err_l, err_e, period = polhode_errors(tr)
    t, color = tr["t"], "C%d" % n
    if n == 0:
        first = t <= 2 * period
        for k, name in enumerate(("ω1", "ω2", "ω3")):
            a_t.plot(t[first], tr["w" + "xyz"[k]][first], color="C%d" % k, lw=2.2, alpha=0.5,
                     label=name + ", RigidBody")
        a_t.plot(t[first], exact[first], color="k", lw=0.8, ls="--")
        a_t.plot([], [], color="k", lw=0.8, ls="--", label="analytic (ellipj)")
        a_t.set_title("%s: the first two polhode periods (%.1f s each)" % (label, period))
    a_p.plot(tr["wx"][::25], tr["wy"][::25], "o", ms=3.5, color=color, alpha=0.6,
             label="RigidBody, %s, ω0 = %s rad/s" % (label, POLHODES[n][1]))
    a_p.plot(exact[:, 0], exact[:, 1], color="k", lw=0.8, label="analytic" if n else None)
    a_e.semilogy(t, positive(err_w), color=color, lw=0.8,
                 label="%s (max %.2e)" % (label, np.max(err_w)))
    a_d.semilogy(t, positive(err_l), color=color, lw=0.8,
                 label="|ΔL_w|/|L_w|, %s (max %.1e)" % (label, np.max(err_l)))
    a_d.semilogy(t, positive(err_e), color=color, lw=0.8, ls=":",
                 label="|ΔE|/E, %s (max %.1e)" % (label, np.max(err_e)))
    print("polhode %s: period %.3f s, max |ω−ω_exact|/|ω0| %.3e over %.0f s (%.3e over the "
          "first period), max |ΔL_w|/|L_w| %.2e, max |ΔE|/E %.2e"
          % (label, period, np.max(err_w), t[-1], np.max(err_w[t <= period]), np.max(err_l),
             np.max(err_e)))


def polhode_figure(traces, path):
    fig, ((a_t, a_p), (a_e, a_d)) = plt.subplots(2, 2, figsize=(12, 8.5))
    for n, (label, tr) in enumerate(traces.items()):
        plot_polhode((a_t, a_p, a_e, a_d), n, label, tr)
    low, high = a_t.get_ylim()
    a_t.set_ylim(low, high + 0.25 * (high - low))  # room for the legend
    a_t.set(xlabel="time (s)", ylabel="body ω (rad/s)")
    a_p.set(xlabel="ω1 (rad/s)", ylabel="ω2 (rad/s)", title="the polhodes seen along axis 3")
    a_p.set_aspect("equal", adjustable="datalim")
    a_e.set(xlabel="time (s)", ylabel="|ω − ω_analytic| / |ω0|", ylim=(1e-10, 1e-5),
            title="error against the analytic solution (an O(T²) phase error)")
    a_d.set(xlabel="time (s)", ylabel="relative drift", ylim=(1e-18, 1e-5),
            title="world angular momentum (solid) and energy (dotted)")
    for ax, loc in ((a_t, "upper center"), (a_p, "upper left"), (a_e, "lower right"),
                    (a_d, "lower right")):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7.5, loc=loc, ncol=2 if ax is a_t else 1)
    fig.suptitle("core::RigidBody torque-free, I = diag%s kg·m², T = %g ms, %g s"
                 % (MOMENTS, 1e3 * TRACE_STEP, TRACE_DURATION))
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def pair_grid(cols, specs, labels, title, path):
    """3x2 panels, each a hybrid column against its twin: specs = [(name, hybrid, twin, scale,
    unit)], the left column first; labels = (hybrid's, twin's)."""
    fig, axes = plt.subplots(3, 2, figsize=(12, 8), sharex=True)
    t = cols["time"]
    for ax, (name, hybrid, twin, scale, unit) in zip(axes.T.flat, specs):
        ax.plot(t, scale * cols[twin], color="k", lw=1.8, alpha=0.4, label=labels[1])
        ax.plot(t, scale * cols[hybrid], color="C0", lw=0.8, label=labels[0])
        ax.set_ylabel("%s (%s)" % (name, unit))
        ax.grid(alpha=0.3)
        if not np.any(cols[hybrid]) and not np.any(cols[twin]):
            ax.text(0.5, 0.6, "identically 0 in this scenario (planar: x, y, rz move)",
                    transform=ax.transAxes, ha="center", fontsize=8, color="0.3")
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="upper right", ncol=2, fontsize=8)
    fig.suptitle(title, x=0.4)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def error_figure(cols, path):
    """Per-axis errors of off_centre: velocity and angular velocity (hybrid − twin), force and
    moment (twin − what the body is given)."""
    panels = (("e_V = v − v_ideal", "v_%s", "v_%s_ideal", "m/s", ""),
              ("ω − ω_ideal (world)", "w_%s", "w_%s_ideal", "rad/s", "r"),
              ("f_ideal − f_input", "f_%s_ideal", "f_%s_input", "N", ""),
              ("m_ideal − m_input", "m_%s_ideal", "m_%s_input", "N·m", "r"))
    fig, axes = plt.subplots(2, 2, figsize=(12, 7.5), sharex=True)
    t = cols["time"]
    for ax, (name, first, second, unit, prefix) in zip(axes.flat, panels):
        for k, a in enumerate(AXES):
            e = cols[first % a] - cols[second % a]
            label = prefix + a
            ax.plot(t, e, color="C%d" % k, lw=0.8, label="%s (peak %.2e)" % (label, np.max(abs(e))))
            print("off_centre %s %s: peak %.3e %s" % (name, label, np.max(np.abs(e)), unit))
        ax.set(ylabel="%s (%s)" % (name, unit), title=name, xlabel="time (s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7.5, loc="upper right")
    fig.suptitle("off_centre: per-axis errors of the hybrid run against its ideal twin")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def energy_column(ax_e, ax_r, runs, title):
    """One scenario: energies of its runs against the twin (top), their ratio to it (bottom)."""
    twin = next(iter(runs.values()))
    ax_e.plot(twin["time"], twin["energy_ideal"], color="k", lw=1.6, alpha=0.45,
              label="ideal twin")
    spread, end = [], max(cols["time"][-1] for cols in runs.values())
    for (label, cols), style in zip(runs.items(), RUN_STYLES):
        t, e, ratio = cols["time"], cols["energy"], cols["energy"] / cols["energy_ideal"]
        stopped = t[-1] < end - 1e-9
        if stopped:  # the guard stopped it: mark where
            ax_e.plot(t[-1], e[-1], "x", ms=9, mew=2, color=style["color"])
            ax_r.plot(t[-1], ratio[-1], "x", ms=9, mew=2, color=style["color"])
        ax_e.plot(t, e, label=label + (", stopped (x)" if stopped else ""), **style)
        ax_r.plot(t, ratio, label="%s: %.3f at %.2f s" % (label, ratio[-1], t[-1]), **style)
        spread += [ratio.min(), ratio.max()]
        print("energy %s / %s: E %.4g J, E_ideal %.4g J, ratio %.4f at t = %.3f s"
              % (title, label, e[-1], cols["energy_ideal"][-1], ratio[-1], t[-1]))
    if max(spread) / min(spread) > 10:
        ax_r.set_yscale("log")
    else:
        ax_r.ticklabel_format(axis="y", useOffset=False)
    ax_e.set(title=title, ylabel="energy (J)")
    ax_r.set(xlabel="time (s)", ylabel="energy / energy_ideal")
    for ax in (ax_e, ax_r):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7.5, loc="best")


def energy_figure(columns, path):
    fig, axes = plt.subplots(2, len(columns), figsize=(5 * len(columns), 7.5), sharex="col")
    for k, (title, runs) in enumerate(columns.items()):
        energy_column(axes[0, k], axes[1, k], runs, title)
    fig.suptitle("Energy of the hybrid runs against their ideal twins")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def axis_specs(kind):
    """pair_grid specs: positions (mm, mrad) or wrench (N, N·m)."""
    if kind == "axes":
        return ([(a, a, a + "_ideal", 1e3, "mm") for a in AXES] +
                [("r" + a, "r" + a, "r" + a + "_ideal", 1e3, "mrad") for a in AXES])
    return ([("f_" + a, "f_%s_meas" % a, "f_%s_ideal" % a, 1.0, "N") for a in AXES] +
            [("m_" + a, "m_%s_meas" % a, "m_%s_ideal" % a, 1.0, "N·m") for a in AXES])


def scenario_runs(hyloop, scratch):
    run = lambda *a: run_scenario(hyloop, scratch, *a)[0]  # noqa: E731
    return {
        "translation_x (20 s)": {
            "SCVG": run("tx_scvg", "translation_x", ["timing.duration_s=20"]),
            "none, guarded": run("tx_none", "translation_x",
                                 ["timing.duration_s=20", "compensator.type=none"]),
            "none, guard off": run("tx_none_unguarded", "translation_x",
                                   ["timing.duration_s=20", "compensator.type=none",
                                    "guard.enabled=false"])},
        "off_centre (SCVG + FGC)": {"hybrid": run("off_centre", "off_centre")},
        "tumbling (no compensation)": {"hybrid": run("tumbling", "tumbling")},
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hyloop", default="build/bin/hyloop")
    p.add_argument("--trace", default="build/bin/rigid_body_trace")
    p.add_argument("--out", default="docs/img")
    p.add_argument("--scratch", default="/tmp/sits6_figures")
    p.add_argument("--check-polhode", action="store_true",
                   help="only check the integrator against the analytic polhode (no figures)")
    a = p.parse_args()
    start = time.monotonic()
    shutil.rmtree(a.scratch, ignore_errors=True)
    os.makedirs(a.scratch)
    if a.check_polhode:
        return check_polhode(a.trace, a.scratch)
    os.makedirs(a.out, exist_ok=True)
    img = lambda name: os.path.join(a.out, "sits6_%s.png" % name)  # noqa: E731
    traces = {label: run_trace(a.trace, a.scratch, "trace_%d" % k, w0)
              for k, (label, w0) in enumerate(POLHODES)}
    polhode_figure(traces, img("polhode"))
    runs = scenario_runs(a.hyloop, a.scratch)
    off = runs["off_centre (SCVG + FGC)"]["hybrid"]
    pair_grid(off, axis_specs("axes"), ("hybrid", "ideal twin"),
              "off_centre: the six axes of the contact frame, hybrid against its ideal twin",
              img("off_centre_axes"))
    pair_grid(off, axis_specs("wrench"), ("measured (F/T sensor)", "ideal twin's contact"),
              "off_centre: the measured wrench against the ideal twin's", img("off_centre_wrench"))
    error_figure(off, img("off_centre_errors"))
    energy_figure(runs, img("energy"))
    print("wrote %s/sits6_*.png in %.1f s" % (a.out, time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
