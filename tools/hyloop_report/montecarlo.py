"""Figures of a Monte Carlo directory (`hyloop montecarlo ... --out DIR`, then `hyloop report DIR`).

montecarlo.png: one panel per metric, each run's value against its run number (a run that
stopped early as a red cross), the mean as a line and mean ± std (sample std, as montecarlo.json
states it) as a band. montecarlo_sensitivity.png, when the runs record their perturbed plant:
Pearson's r of each metric against each plant parameter over the runs ("–" where either is
constant), i.e. which uncertainty moves which criterion.
"""

import math
import os

import numpy as np

from .io import MAX_TABLE_BYTES, InputError, is_run_file, open_run_file, read_json_object
from .plotting import figure

# Unit of a metric from its name's suffix (the summary's naming: J2_percent, peak_..._force_n).
_SUFFIX_UNITS = (("_percent", "%"), ("_ms", "ms"), ("_s", "s"), ("_mm", "mm"), ("_m", "m"),
                 ("_n", "N"), ("_j", "J"))


def is_montecarlo_dir(path):
    return is_run_file(path, "montecarlo.json") and not is_run_file(path, "samples.csv")


def unit_of(metric):
    for suffix, unit in _SUFFIX_UNITS:
        if metric.endswith(suffix):
            return unit
    return ""


def _number(value):
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


class MonteCarlo:
    """montecarlo.json, checked: a non-empty `per_run` list of objects, and `statistics` with a
    numeric mean, std, min and max for each metric."""

    def __init__(self, path):
        self.path = path
        f = os.path.join(path, "montecarlo.json")
        doc = read_json_object(f)
        per_run, stats = doc.get("per_run"), doc.get("statistics")
        if not isinstance(per_run, list) or not per_run or not all(
                isinstance(r, dict) for r in per_run):
            raise InputError(f"{f}: per_run: expected a non-empty list of runs")
        if not isinstance(stats, dict) or not stats:
            raise InputError(f"{f}: statistics: expected an object of metrics")
        for name, s in stats.items():
            if not isinstance(s, dict) or not all(
                    _number(s.get(k)) for k in ("mean", "std", "min", "max")):
                raise InputError(f"{f}: statistics.{name}: expected numeric mean, std, min, max")
        self.scenario = str(doc.get("scenario", os.path.basename(os.path.abspath(path))))
        self.per_run = per_run
        self.stats = stats
        self.metrics = self._ordered(list(stats))
        self.runs = np.array([r.get("run", i + 1) for i, r in enumerate(per_run)], dtype=float)
        self.stopped = np.array([r.get("stop_reason") is not None for r in per_run])

    def _ordered(self, names):
        """The metrics in runs.csv's column order (the kind's order), else as listed."""
        try:
            with open_run_file(self.path, "runs.csv", MAX_TABLE_BYTES) as fh:
                header = fh.readline().strip().split(",")
        except (OSError, InputError, ValueError):
            return names
        ordered = [h for h in header if h in names]
        return ordered + [n for n in names if n not in ordered]

    def values(self, metric):
        return np.array([r[metric] if _number(r.get(metric)) else np.nan for r in self.per_run])

    def plant(self):
        """{parameter: values over the runs} of the numeric `plant` entries, or {}."""
        plants = [r.get("plant") if isinstance(r.get("plant"), dict) else {} for r in self.per_run]
        keys = dict.fromkeys(k for p in plants for k, v in p.items() if _number(v))
        return {k: np.array([p[k] if _number(p.get(k)) else np.nan for p in plants], dtype=float)
                for k in keys}


def pearson(x, y):
    """r over the runs where both are finite; NaN when fewer than 3 or either is constant."""
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3:
        return math.nan
    x, y = x[ok] - x[ok].mean(), y[ok] - y[ok].mean()
    den = math.sqrt(float(np.dot(x, x)) * float(np.dot(y, y)))
    return float(np.dot(x, y)) / den if den > 0 else math.nan


def metrics_figure(mc):
    n = len(mc.metrics)
    ncols = 3 if n > 4 else n
    nrows = math.ceil(n / ncols)
    fig, axes = figure(nrows, ncols, 4.2 * ncols, 2.8 * nrows)
    done = ~mc.stopped
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.set_visible(False)
            continue
        name = mc.metrics[i]
        s, y, unit = mc.stats[name], mc.values(name), unit_of(name)
        ax.axhspan(s["mean"] - s["std"], s["mean"] + s["std"], color="C0", alpha=0.15,
                   label="mean ± std")
        ax.axhline(s["mean"], color="C0", lw=1.2, label="mean")
        ax.plot(mc.runs[done], y[done], "o", color="C0", ms=4, label="run")
        if mc.stopped.any():
            ax.plot(mc.runs[mc.stopped], y[mc.stopped], "x", color="C3", ms=6,
                    label="stopped early")
        ax.set_title(f"{name}: {s['mean']:.4g} ± {s['std']:.2g} {unit}".rstrip())
        ax.set_xlabel("run (perturbed plant)")
        ax.set_ylabel(f"{name} [{unit}]" if unit else name)
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7)
    fig.suptitle(f"{mc.scenario}: {len(mc.per_run)} perturbed runs, "
                 f"{int(mc.stopped.sum())} stopped early")
    return fig


def sensitivity_figure(mc, plant):
    params = list(plant)
    values = [mc.values(m) for m in mc.metrics]
    r = np.array([[pearson(plant[p], y) for p in params] for y in values])
    fig, axes = figure(1, 1, 1.6 * len(params) + 3.0, 0.45 * len(mc.metrics) + 1.8)
    ax = axes[0, 0]
    im = ax.imshow(np.nan_to_num(r), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    for i in range(r.shape[0]):
        for j in range(r.shape[1]):
            ax.text(j, i, "–" if math.isnan(r[i, j]) else f"{r[i, j]:.2f}", ha="center",
                    va="center", fontsize=8)
    ax.set_xticks(range(len(params)), params, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(mc.metrics)), mc.metrics, fontsize=8)
    fig.colorbar(im, ax=ax, label="Pearson r over the runs")
    fig.suptitle(f"{mc.scenario}: each metric against each perturbed plant parameter")
    return fig, r


def report(path, out, save):
    """Draws the Monte Carlo figures of `path` into `out`; returns the paths written."""
    mc = MonteCarlo(path)
    written = []
    save(metrics_figure(mc), os.path.join(out, "montecarlo.png"), written)
    plant = mc.plant()
    if plant:
        save(sensitivity_figure(mc, plant)[0], os.path.join(out, "montecarlo_sensitivity.png"),
             written)
    return written
