#!/usr/bin/python3
"""vRTHS benchmark study (Silva et al. 2020): runs, tables and figures of docs/benchmark.md.

  /usr/bin/python3 tools/vrths_study.py [--hyloop build/bin/hyloop] [--runs 20]
      [--out docs/img] [--markdown FILE]

Runs the 16 scenarios scenarios/vrths/case{1..4}_{none,sample,ats,amb}.yaml nominally
(`hyloop run`) and on N perturbed plants (`hyloop montecarlo --runs N`: plant seeds 1..N, sensor
seeds 1001..1000+N) in a temporary directory, writes vrths_tracking.png, vrths_criteria.png,
vrths_none.png and vrths_coefficients.png to --out and the markdown tables to --markdown (or
stdout). Every run is seeded, so the output is the same from one call to the next.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hyloop_report import plotting  # noqa: E402  (matplotlib Agg, the project's plot style)
from matplotlib.figure import Figure  # noqa: E402  (after plotting selected the backend)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = (1, 2, 3, 4)
CONTROLLERS = ("none", "sample", "ats", "amb")
COMPENSATED = ("sample", "ats", "amb")
COLOURS = {"sample": "tab:blue", "ats": "tab:orange", "amb": "tab:green", "none": "tab:red"}
CRITERIA = ["J1_ms"] + [f"J{i}_percent" for i in range(2, 10)]
# The paper's Table 3: the sample controller, El Centro, nominal plant (J1 ms, J2-J9 %).
PAPER_TABLE3 = {
    1: (4.6, 10.4, 11.5, 36.1, 19.0, 32.3, 32.4, 14.8, 14.8),
    2: (4.6, 9.8, 11.1, 33.1, 17.1, 30.5, 30.5, 15.3, 15.2),
    3: (4.6, 9.1, 10.2, 49.9, 36.7, 49.8, 49.8, 35.5, 35.6),
    4: (4.6, 10.5, 11.3, 72.6, 35.2, 68.5, 68.7, 33.4, 33.3),
}
GOAL_J1_MS, GOAL_J2_PERCENT = 1.0, 3.0
PEAK_WINDOW = (7.2, 7.8)  # s: El Centro's largest cycle (the record starts at 5 s: padding)


def name(case, controller):
    return f"case{case}_{controller}"


# ---------------------------------------------------------------- runs

def hyloop(binary, *args):
    subprocess.run([binary, *args], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_all(binary, runs, work):
    """Nominal run directories and Monte Carlo results, keyed by (case, controller)."""
    nominal, montecarlo = {}, {}
    for case in CASES:
        for controller in CONTROLLERS:
            key = (case, controller)
            scenario = os.path.join("scenarios", "vrths", name(*key) + ".yaml")
            nominal[key] = os.path.join(work, "nominal", name(*key))
            hyloop(binary, "run", scenario, "--out", nominal[key])
            mc_dir = os.path.join(work, "montecarlo", name(*key))
            hyloop(binary, "montecarlo", scenario, "--runs", str(runs), "--out", mc_dir)
            with open(os.path.join(mc_dir, "montecarlo.json")) as f:
                montecarlo[key] = json.load(f)
            print(f"vrths_study: {name(*key)} done", file=sys.stderr)
    return nominal, montecarlo


def summary(run_dir):
    with open(os.path.join(run_dir, "summary.json")) as f:
        return json.load(f)


def resolved(run_dir):
    """The run's resolved scenario."""
    with open(os.path.join(run_dir, "scenario.yaml")) as f:
        return yaml.safe_load(f)


def span(values, digits):
    """'lo–hi', or one number when they are equal at this precision."""
    lo, hi = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return lo if lo == hi else f"{lo}–{hi}"


def samples(run_dir):
    """samples.csv as {column name without unit: array}."""
    with open(os.path.join(run_dir, "samples.csv"), newline="") as f:
        rows = list(csv.reader(f))
    data = np.array(rows[1:], dtype=np.float64)
    return {h.split("[")[0]: data[:, i] for i, h in enumerate(rows[0])}


# ---------------------------------------------------------------- figures

def figure_tracking(nominal, out, written):
    """Case 1: y1 and x_m around the peak per controller; x_m - y1 over the record."""
    fig = Figure(figsize=(12, 7), dpi=plotting.DPI, layout="constrained")
    axes = fig.subplot_mosaic([list(COMPENSATED), ["error"] * 3])
    for controller in ("sample", "amb", "ats"):  # ATS drawn over AMB
        s = samples(nominal[(1, controller)])
        ax = axes[controller]
        sel = (s["time"] >= PEAK_WINDOW[0]) & (s["time"] <= PEAK_WINDOW[1])
        ax.plot(s["time"][sel], 1e3 * s["x_m"][sel], color=COLOURS[controller],
                label="measured x_m", **plotting.HYBRID_STYLE)
        ax.plot(s["time"][sel], 1e3 * s["y1"][sel], label="target y1", **plotting.IDEAL_STYLE)
        ax.set_title(f"case 1, {controller}", fontsize=10)
        ax.set_xlabel("time [s]")
        ax.set_ylabel("displacement [mm]")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower left", fontsize=8, framealpha=0.85)
        t, e = plotting.envelope(s["time"], s["x_m"] - s["y1"])
        axes["error"].plot(t, 1e3 * e, color=COLOURS[controller], lw=0.6, alpha=0.8,
                           label=controller)
    axes["error"].set_title("tracking error x_m − y1, whole record (noise σ = 16 µm included)",
                            fontsize=10)
    axes["error"].set_xlabel("time [s]")
    axes["error"].set_ylabel("x_m − y1 [mm]")
    axes["error"].grid(True, alpha=0.3)
    axes["error"].legend(loc="upper right", fontsize=8, framealpha=0.85)
    plotting.save(fig, os.path.join(out, "vrths_tracking.png"), written)


def figure_criteria(montecarlo, runs, out, written):
    """J1 and J2, Monte Carlo mean ± std, per case and compensating controller."""
    fig, axes = plotting.figure(1, 2, 12, 4.2)
    width = 0.26
    for ax, metric, goal, unit in ((axes[0][0], "J1_ms", GOAL_J1_MS, "ms"),
                                   (axes[0][1], "J2_percent", GOAL_J2_PERCENT, "%")):
        for i, controller in enumerate(COMPENSATED):
            stats = [montecarlo[(c, controller)]["statistics"][metric] for c in CASES]
            x = np.array(CASES) + (i - 1) * width
            ax.bar(x, [s["mean"] for s in stats], width, yerr=[s["std"] for s in stats],
                   capsize=3, color=COLOURS[controller], label=controller)
        ax.axhline(goal, color="k", ls="--", lw=1.0, label=f"goal {goal:g} {unit}")
        ax.set_xticks(CASES, [f"case {c}" for c in CASES])
        ax.set_ylabel(f"{metric[:2]} [{unit}]")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8, framealpha=0.85)
    none = [montecarlo[(c, "none")]["statistics"] for c in CASES]
    j1 = [s["J1_ms"][k] for s in none for k in ("min", "max")]
    j2 = [s["J2_percent"][k] for s in none for k in ("min", "max")]
    fig.suptitle(f"Monte Carlo, {runs} perturbed plants per bar (mean ± std); none is off the "
                 f"scale: J1 {span(j1, 2)} ms, J2 {span(j2, 0)} %", fontsize=10)
    plotting.save(fig, os.path.join(out, "vrths_criteria.png"), written)


def figure_none(nominal, case, out, written):
    """The uncompensated run up to its stop: displacements and actuator force."""
    s, info = samples(nominal[(case, "none")]), summary(nominal[(case, "none")])
    scenario = resolved(nominal[(case, "none")])
    limits = scenario["limits"]
    stroke = 1e3 * limits["stroke_m"]
    fig, axes = plotting.figure(2, 1, 11, 6.5, sharex=True)
    ax = axes[0][0]
    for key, label, kw in (("y1", "target y1 (= command u)", {"color": "k", "lw": 0.8}),
                           ("x", "specimen x (true)", {"color": COLOURS["none"], "lw": 1.0})):
        ax.plot(s["time"], 1e3 * s[key], label=label, **kw)
    at_stroke = info["stop_reason"] == "stroke_limit"
    if at_stroke:  # the limit lines only where the run reaches them (else they flatten the plot)
        for sign in (1, -1):
            ax.axhline(sign * stroke, color="k", ls="--", lw=0.8,
                       label=f"stroke ±{stroke:g} mm" if sign > 0 else None)
    ax.set_ylabel("displacement [mm]")
    if info["stop_reason"] == "stability_guard":
        guard = info["stability_guard"]
        why = (f"stability guard: RMS(x_m − y1)/RMS(y1) over {scenario['guard']['window_s']:g} s = "
               f"{guard['max_tracking_ratio']:.2f} > {guard['limit']:g}")
    elif at_stroke:
        why = f"stroke_limit: |x_m| > {stroke:g} mm"
    else:
        why = info["stop_reason"] or "not stopped"
    ax.set_title(f"case {case}, none: stopped at t = {info['duration_s']:.2f} s ({why}); "
                 f"stroke ±{stroke:g} mm, capacity ±8.9 kN", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, framealpha=0.85)
    ax = axes[1][0]
    ax.plot(s["time"], 1e-3 * s["F_act"], color=COLOURS["none"], lw=0.8, label="actuator force")
    if at_stroke:
        for sign in (1, -1):
            ax.axhline(sign * 8.9, color="k", ls="--", lw=0.8,
                       label="capacity ±8.9 kN" if sign > 0 else None)
    ax.set_ylabel("force [kN]")
    ax.set_xlabel("time [s]")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, framealpha=0.85)
    plotting.save(fig, os.path.join(out, "vrths_none.png"), written)


def figure_coefficients(nominal, out, written):
    """Case 1: ATS a0..a2 and AMB a0..a3 over time, with the plant's truncated inverse."""
    controllers = resolved(nominal[(1, "amb")])["controller"]
    amb, ats = controllers["amb"], controllers["ats"]
    inverse = amb["initial"]
    fig, axes = plotting.figure(4, 1, 11, 9.5, sharex=True)
    units = ("a0 [-]", "a1 [s]", "a2 [s²]", "a3 [s³] (AMB only)")
    for controller in ("ats", "amb"):
        s = samples(nominal[(1, controller)])
        for i in range(4 if controller == "amb" else 3):
            axes[i][0].plot(s["time"], s[f"c{i}"], color=COLOURS[controller], lw=1.0,
                            label=controller.upper())
    for i in range(4):
        ax = axes[i][0]
        ax.axhline(inverse[i], color="k", ls=":", lw=0.9,
                   label="nominal plant's inverse (ATS and AMB start)" if i < 3
                   else "nominal plant's inverse (AMB start)")
        if i < 3:
            ax.axhline(ats["min"][i], color=COLOURS["ats"], ls="--", lw=0.7, alpha=0.7,
                       label="ATS lower bound")
        else:
            for j, bound in enumerate((amb["min"][i], amb["max"][i])):
                ax.axhline(bound, color=COLOURS["amb"], ls="--", lw=0.7, alpha=0.7,
                           label="AMB bounds" if j == 0 else None)
            ax.legend(loc="lower right", fontsize=8, framealpha=0.85)
        ax.set_ylabel(units[i])
        ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
        ax.grid(True, alpha=0.3)
    axes[1][0].legend(loc="lower right", fontsize=8, framealpha=0.85)
    axes[0][0].set_title("case 1, El Centro: compensator coefficients", fontsize=10)
    axes[3][0].set_xlabel("time [s]")
    plotting.save(fig, os.path.join(out, "vrths_coefficients.png"), written)


# ---------------------------------------------------------------- tables

def row(cells):
    return "| " + " | ".join(cells) + " |"


def table_sample_vs_paper(nominal):
    head = ["case", ""] + [f"J{i}" for i in range(1, 10)]
    lines = [row(head), row(["---"] * 2 + ["---:"] * 9)]
    for case in CASES:
        ours = [summary(nominal[(case, "sample")])[m] for m in CRITERIA]
        paper = PAPER_TABLE3[case]
        lines.append(row([str(case), "paper"] + [f"{p:.1f}" for p in paper]))
        lines.append(row(["", "hyloop"] + [f"{o:.2f}" for o in ours]))
        lines.append(row(["", "Δ rel."] + [f"{round(100 * (o - p) / p, 1) + 0.0:+.1f} %"
                                            for o, p in zip(ours, paper)]))
    return "\n".join(lines)


def stop_cell(info):
    return info["stop_reason"] or "–"


def table_nominal(nominal):
    lines = [row(["case", "controller"] + [f"J{i}" for i in range(1, 10)]
                 + ["peak F_act (N)", "stop"]),
             row(["---"] * 2 + ["---:"] * 10 + ["---"])]
    for case in CASES:
        for controller in CONTROLLERS:
            info = summary(nominal[(case, controller)])
            stop = stop_cell(info)
            if info["stop_reason"]:
                stop += f" at {info['duration_s']:.2f} s"
            lines.append(row([str(case), controller]
                             + [f"{info[m]:.2f}" for m in CRITERIA]
                             + [f"{info['peak_actuator_force_n']:.0f}", stop]))
    return "\n".join(lines)


def table_montecarlo(montecarlo):
    lines = [row(["case", "controller"] + [f"J{i}" for i in range(1, 10)]
                 + ["peak F_act, max (N)", "stopped"]),
             row(["---"] * 2 + ["---:"] * 10 + ["---"])]
    for case in CASES:
        for controller in CONTROLLERS:
            mc = montecarlo[(case, controller)]
            cells = [f"{mc['statistics'][m]['mean']:.2f} ± {mc['statistics'][m]['std']:.2f}"
                     for m in CRITERIA]
            reasons = sorted({r["stop_reason"] for r in mc["per_run"] if r["stop_reason"]})
            stopped = f"{mc['stopped_runs']}/{mc['runs']}"
            if reasons:
                stopped += " (" + ", ".join(reasons) + ")"
            peak = mc["statistics"]["peak_actuator_force_n"]["max"]
            lines.append(row([str(case), controller] + cells + [f"{peak:.0f}", stopped]))
    return "\n".join(lines)


def table_goal(nominal, montecarlo):
    """J1 ≤ 1 ms and J2 ≤ 3 %: nominal and the worst perturbed run."""
    lines = [row(["case", "controller", "J1 nominal", "J2 nominal", "J1 worst MC",
                  "J2 worst MC", "goal met (nominal / all MC runs)"]),
             row(["---"] * 2 + ["---:"] * 4 + ["---"])]
    for case in CASES:
        for controller in COMPENSATED:
            info = summary(nominal[(case, controller)])
            stats = montecarlo[(case, controller)]["statistics"]
            ok_nominal = info["J1_ms"] <= GOAL_J1_MS and info["J2_percent"] <= GOAL_J2_PERCENT
            ok_mc = (stats["J1_ms"]["max"] <= GOAL_J1_MS
                     and stats["J2_percent"]["max"] <= GOAL_J2_PERCENT)
            lines.append(row([str(case), controller, f"{info['J1_ms']:.2f}",
                              f"{info['J2_percent']:.2f}", f"{stats['J1_ms']['max']:.2f}",
                              f"{stats['J2_percent']['max']:.2f}",
                              f"{'yes' if ok_nominal else 'no'} / {'yes' if ok_mc else 'no'}"]))
    return "\n".join(lines)


def markdown(nominal, montecarlo, runs):
    return "\n\n".join([
        "### Sample controller, nominal plant, against the paper's Table 3\n\n"
        "J1 in ms (unrounded), J2–J9 in %; Δ rel. = (hyloop − paper)/paper.\n\n"
        + table_sample_vs_paper(nominal),
        "### Every controller, nominal plant\n\n"
        "J's of a stopped run are computed over the part it ran.\n\n" + table_nominal(nominal),
        f"### Monte Carlo, {runs} perturbed plants (mean ± sample std)\n\n"
        "Plant seeds 1–N, sensor-noise seeds 1001–1000+N. Stopped runs are included in the "
        "statistics; their J's are computed over the part they ran.\n\n"
        + table_montecarlo(montecarlo),
        "### The goal J1 ≤ 1 ms and J2 ≤ 3 %\n\n" + table_goal(nominal, montecarlo),
    ]) + "\n"


# ---------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hyloop", default="build/bin/hyloop")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--out", default="docs/img", help="directory for the figures")
    parser.add_argument("--markdown", help="file for the tables (default: stdout)")
    args = parser.parse_args()
    binary = os.path.abspath(args.hyloop)
    out = os.path.abspath(args.out)
    with tempfile.TemporaryDirectory(prefix="vrths_study_") as work:
        nominal, montecarlo = run_all(binary, args.runs, work)
        written = []
        figure_tracking(nominal, out, written)
        figure_criteria(montecarlo, args.runs, out, written)
        figure_none(nominal, 1, out, written)
        figure_coefficients(nominal, out, written)
        text = markdown(nominal, montecarlo, args.runs)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    for path in written:
        print(f"vrths_study: wrote {os.path.relpath(path)}", file=sys.stderr)


if __name__ == "__main__":
    main()
