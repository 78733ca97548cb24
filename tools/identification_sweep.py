#!/usr/bin/python3
"""Identification against sensor noise: ARX, IV and OE over sigma and seeds (docs/identification.md).

Usage:
    identification_sweep.py --hyloop build/bin/hyloop [--seeds 50] [--out docs/img]
                            [--signals sine,chirp] [--methods arx,iv,oe]

For every signal (sine: scenarios/sits/identify.yaml, the paper's Eq. 23 sweep; chirp:
scenarios/sits/identify_chirp.yaml), method, sigma in SIGMAS and seed 1..N it runs
`hyloop identify SCENARIO --set rig.sensor.position_noise_std_m=SIGMA --set rig.sensor.seed=SEED
--set identification.method=METHOD` and reads the JSON report: the phase error at 10 Hz against the
emulator's truth (emulator_truth.phase_error_deg, continuous models only), the simulation NRMSE
against the measured output and against the noise-free sweep, and whether a continuous model
exists. Writes OUT/identification_noise.png, OUT/identification_noise.csv (one row per run) and
prints the Markdown table of docs/identification.md on stdout.
"""

import argparse
import csv
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

SIGMAS = [0.0, 1e-5, 3e-5, 1e-4, 3e-4]
HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = {
    "sine": os.path.join(HERE, "..", "scenarios", "sits", "identify.yaml"),
    "chirp": os.path.join(HERE, "..", "scenarios", "sits", "identify_chirp.yaml"),
}
TOLERANCE_DEG = 0.2
FREQUENCY_HZ = 10.0


def identify(hyloop, signal, method, sigma, seed):
    cmd = [hyloop, "identify", SCENARIOS[signal],
           "--set", f"rig.sensor.position_noise_std_m={sigma!r}",
           "--set", f"rig.sensor.seed={seed}",
           "--set", f"identification.method={method}",
           "--set", "identification.report_frequencies_hz=[10]"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    has_continuous = j["continuous_model"] is not None
    phase = j["emulator_truth"]["phase_error_deg"][0] if has_continuous else math.nan
    nrmse_truth = j["emulator_truth"]["nrmse_simulation_vs_noise_free_percent"]
    return {"signal": signal, "method": method, "sigma_m": sigma, "seed": seed,
            "phase_error_deg": phase, "continuous": int(has_continuous),
            "nrmse_measured_percent": j["nrmse_simulation_percent"],
            "nrmse_noise_free_percent": math.nan if nrmse_truth is None else nrmse_truth,
            "iterations": j.get("iterations", 0)}


def summarise(rows):
    phases = np.array([r["phase_error_deg"] for r in rows], dtype=float)
    ok = phases[np.isfinite(phases)]
    fits = np.array([r["nrmse_measured_percent"] for r in rows], dtype=float)
    truth = np.array([r["nrmse_noise_free_percent"] for r in rows], dtype=float)
    truth = truth[np.isfinite(truth)]
    diverged = int(np.sum(truth < 0.0))  # the simulation of an unstable fit runs away
    return {
        "n": len(rows), "continuous": int(sum(r["continuous"] for r in rows)),
        "phase_mean": float(np.mean(ok)) if ok.size else math.nan,
        "phase_std": float(np.std(ok, ddof=1)) if ok.size > 1 else math.nan,
        "phase_p5": float(np.percentile(ok, 5)) if ok.size else math.nan,
        "phase_p95": float(np.percentile(ok, 95)) if ok.size else math.nan,
        "phase_max_abs": float(np.max(np.abs(ok))) if ok.size else math.nan,
        "within": int(np.sum(np.abs(ok) <= TOLERANCE_DEG)),
        "fit_mean": float(np.mean(fits)), "fit_std": float(np.std(fits, ddof=1)),
        "truth_median": float(np.median(truth)) if truth.size else math.nan,
        "truth_min": float(np.min(truth)) if truth.size else math.nan,
        "diverged": diverged,
    }


def fit_text(st):
    if st["diverged"]:
        return "–"
    return f"{st['fit_mean']:.3f} ± {st['fit_std']:.3f}"


def truth_text(st):
    low = (f"{st['diverged']} unstable fits diverge" if st["diverged"]
           else f"{st['truth_min']:.4f}")
    return f"{st['truth_median']:.4f} ({low})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hyloop", required=True)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--out", default=os.path.join(HERE, "..", "docs", "img"))
    parser.add_argument("--signals", default="sine,chirp")
    parser.add_argument("--methods", default="arx,iv,oe")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if args.seeds < 20:
        print("identification_sweep.py: --seeds must be >= 20", file=sys.stderr)
        return 2
    signals = args.signals.split(",")
    methods = args.methods.split(",")
    tasks = [(s, m, sigma, seed) for s in signals for m in methods for sigma in SIGMAS
             for seed in range(1, args.seeds + 1)]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(lambda t: identify(args.hyloop, *t), tasks))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "identification_noise.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    groups = {}
    for r in rows:
        groups.setdefault((r["signal"], r["method"], r["sigma_m"]), []).append(r)
    stats = {k: summarise(v) for k, v in groups.items()}

    print(f"| signal | method | σ [m] | phase error at 10 Hz [°] mean ± std | 5–95 % | "
          f"max abs | within {TOLERANCE_DEG}° | continuous model | NRMSE fit vs measured [%] | "
          f"NRMSE fit vs noise-free [%] median (min) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (signal, method, sigma), st in sorted(stats.items(),
                                              key=lambda kv: (signals.index(kv[0][0]),
                                                              kv[0][2],
                                                              methods.index(kv[0][1]))):
        print(f"| {signal} | {method} | {sigma:g} | {st['phase_mean']:+.3f} ± "
              f"{st['phase_std']:.3f} | [{st['phase_p5']:+.3f}, {st['phase_p95']:+.3f}] | "
              f"{st['phase_max_abs']:.3f} | {st['within']}/{st['continuous']} | "
              f"{st['continuous']}/{st['n']} | {fit_text(st)} | {truth_text(st)} |")

    fig = Figure(figsize=(11, 4.2))
    axes = fig.subplots(1, 2)
    colours = {"arx": "tab:red", "iv": "tab:blue", "oe": "tab:green"}
    styles = {"sine": "-", "chirp": "--"}
    xs = [s if s > 0 else 3e-6 for s in SIGMAS]
    for signal in signals:
        for method in methods:
            st = [stats[(signal, method, s)] for s in SIGMAS]
            mean = np.array([x["phase_mean"] for x in st])
            lo = np.array([x["phase_p5"] for x in st])
            hi = np.array([x["phase_p95"] for x in st])
            label = f"{method}, {signal}"
            axes[0].plot(xs, mean, styles[signal], marker="o", color=colours[method], label=label)
            axes[0].fill_between(xs, lo, hi, color=colours[method], alpha=0.12)
            truth = np.array([x["truth_median"] for x in st])
            axes[1].plot(xs, 100.0 - truth, styles[signal], marker="o", color=colours[method],
                         label=label)
    axes[0].axhspan(-TOLERANCE_DEG, TOLERANCE_DEG, color="0.85", zorder=0,
                    label=f"±{TOLERANCE_DEG}°")
    axes[0].set_xscale("log")
    axes[0].set_xlabel("position noise σ [m] (σ = 0 drawn at 3e-6)")
    axes[0].set_ylabel("phase error of G_R at 10 Hz [°]")
    axes[0].set_title(f"mean and 5–95 % band over {args.seeds} seeds")
    axes[0].grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7, ncol=2)
    axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("position noise σ [m] (σ = 0 drawn at 3e-6)")
    axes[1].set_ylabel("100 − NRMSE fit vs noise-free sweep [%]")
    axes[1].set_title("simulation error of the identified model (median)")
    axes[1].grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path = os.path.join(args.out, "identification_noise.png")
    fig.savefig(path, dpi=150)
    print(path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
