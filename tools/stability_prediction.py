#!/usr/bin/python3
"""docs/reproduction.md §4: predicted against simulated stability, from the hyloop CLI only.

Usage:
    stability_prediction.py [--hyloop build/bin/hyloop] [--out docs/img] [--work DIR]

For three parameter sets (Table 1; m_e = 400 kg, K_tc = 25 000 N/m with K_x = 24 N/m; the
paper's G_R with tau_s = 3 ms, T_c = 6 ms and a 1 ms acquisition filter) it calls
  hyloop analyze table1_fgc.yaml --k-h K [--k-x KX] --set ...   (sampled loop and Routh)
  hyloop analyze table1_fgc.yaml --simulate ...                 (bisection on runs, 60 s each)
  hyloop run table1_fgc.yaml --set compensator.k_eps0=K ...      (summary's growth rate)
and writes stability_prediction.png (growth rate against K_h: exact sampled loop, Routh's
rightmost root of Eq. 34, and runs) and prints a markdown table of the boundaries.
The runs at K_x != 0 hold K_x fixed (phase_correction.start_time_s beyond the run).
Only Debian's python3-numpy and python3-matplotlib (Agg backend) are used.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

DPI = 150
SCENARIO = "scenarios/sits/table1_fgc.yaml"
SETS = [
    ("Table 1", [], 0.0),
    ("m_e 400 kg, K_tc 25 000 N/m, K_x 24 N/m",
     ["model.mass_kg=400", "rig.contact.stiffness_n_per_m=25000"], 24.0),
    ("paper G_R, tau_s 3 ms, T_c 6 ms, 1 ms filter",
     ["rig.robot.preset=paper", "rig.sensor.delay_s=0.003", "timing.control_period_s=0.006",
      "acquisition.filter_time_constant_s=0.001"], 0.0),
]


def sets_args(overrides):
    out = []
    for o in overrides:
        out += ["--set", o]
    return out


def analyze(hyloop, overrides, extra):
    cmd = [hyloop, "analyze", SCENARIO] + sets_args(overrides) + extra
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def run_growth(hyloop, overrides, k_h, k_x, work):
    out = os.path.join(work, "run")
    fixed = ["compensator.type=fgc", f"compensator.k_eps0={k_h!r}", "outputs.samples=false"]
    if k_x != 0.0:
        fixed += ["compensator.phase_correction.enabled=true",
                  f"compensator.phase_correction.k_x_initial_n_per_m={k_x!r}",
                  "compensator.phase_correction.start_time_s=1e9"]
    cmd = [hyloop, "run", SCENARIO, "--out", out, "--force"] + sets_args(overrides + fixed)
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)["amplitude_growth_rate_per_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hyloop", default="build/bin/hyloop")
    ap.add_argument("--out", default="docs/img")
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="hyloop_stability_")
    fig = Figure(figsize=(13, 4.2))
    axes = fig.subplots(1, len(SETS))
    rows = []
    for ax, (name, overrides, k_x) in zip(axes, SETS):
        base = analyze(a.hyloop, overrides, ["--k-x", repr(k_x), "--simulate"])
        predicted = [i["upper"] for i in base["sampled_loop"]["stable_k_h_intervals"]
                     if i["upper"] is not None][-1]
        routh = [i["upper"] for i in base["stable_k_h_intervals"] if i["upper"] is not None][-1]
        sim = [b for b in base["simulated_boundaries"] if b["predicted_k_h"] == predicted][0]
        rows.append((name, routh, predicted, sim["simulated_k_h"], sim["runs"],
                     base["k_h"], base["sampled_loop"]["growth_rate_per_s"]))
        ks = np.linspace(2.2 * predicted, 0.3 * abs(predicted), 12)
        grid = np.linspace(ks[0], ks[-1], 60)
        sampled, rational = [], []
        for k in grid:
            j = analyze(a.hyloop, overrides, ["--k-h", repr(float(k)), "--k-x", repr(k_x)])
            sampled.append(j["sampled_loop"]["growth_rate_per_s"])
            rational.append(max(r[0] for r in j["roots"]))
        measured = [run_growth(a.hyloop, overrides, float(k), k_x, work) for k in ks]
        ax.axhline(0.0, color="0.6", lw=0.8)
        ax.plot(grid, sampled, color="C0", lw=1.6, label="exact sampled loop (Floquet)")
        ax.plot(grid, rational, color="C3", lw=1.2, ls="--", label="Routh model, Eq. 34")
        ax.plot(ks, measured, "ko", ms=4, label="runs (hyloop run, 60 s)")
        ax.axvline(predicted, color="C0", lw=0.8, ls=":")
        ax.axvline(routh, color="C3", lw=0.8, ls=":")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("K_h (N·s/m)")
        ax.set_ylabel("growth rate σ (1/s)")
        ax.set_ylim(min(sampled[0], -0.05), max(max(sampled), max(rational[-10:])) * 1.1)
        ax.grid(True, lw=0.3)
    axes[0].legend(fontsize=8, loc="upper left")
    fig.suptitle("Growth rate of the hybrid loop against K_h: prediction and runs", fontsize=10)
    fig.tight_layout()
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "stability_prediction.png")
    fig.savefig(path, dpi=DPI)
    print(path)
    print("| parameter set | Routh (Eq. 34) | exact sampled loop | simulated | sampled vs sim "
          "| Routh vs sim | runs |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, routh, pred, simk, runs, _, _ in rows:
        print(f"| {name} | {routh:.3f} | {pred:.3f} | {simk:.3f} | "
              f"{100 * (pred - simk) / abs(simk):+.3f} % | {100 * (routh - simk) / abs(simk):+.1f} % "
              f"| {runs} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
