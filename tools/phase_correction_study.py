#!/usr/bin/python3
"""Phase-correction study (issue 11 §2): tunes, runs and plots what docs/reproduction.md reports.

  /usr/bin/python3 tools/phase_correction_study.py --hyloop build/bin/hyloop --work runs/phase
      [--steps tune,runs,noise,undamped,plots]

Every number comes from `hyloop tune --coarse` and `hyloop run` on scenarios/sits/*.yaml with
--set overrides; results go to WORK/study.json, plots to docs/img/phase_*.png.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Parameter sets of the 5x claim: (name, overrides on table1_scvg*.yaml).
SETS = [
    ("table1", []),
    ("m400_k25000", ["model.mass_kg=400", "rig.contact.stiffness_n_per_m=25000"]),
    ("m800_k15000_b30", ["model.mass_kg=800", "rig.contact.stiffness_n_per_m=15000",
                         "rig.contact.damping_ns_per_m=30"]),
    ("m300_k30000_b80", ["model.mass_kg=300", "rig.contact.stiffness_n_per_m=30000",
                         "rig.contact.damping_ns_per_m=80"]),
    ("paper_robot", ["rig.robot.preset=paper"]),
]
GAIN_FIELDS = ("k_eps0", "k_eps1", "k_eps2", "switch_time_s")


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return r


def sets_args(overrides):
    out = []
    for o in overrides:
        out += ["--set", o]
    return out


def scenario(kind, corrected):
    return os.path.join(ROOT, "scenarios", "sits",
                        f"table1_{kind}{'_corrected' if corrected else ''}.yaml")


def tune(hy, work, name, overrides, corrected):
    out = os.path.join(work, f"tune_{name}_{'corr' if corrected else 'unc'}.json")
    if not os.path.exists(out):
        sh([hy, "tune", scenario("scvg", corrected), "--coarse", "--jobs", "2", "--top", "2",
            "--out", out] + sets_args(overrides))
    return json.load(open(out))["best"]


def run(hy, work, tag, scen, overrides):
    d = os.path.join(work, "runs", tag)
    if not os.path.exists(os.path.join(d, "summary.json")):
        sh([hy, "run", scen, "--out", d, "--force"] + sets_args(overrides))
    return json.load(open(os.path.join(d, "summary.json")))


def gains_overrides(best):
    return [f"compensator.{k}={best[k]}" for k in GAIN_FIELDS]


def metrics(summary):
    m = summary["metrics"]
    return {"e_V_peak_mps": m["e_V_peak_mps"], "e_F_peak_N": m["e_F_peak_N"], "e_R": m["e_R"],
            "amplitude_ratio": m["amplitude_ratio"], "diverged": summary["diverged"],
            "energy_ratio": summary["energy_ratio"],
            "k_x_final": summary.get("phase_correction", {}).get("k_x_final_n_per_m")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hyloop", default=os.path.join(ROOT, "build", "bin", "hyloop"))
    ap.add_argument("--work", default=os.path.join(ROOT, "runs", "phase"))
    ap.add_argument("--steps", default="tune,noise,undamped,plots")
    ap.add_argument("--seeds", type=int, default=20)
    a = ap.parse_args()
    hy, work = a.hyloop, a.work
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "study.json")
    study = json.load(open(path)) if os.path.exists(path) else {}
    steps = a.steps.split(",")

    if "tune" in steps:
        res = {}
        for name, ov in SETS:
            row = {}
            for corrected in (False, True):
                best = tune(hy, work, name, ov, corrected)
                tag = f"{name}_{'corr' if corrected else 'unc'}"
                row[tag] = {"gains": {k: best[k] for k in GAIN_FIELDS}}
                for kind in ("scvg", "fgc", "lgc"):
                    s = run(hy, work, f"{tag}_{kind}", scenario(kind, corrected),
                            ov + gains_overrides(best))
                    row[tag][kind] = metrics(s)
            unc, corr = row[f"{name}_unc"]["scvg"], row[f"{name}_corr"]["scvg"]
            row["e_V_factor"] = unc["e_V_peak_mps"] / corr["e_V_peak_mps"]
            res[name] = row
            print(name, "e_V", unc["e_V_peak_mps"], "->", corr["e_V_peak_mps"],
                  "factor", row["e_V_factor"], flush=True)
        study["sets"] = res
        json.dump(study, open(path, "w"), indent=1)

    if "noise" in steps:
        # Sensor noise, 20 seeds: does the correction ever make a stable run diverge?
        rows = []
        for seed in range(1, a.seeds + 1):
            ov = [f"rig.sensor.seed={seed}", "rig.sensor.force_noise_std_n=0.5",
                  "rig.sensor.position_noise_std_m=1e-5", "outputs.samples=false"]
            r = {"seed": seed}
            for corrected in (False, True):
                s = run(hy, work, f"noise_{seed}_{int(corrected)}", scenario("scvg", corrected),
                        ov)
                r["corr" if corrected else "unc"] = metrics(s)
            rows.append(r)
            print("noise seed", seed, r["unc"]["e_V_peak_mps"], r["corr"]["e_V_peak_mps"],
                  flush=True)
        study["noise"] = rows
        json.dump(study, open(path, "w"), indent=1)

    if "undamped" in steps:
        rows = []
        for case in ("undamped_fmd", "undamped_ecc", "undamped_srd", "undamped_all", "ideal"):
            scen = os.path.join(ROOT, "scenarios", "sits", f"{case}.yaml")
            for kind, gains in (("none", []), ("fgc", None)):
                for corrected in (False, True):
                    ov = ["outputs.samples=false", f"compensator.type={kind}"]
                    if kind == "fgc":
                        ov += ["compensator.k_eps0=-80.81500964101288"]
                    if corrected:
                        ov += ["compensator.phase_correction.enabled=true"]
                    s = run(hy, work, f"{case}_{kind}_{int(corrected)}", scen, ov)
                    rows.append({"case": case, "compensator": kind, "corrected": corrected,
                                 **metrics(s),
                                 "growth": s["amplitude_growth_rate_per_s"]})
                    print(rows[-1], flush=True)
        study["undamped"] = rows
        json.dump(study, open(path, "w"), indent=1)

    if "plots" in steps:
        plots(hy, work)


def read_cols(path, names):
    with open(path) as f:
        rd = csv.reader(f)
        head = next(rd)
        idx = [head.index(n) for n in names]
        cols = [[] for _ in names]
        for row in rd:
            for c, i in zip(cols, idx):
                c.append(float(row[i]))
    return cols


def plots(hy, work):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    img = os.path.join(ROOT, "docs", "img")
    d_c = os.path.join(work, "plot_scvg_corrected")
    d_u = os.path.join(work, "plot_scvg")
    sh([hy, "run", scenario("scvg", True), "--out", d_c, "--force", "--set", "outputs.decimation=5"])
    sh([hy, "run", scenario("scvg", False), "--out", d_u, "--force", "--set",
        "outputs.decimation=5"])
    t, kx, ph, v, vi = read_cols(os.path.join(d_c, "samples.csv"),
                                 ["time[s]", "k_x[N/m]", "phase[rad]", "v[m/s]", "v_ideal[m/s]"])
    tu, vu, viu = read_cols(os.path.join(d_u, "samples.csv"), ["time[s]", "v[m/s]",
                                                              "v_ideal[m/s]"])
    fig, ax = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    ax[0].plot(t, kx, color="C3", lw=1.0)
    ax[0].set_ylabel("K_x [N/m]")
    ax[0].set_title("table1_scvg_corrected: online stiffness correction K_x (converges, bounded ±200)")
    ax[1].plot(t, [p * 1e3 for p in ph], color="C4", lw=0.8)
    ax[1].set_ylabel("φ vs twin [mrad]")
    ax[2].plot(tu, [(a - b) * 1e3 for a, b in zip(vu, viu)], color="0.6", lw=0.6,
               label="e_V uncorrected (table1_scvg)")
    ax[2].plot(t, [(a - b) * 1e3 for a, b in zip(v, vi)], color="C0", lw=0.6,
               label="e_V corrected (table1_scvg_corrected)")
    ax[2].set_ylabel("e_V [mm/s]")
    ax[2].set_xlabel("time [s]")
    ax[2].legend(loc="upper right")
    for a_ in ax:
        a_.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(img, "phase_correction_convergence.png"), dpi=110)
    print("wrote docs/img/phase_correction_convergence.png")


if __name__ == "__main__":
    main()
