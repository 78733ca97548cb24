#!/usr/bin/python3
"""The stability guard's figures for docs/reproduction.md and docs/rht.md (issue 13 §3).

Runs the uncompensated SITS and RHT scenarios guarded (the default) and with
guard.enabled=false, beside compensated ones, and plots what the guard watches:
SITS the target's energy over its initial energy (limit 1.2), RHT the storey's displacement
against 1.2x the reference's peak.

  tools/guard_figures.py --hyloop build/bin/hyloop --out docs/img
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def run(hyloop, scenario, out, guarded):
    cmd = [hyloop, "run", scenario, "--out", out]
    if not guarded:
        cmd += ["--set", "guard.enabled=false"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(out, "samples.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    cols = {k: [float(r[k]) for r in rows] for k in rows[0]}
    return cols, summary


def sits(hyloop, source, tmp, out_dir):
    runs = {}
    for name, guarded in (("table1_none", False), ("table1_none", True), ("table1_scvg", True),
                          ("table1_tdpa", True)):
        key = name + ("" if guarded else " (unguarded)")
        runs[key] = run(hyloop, os.path.join(source, "scenarios/sits", name + ".yaml"),
                        os.path.join(tmp, key.replace(" ", "_").strip("()")), guarded)
    fig, (ax_e, ax_x) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    e0 = runs["table1_none"][1]["stability_guard"]["reference_energy_j"]
    styles = {"table1_none (unguarded)": ("0.6", "-"), "table1_none": ("C3", "-"),
              "table1_scvg": ("C0", "-"), "table1_tdpa": ("C2", "--")}
    for key, (cols, summary) in runs.items():
        color, ls = styles[key]
        t = cols["time[s]"]
        stop = summary.get("stop_reason")
        label = key + (" — stopped at %.3f s" % t[-1] if stop == "stability_guard" else "")
        ax_e.plot(t, [e / e0 for e in cols["energy[J]"]], color=color, ls=ls, label=label)
        ax_x.plot(t, [1e3 * x for x in cols["x[m]"]], color=color, ls=ls, lw=0.9)
    limit = runs["table1_none"][1]["stability_guard"]["limit"]
    ax_e.axhline(limit, color="k", ls=":", lw=1, label="guard.max_energy_ratio = %.1f" % limit)
    ax_e.set_ylabel("E / E(0)")
    ax_e.set_ylim(0.0, 2.5)
    ax_e.legend(loc="upper left", fontsize=8)
    ax_e.set_title("SITS Table 1: the energy guard stops the uncompensated loop")
    ideal = runs["table1_scvg"][0]
    ax_x.plot(ideal["time[s]"], [1e3 * x for x in ideal["x_ideal[m]"]], color="k", lw=0.6,
              ls=":", label="ideal twin")
    ax_x.set_ylabel("x (mm)")
    ax_x.set_xlabel("time (s)")
    ax_x.set_xlim(0, 10)
    ax_x.set_ylim(-15, 15)
    ax_x.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "sits_guard_energy.png")
    fig.savefig(path, dpi=110)
    return path


def rht(hyloop, source, tmp, out_dir):
    runs = {}
    for name, guarded in (("none", False), ("none", True), ("p4", True)):
        key = name + ("" if guarded else " (unguarded)")
        runs[key] = run(hyloop, os.path.join(source, "scenarios/rht", name + ".yaml"),
                        os.path.join(tmp, "rht_" + key.replace(" ", "_").strip("()")), guarded)
    reference = runs["p4"][0]
    peak = max(abs(d) for d in reference["d_desired[m]"])
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.plot(reference["time[s]"], [1e3 * d for d in reference["d_desired[m]"]], color="k",
            lw=0.7, label="reference (p4, compensated)")
    styles = {"none (unguarded)": "0.6", "none": "C3"}
    for key in ("none (unguarded)", "none"):
        cols, summary = runs[key]
        t = cols["time[s]"]
        label = "%s — %s at %.2f s" % (key, summary.get("stop_reason"), t[-1])
        ax.plot(t, [1e3 * d for d in cols["d_measured[m]"]], color=styles[key], label=label)
    for sign in (1, -1):
        ax.axhline(sign * 1.2e3 * peak, color="k", ls=":", lw=1,
                   label="1.2 x reference peak (%.0f mm)" % (1.2e3 * peak) if sign > 0 else None)
    ax.set_xlim(0, 8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("d_measured (mm)")
    ax.set_title("RHT El Centro: the tracking guard stops the uncompensated test")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "rht_guard.png")
    fig.savefig(path, dpi=110)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hyloop", default="build/bin/hyloop")
    p.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p.add_argument("--out", default="docs/img")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for path in (sits(a.hyloop, a.source, tmp, a.out), rht(a.hyloop, a.source, tmp, a.out)):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
