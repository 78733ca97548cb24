#!/usr/bin/python3
"""Plots for hyloop run directories (`hyloop report` and `hyloop compare`).

Usage:
    report.py RUN_DIR [--out OUT_DIR]
    report.py --compare RUN_A RUN_B [RUN_C ...] --out OUT_DIR

One run: writes velocity.png, force.png, power.png, gain_energy.png, recovery.png,
overview.png (and signals.png for recorded columns none of those show) into RUN_DIR/plots/
or OUT_DIR. Compare: writes compare_velocity_error.png, compare_recovery.png,
compare_force_error.png, compare_velocity.png and metrics.md into OUT_DIR.
Every file written is printed on stdout, one path per line; notes go to stderr.

Exit codes: 0 success; 2 bad input (missing or malformed file/column; one line on stderr
naming it) or bad usage; 1 failure writing the output.

Only Debian's python3-numpy and python3-matplotlib (Agg backend) are used.
See docs/report.md for what each plot shows.
"""

import argparse
import json
import math
import os
import re
import sys
import warnings

import numpy as np
import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402  (after selecting the backend)

DPI = 150
MAX_POINTS = 4000          # points per plotted line after min/max envelope decimation
METRIC_WINDOW_S = 5.0      # DESIGN.md §7: peaks over the final 5 s (summary metrics.window_s
                           # when the run says otherwise: a shorter run uses all of it)
BAND = (0.995, 1.005)      # ±0.5 % band for e_R and the amplitude ratio
ZOOM = 0.03                # per-cycle zoom panels show 1 ± 3 % when a series leaves that range
OUTSIDE = {"loc": "upper left", "bbox_to_anchor": (1.005, 1.0), "fontsize": 8,
           "framealpha": 0.85}   # legend right of the axes (compare plots)
# A signal and its ideal twin on one axis: the hybrid simulation as a wide light band, the twin
# as a thin dark line on top, so both stay visible where they coincide.
HYBRID_STYLE = {"lw": 2.4, "alpha": 0.45, "zorder": 2}
IDEAL_STYLE = {"color": "k", "lw": 0.7, "alpha": 0.9, "zorder": 3}
PROG = "report.py"

# Columns shown by the dedicated plots; anything else recorded goes into signals.png.
SHOWN = {"time", "v", "v_ideal", "f_input", "f_ideal", "power", "power_ideal",
         "energy", "energy_ideal", "k_h", "eps_h"}


class InputError(Exception):
    """Bad input: reported as one line and exit code 2."""


def note(msg):
    print(f"{PROG}: note: {msg}", file=sys.stderr)


# --------------------------------------------------------------------------- reading

_HEADER_RE = re.compile(r"^\s*([^\[\]]*?)\s*\[(.*)\]\s*$")


def _parse_header(path):
    try:
        with open(path, "r", encoding="utf-8") as f:
            line = f.readline()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    line = line.rstrip("\r\n")
    if not line.strip():
        raise InputError(f"{path}: empty file (expected a header of name[unit] columns)")
    names, units, usecols = [], [], []
    for i, cell in enumerate(line.split(",")):
        cell = cell.strip().strip('"')
        if not cell:
            continue  # tolerate a trailing comma
        m = _HEADER_RE.match(cell)
        name, unit = (m.group(1), m.group(2).strip()) if m else (cell, "")
        if name in names:
            note(f"{path}: duplicate column '{cell}', using the first one")
            continue
        names.append(name)
        units.append(unit)
        usecols.append(i)
    return names, units, usecols


def read_table(path, required=(), allow_empty=False):
    """Read a `name[unit]` CSV. Returns (cols: name -> 1-D array, units: name -> unit)."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: missing file")
    names, units, usecols = _parse_header(path)
    for r in required:
        if r not in names:
            raise InputError(f"{path}: missing column '{r}' (header has: {', '.join(names)})")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # empty-file warning; handled below
            data = np.loadtxt(path, delimiter=",", skiprows=1, usecols=usecols,
                              ndmin=2, dtype=np.float64, comments=None)
    except (ValueError, IndexError) as e:
        msg = " ".join(str(e).split())
        raise InputError(f"{path}: malformed data: {msg}")
    if data.shape[0] == 0 and not allow_empty:
        raise InputError(f"{path}: no data rows")
    if data.shape[0] == 0:
        data = np.zeros((0, len(names)))
    cols = {n: data[:, i] for i, n in enumerate(names)}
    return cols, dict(zip(names, units))


class Run:
    def __init__(self, path):
        self.path = path
        if not os.path.isdir(path):
            raise InputError(f"{path}: not a run directory (does not exist)")
        self.dirname = os.path.basename(os.path.normpath(os.path.abspath(path)))
        self.summary = {}
        spath = os.path.join(path, "summary.json")
        if os.path.isfile(spath):
            try:
                with open(spath, "r", encoding="utf-8") as f:
                    self.summary = json.load(f)
            except (OSError, ValueError) as e:
                raise InputError(f"{spath}: malformed JSON: {' '.join(str(e).split())}")
            if not isinstance(self.summary, dict):
                raise InputError(f"{spath}: malformed: expected a JSON object")
        else:
            note(f"{spath}: missing; titles use the directory name, no metrics")
        self.cols, self.units = read_table(os.path.join(path, "samples.csv"), required=("time",))
        self.t = self.cols["time"]
        self.cycles, self.cycle_units = None, {}
        cpath = os.path.join(path, "cycles.csv")
        if os.path.isfile(cpath):
            self.cycles, self.cycle_units = read_table(cpath, allow_empty=True)
        else:
            note(f"{cpath}: missing; no per-cycle plots for this run")
        scen = self.summary.get("scenario")
        self.label = str(scen) if scen not in (None, "") else self.dirname
        self.diverged = bool(self.summary.get("diverged", False))

    def has(self, *names):
        return all(n in self.cols for n in names)

    def unit(self, name, default=""):
        return self.units.get(name, default)

    def diff(self, a, b):
        """a - b at full resolution, or None when a column is missing."""
        if not self.has(a, b):
            return None
        return self.cols[a] - self.cols[b]

    def metric(self, key):
        m = self.summary.get("metrics")
        if isinstance(m, dict) and isinstance(m.get(key), (int, float)):
            return float(m[key])
        return None

    def title(self, what):
        s = f"{self.label}: {what}"
        if self.diverged:
            s += "  [DIVERGED]"
        return s

    def window(self):
        """The metric window in s: the summary's metrics.window_s, else DESIGN's 5 s."""
        w = self.metric("window_s")
        return w if w is not None and w > 0 else METRIC_WINDOW_S

    def window_start(self):
        if self.t.size == 0:
            return None
        return float(np.nanmax(self.t)) - self.window()


# --------------------------------------------------------------------------- decimation

def envelope(t, y, max_points=MAX_POINTS):
    """Min/max-per-bucket decimation for plotting.

    Keeps, for each bucket of consecutive samples, the sample with the smallest and the one
    with the largest value (in time order), so every peak and trough of the full series is
    drawn exactly; only samples strictly inside a bucket's range are dropped.
    Non-finite values are plotted as gaps (NaN).
    """
    t = np.asarray(t, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    finite = np.isfinite(y)
    if not finite.all():
        y = np.where(finite, y, np.nan)
    if n <= max_points:
        return t, y
    nb = max(1, max_points // 2)
    size = int(math.ceil(n / nb))
    lo_src = np.where(finite, y, np.inf)
    hi_src = np.where(finite, y, -np.inf)
    m = (n // size) * size
    idx = []
    if m:
        base = np.arange(m // size) * size
        imin = np.argmin(lo_src[:m].reshape(-1, size), axis=1) + base
        imax = np.argmax(hi_src[:m].reshape(-1, size), axis=1) + base
        idx.append(np.minimum(imin, imax))
        idx.append(np.maximum(imin, imax))
    if m < n:
        idx.append(np.array([m + int(np.argmin(lo_src[m:])), m + int(np.argmax(hi_src[m:]))]))
    keep = np.unique(np.concatenate(idx + [np.array([0, n - 1])]))
    return t[keep], y[keep]


# --------------------------------------------------------------------------- units, panels

_PREFIX = {-9: "n", -6: "µ", -3: "m", 0: "", 3: "k", 6: "M"}
_PREFIXABLE = {"m", "N", "J", "W", "s", "rad", "Pa", "V", "A", "Hz", "Nm", "N·m"}


_QUANTITY = {"m": "displacement", "m/s": "velocity", "m/s^2": "acceleration", "N": "force",
             "J": "energy", "W": "power", "s": "time", "rad": "angle", "V": "voltage"}


def _pretty(unit):
    return unit.replace("*", "·")


def scaled_unit(unit, arrays):
    """Pick an engineering prefix so tick labels stay short. Returns (factor, label unit)."""
    u = _pretty(unit or "")
    if not u or u in ("-", "1"):
        return 1.0, u or "-"
    peak = 0.0
    for a in arrays:
        if a is None or a.size == 0:
            continue
        a = a[np.isfinite(a)]
        if a.size:
            peak = max(peak, float(np.max(np.abs(a))))
    if peak == 0.0 or not math.isfinite(peak):
        return 1.0, u
    e = int(math.floor(math.log10(peak) / 3.0)) * 3
    e = max(-9, min(6, e))
    if e == 0:
        return 1.0, u
    first = re.split(r"[·/^]", u, maxsplit=1)[0]
    if first in _PREFIXABLE:
        return 10.0 ** (-e), _PREFIX[e] + u
    return 10.0 ** (-e), f"×10^{e} {u}"


def blank(ax, msg):
    ax.text(0.5, 0.5, msg, ha="center", va="center", transform=ax.transAxes,
            color="0.35", fontsize=9, wrap=True)
    # Hide ticks on this axes only (set_xticks would also clear a shared x axis).
    ax.tick_params(axis="both", which="both", bottom=False, left=False, labelbottom=False,
                   labelleft=False)


def lines(ax, t, series, quantity, unit, xlabel="time [s]"):
    """series: list of (y or None, label, kwargs). Draws the envelope of each, scaled."""
    present = [(y, lab, kw) for (y, lab, kw) in series if y is not None]
    if not present:
        return False
    k, u = scaled_unit(unit, [y for y, _, _ in present])
    for y, lab, kw in present:
        tt, yy = envelope(t, y)
        style = {"lw": 0.8}
        style.update(kw)
        ax.plot(tt, yy * k, label=lab, **style)
    ax.set_ylabel(f"{quantity} [{u}]")
    ax.set_xlabel(xlabel)
    ax.grid(True, alpha=0.3)
    if len(present) > 1 or present[0][1]:
        ax.legend(loc="best", fontsize=8, framealpha=0.85)
    return True


def missing_msg(run, *names):
    absent = [n for n in names if n not in run.cols]
    return "not recorded in samples.csv: " + ", ".join(absent)


def shade_window(ax, run):
    ws = run.window_start()
    if ws is not None and ws > float(run.t[0]):
        ax.axvspan(ws, float(np.nanmax(run.t)), color="0.85", alpha=0.5, lw=0,
                   label=f"final {run.window():g} s (metric window)")


def peak_in_window(run, y):
    ws = run.window_start()
    if y is None or ws is None:
        return None
    sel = y[run.t >= ws]
    sel = sel[np.isfinite(sel)]
    return float(np.max(np.abs(sel))) if sel.size else None


def _fmt(x, unit=""):
    if x is None:
        return "n/a"
    return f"{x:.4g} {unit}".strip()


# --------------------------------------------------------------------------- panel builders
# Each returns True when it drew data, False when it drew a "not available" note instead.

def panel_velocity(ax, run):
    ok = lines(ax, run.t, [
        (run.cols.get("v"), "v (hybrid simulation)", dict(HYBRID_STYLE, color="C0")),
        (run.cols.get("v_ideal"), "v_i (ideal twin)", IDEAL_STYLE),
    ], "velocity", run.unit("v", run.unit("v_ideal", "m/s")))
    if not ok:
        blank(ax, missing_msg(run, "v", "v_ideal"))
    ax.set_title("velocity vs ideal twin", fontsize=10)
    return ok


def _error_panel(ax, run, y, sym, unit, metric_key, missing):
    if y is None:
        blank(ax, missing)
        ax.set_title(f"{sym}", fontsize=10)
        return False
    shade_window(ax, run)
    lines(ax, run.t, [(y, None, {"color": "C3"})], sym, unit)
    peak = run.metric(metric_key)
    src = "summary"
    if peak is None:
        peak, src = peak_in_window(run, y), "computed"
    k, u = scaled_unit(unit, [y])
    short = sym.split(" =")[0]
    txt = f"{sym};  peak |{short}| in final {run.window():g} s: " + \
        (_fmt(peak * k, u) if peak is not None else "n/a") + f" ({src})"
    ax.set_title(txt, fontsize=9)
    ax.legend(loc="best", fontsize=8, framealpha=0.85)
    return True


def panel_ev(ax, run):
    return _error_panel(ax, run, run.diff("v", "v_ideal"), "e_V = v − v_i",
                        run.unit("v", "m/s"), "e_V_peak_mps", missing_msg(run, "v", "v_ideal"))


def panel_force(ax, run):
    ok = lines(ax, run.t, [
        (run.cols.get("f_input"), "F′ (input force of the dynamic model)",
         dict(HYBRID_STYLE, color="C1")),
        (run.cols.get("f_ideal"), "E (ideal twin force)", IDEAL_STYLE),
    ], "force", run.unit("f_input", run.unit("f_ideal", "N")))
    if not ok:
        blank(ax, missing_msg(run, "f_input", "f_ideal"))
    ax.set_title("input force vs ideal", fontsize=10)
    return ok


def panel_ef(ax, run):
    return _error_panel(ax, run, run.diff("f_ideal", "f_input"), "e_F = E − F′",
                        run.unit("f_ideal", "N"), "e_F_peak_N",
                        missing_msg(run, "f_ideal", "f_input"))


def panel_power(ax, run):
    ok = lines(ax, run.t, [
        (run.cols.get("power"), "P (hybrid simulation)", dict(HYBRID_STYLE, color="C2")),
        (run.cols.get("power_ideal"), "P_i (ideal twin)", IDEAL_STYLE),
    ], "power", run.unit("power", run.unit("power_ideal", "W")))
    if not ok:
        blank(ax, missing_msg(run, "power", "power_ideal"))
    ax.set_title("power vs ideal", fontsize=10)
    return ok


def panel_energy(ax, run):
    ok = lines(ax, run.t, [
        (run.cols.get("energy"), "energy (hybrid simulation)", dict(HYBRID_STYLE, color="C4")),
        (run.cols.get("energy_ideal"), "energy (ideal twin)", IDEAL_STYLE),
    ], "energy", run.unit("energy", run.unit("energy_ideal", "J")))
    if not ok:
        blank(ax, missing_msg(run, "energy", "energy_ideal"))
    er = run.summary.get("energy_ratio")
    t = "energy vs ideal"
    if isinstance(er, (int, float)):
        t += f"  (energy ratio last/first cycle: {er:.4g})"
    ax.set_title(t, fontsize=10)
    return ok


def _gain_like(ax, run, name, sym, desc, color):
    y = run.cols.get(name)
    if y is None:
        blank(ax, f"{sym}: {missing_msg(run, name)}")
        ax.set_title(desc, fontsize=10)
        return False
    if np.all(y == 0):
        comp = run.summary.get("compensator")
        extra = f" (compensator: {comp})" if comp else ""
        blank(ax, f"{sym} is zero throughout this run{extra}: panel skipped")
        ax.set_title(desc, fontsize=10)
        return False
    lines(ax, run.t, [(y, None, {"color": color})], sym, run.unit(name))
    ax.set_title(desc, fontsize=10)
    return True


def panel_kh(ax, run):
    return _gain_like(ax, run, "k_h", "K_h", "compensation gain K_h (cf. paper Fig. 16)", "C5")


def panel_eps(ax, run):
    return _gain_like(ax, run, "eps_h", "ε_h", "observed energy ε_h (cf. paper Fig. 15)", "C6")


def _cycle_axis(run):
    c = run.cycles
    n = next(iter(c.values())).size if c else 0
    x = c.get("cycle") if c else None
    if x is None:
        x = np.arange(1, n + 1, dtype=float)
    return x


def panel_cycles(ax, runs_styles, name, sym, desc, zoom=False, legend=None):
    """runs_styles: list of (run, label, color). Per-cycle series with the ±0.5 % band.

    zoom=True limits the y axis to 1 ± ZOOM and marks series that leave it as off scale.
    """
    drawn = False
    reasons = []
    for run, lab, color in runs_styles:
        if run.cycles is None:
            reasons.append(f"{run.label}: no cycles.csv")
            continue
        y = run.cycles.get(name)
        if y is None:
            reasons.append(f"{run.label}: cycles.csv has no column '{name}'")
            continue
        if y.size == 0:
            reasons.append(f"{run.label}: no complete cycle")
            continue
        x = _cycle_axis(run)
        lab = sym if lab is None else lab
        if zoom:
            fin = y[np.isfinite(y)]
            if fin.size and np.max(np.abs(fin - 1.0)) > ZOOM:
                lab = f"{lab} (partly off scale)"
        ax.plot(x, y, marker="o", ms=2.5, lw=0.9, color=color, label=lab)
        drawn = True
    if not drawn:
        blank(ax, "; ".join(reasons) or "no data")
        ax.set_title(desc, fontsize=10)
        return False
    ax.axhspan(BAND[0], BAND[1], color="C2", alpha=0.15, lw=0,
               label=f"[{BAND[0]:g}, {BAND[1]:g}] (±0.5 %)")
    ax.axhline(1.0, color="C2", lw=0.8, ls="--")
    if zoom:
        ax.set_ylim(1.0 - ZOOM, 1.0 + ZOOM)
    ax.set_xlabel("cycle [-]")
    ax.set_ylabel(f"{sym} [-]")
    ax.grid(True, alpha=0.3)
    ax.legend(**(legend or {"loc": "best", "fontsize": 8, "framealpha": 0.85}))
    ax.set_title(desc, fontsize=10)
    if not zoom:
        for r in reasons:
            note(r)
    return True


def needs_zoom(runs, names):
    """True when some per-cycle series leaves 1 ± ZOOM (so the band is unreadable) while
    another stays mostly inside it (so a zoom on the band shows something)."""
    leaves = stays = False
    for run in runs:
        for n in names:
            y = run.cycles.get(n) if run.cycles is not None else None
            if y is None or not y.size:
                continue
            fin = y[np.isfinite(y)]
            if not fin.size:
                continue
            inside = np.abs(fin - 1.0) <= ZOOM
            leaves |= not inside.all()
            stays |= inside.mean() >= 0.5
    return leaves and stays


def recovery_figure(runs_styles, title, legend=None, w=10):
    """e_R and amplitude ratio per cycle; a right-hand zoom column on 1 ± 3 % if needed."""
    runs = [r for r, _, _ in runs_styles]
    zoom = needs_zoom(runs, ("e_R", "amplitude_ratio"))
    ncols = 2 if zoom else 1
    fig, ax = _figure(2, ncols, w * (1.6 if zoom else 1.0), 6.5, sharex=True)
    for col in range(ncols):
        z = col == 1
        suffix = f" — zoom 1 ± {ZOOM * 100:g} %" if z else ""
        panel_cycles(ax[0, col], runs_styles, "e_R", "e_R",
                     "vibration recovery coefficient e_R per cycle (cf. Fig. 13)" + suffix,
                     zoom=z, legend=legend if (z or not zoom) else None)
        panel_cycles(ax[1, col], runs_styles, "amplitude_ratio", "amplitude ratio",
                     "amplitude ratio max|v| / max|v_i| per cycle" + suffix,
                     zoom=z, legend=legend if (z or not zoom) else None)
        ax[0, col].set_xlabel("")
    fig.suptitle(title)
    return fig


def panel_recovery_both(ax, run):
    """e_R and the amplitude ratio on one axis with the band (overview)."""
    desc = "e_R and amplitude ratio per cycle"
    c = run.cycles
    if c is None:
        blank(ax, "no cycles.csv")
        ax.set_title(desc, fontsize=10)
        return False
    series = [(n, lab, col, mk) for n, lab, col, mk in
              (("e_R", "e_R", "C0", "o"), ("amplitude_ratio", "amplitude ratio", "C1", "s"))
              if n in c and c[n].size]
    if not series:
        blank(ax, "cycles.csv: no e_R / amplitude_ratio values")
        ax.set_title(desc, fontsize=10)
        return False
    x = _cycle_axis(run)
    for n, lab, col, mk in series:
        ax.plot(x, c[n], marker=mk, ms=2.5, lw=0.9, color=col, label=lab)
    ax.axhspan(BAND[0], BAND[1], color="C2", alpha=0.15, lw=0,
               label=f"[{BAND[0]:g}, {BAND[1]:g}] (±0.5 %)")
    ax.axhline(1.0, color="C2", lw=0.8, ls="--")
    ax.set_xlabel("cycle [-]")
    ax.set_ylabel("ratio [-]")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8, framealpha=0.85)
    ax.set_title(desc, fontsize=10)
    return True


def split_axes(fig, ax):
    """Two axes stacked in the place of `ax`, sharing x: a dense trace in one cannot hide the
    line in the other (as ε_h hid K_h on a twin axis)."""
    spec = ax.get_subplotspec().subgridspec(2, 1)
    ax.remove()
    top = fig.add_subplot(spec[0])
    return top, fig.add_subplot(spec[1], sharex=top)


def panel_gain_split(axes, run):
    """K_h above ε_h (overview)."""
    top, bottom = axes
    a = panel_kh(top, run)
    b = panel_eps(bottom, run)
    top.set_xlabel("")
    top.tick_params(labelbottom=False)
    return a or b


# --------------------------------------------------------------------------- figures

def _figure(nrows, ncols, w, h, sharex=False):
    fig = Figure(figsize=(w, h), dpi=DPI, layout="constrained")
    axes = fig.subplots(nrows, ncols, sharex=sharex, squeeze=False)
    return fig, axes


def _save(fig, path, written):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=DPI)
    written.append(path)


# (desired, measured) pairs of tracking experiments (RHT, FCU): tracking.png shows them.
TRACKING_PAIRS = [("d_desired", "d_measured"), ("n_ideal", "n"), ("x_c", "x_m")]


def tracking_figure(run, desired, measured):
    """Desired vs measured (whole run and a 1 s zoom at the largest desired value) and error."""
    t, d, m = run.t, run.cols[desired], run.cols[measured]
    fig, ax = _figure(3, 1, 10, 9)
    unit = run.unit(desired)
    lines(ax[0, 0], t, [(d, desired, {}), (m, measured, {"linestyle": "--"})],
          "signal", unit)
    finite = np.isfinite(d)
    k = int(np.nanargmax(np.abs(np.where(finite, d, 0.0)))) if finite.any() else 0
    zoom = (t >= t[k] - 0.5) & (t <= t[k] + 0.5)
    if zoom.sum() >= 2:
        style = {"marker": "."} if zoom.sum() <= 200 else {}
        lines(ax[1, 0], t[zoom], [(d[zoom], desired, style),
                                  (m[zoom], measured, dict(style, linestyle="--"))], "zoom (1 s)", unit)
    else:
        blank(ax[1, 0], "run too short to zoom")
    err = m - d
    lines(ax[2, 0], t, [(err, f"{measured} − {desired}", {"color": "C3"})], "error", unit)
    peak = np.nanmax(np.abs(err)) if np.isfinite(err).any() else float("nan")
    ax[2, 0].set_title(f"peak |error| = {_fmt(peak, unit)}", fontsize=10)
    fig.suptitle(run.title(f"tracking: {measured} vs {desired}"))
    return fig


def report_one(run, out):
    written = []
    for desired, measured in TRACKING_PAIRS:
        if run.has(desired) and run.has(measured):
            _save(tracking_figure(run, desired, measured),
                  os.path.join(out, "tracking.png"), written)
            break

    specs = [
        ("velocity.png", "velocity: v vs ideal twin v_i, and e_V", panel_velocity, panel_ev),
        ("force.png", "force: input force F′ vs ideal E, and e_F", panel_force, panel_ef),
        ("power.png", "power and energy vs ideal twin", panel_power, panel_energy),
        ("gain_energy.png", "compensation gain K_h and observed energy ε_h", panel_kh, panel_eps),
    ]
    for fname, what, top, bottom in specs:
        fig, ax = _figure(2, 1, 10, 6.5, sharex=True)
        a = top(ax[0, 0], run)
        b = bottom(ax[1, 0], run)
        if fname == "gain_energy.png" and not (run.has("k_h") or run.has("eps_h")):
            note(f"skipped {fname}: samples.csv records neither k_h nor eps_h")
            continue
        if fname != "gain_energy.png" and not (a or b):
            note(f"skipped {fname}: none of its columns are in samples.csv")
            continue
        ax[0, 0].set_xlabel("")
        fig.suptitle(run.title(what))
        _save(fig, os.path.join(out, fname), written)

    if run.cycles is not None:
        fig = recovery_figure([(run, None, "C0")],
                              run.title("per-cycle recovery (band: [0.995, 1.005])"))
        _save(fig, os.path.join(out, "recovery.png"), written)
    else:
        note("skipped recovery.png: no cycles.csv")

    # Overview: 2×3 dashboard.
    fig, ax = _figure(2, 3, 18, 9)
    drawn = [
        panel_velocity(ax[0, 0], run), panel_ev(ax[0, 1], run), panel_ef(ax[0, 2], run),
        panel_energy(ax[1, 0], run), panel_gain_split(split_axes(fig, ax[1, 1]), run),
        panel_recovery_both(ax[1, 2], run) if run.cycles is not None
        else (blank(ax[1, 2], "no cycles.csv"), False)[1],
    ]
    if any(drawn):
        fig.suptitle(run.title("overview"), fontsize=14)
        _save(fig, os.path.join(out, "overview.png"), written)

    # Anything else that was recorded, grouped by unit (x_cmd vs x_robot, f_meas, f_comp, ...).
    others = [n for n in run.cols if n not in SHOWN]
    if others:
        groups = {}
        for n in others:
            groups.setdefault(run.unit(n), []).append(n)
        keys = list(groups)[:8]
        if len(groups) > 8:
            note(f"signals.png: {len(groups) - 8} more unit groups not drawn")
        fig, ax = _figure(len(keys), 1, 10, 2.4 * len(keys) + 0.8, sharex=True)
        for i, u in enumerate(keys):
            names = groups[u]
            qty = _QUANTITY.get(u) if len(names) > 2 else None
            lines(ax[i, 0], run.t, [(run.cols[n], n, {}) for n in names],
                  qty or ", ".join(names), u)
            if i < len(keys) - 1:
                ax[i, 0].set_xlabel("")
        fig.suptitle(run.title("other recorded signals"))
        _save(fig, os.path.join(out, "signals.png"), written)

    if not written:
        raise InputError(f"{os.path.join(run.path, 'samples.csv')}: "
                         "no plottable columns besides time[s]")
    return written


# --------------------------------------------------------------------------- compare

def _unique_labels(runs):
    base = [r.label for r in runs]
    labels = [f"{b} ({r.dirname})" if base.count(b) > 1 and b != r.dirname else b
              for b, r in zip(base, runs)]
    # Still ambiguous (same dirname in different parents): number them.
    counts = {lab: labels.count(lab) for lab in labels}
    seen = {}
    for i, lab in enumerate(labels):
        if counts[lab] > 1:
            seen[lab] = seen.get(lab, 0) + 1
            labels[i] = f"{lab} #{seen[lab]}"
    return labels


def _overlay_errors(ax, runs, labels, ys, sym, unit, t_from=None):
    """Overlay error series; largest drawn first so smaller ones stay visible on top."""
    items = []
    for i, (run, lab, y) in enumerate(zip(runs, labels, ys)):
        if y is None:
            continue
        t = run.t
        if t_from is not None:
            m = t >= t_from[i]
            t, y = t[m], y[m]
        if y.size == 0:
            continue
        fin = y[np.isfinite(y)]
        items.append((float(np.max(np.abs(fin))) if fin.size else 0.0, i, t, y, lab))
    if not items:
        return False
    k, u = scaled_unit(unit, [it[3] for it in items])
    handles = {}
    for peak, i, t, y, lab in sorted(items, key=lambda it: -it[0]):
        tt, yy = envelope(t, y)
        (h,) = ax.plot(tt, yy * k, lw=0.8, color=f"C{i % 10}", alpha=0.85,
                       label=f"{lab} (peak {peak * k:.3g} {u})")
        handles[i] = h
    ax.set_ylabel(f"{sym} [{u}]")
    ax.set_xlabel("time [s]")
    ax.grid(True, alpha=0.3)
    hs = [handles[i] for i in sorted(handles)]  # legend in run order
    ax.legend(hs, [h.get_label() for h in hs], **OUTSIDE)
    return True


def _compare_error_fig(runs, labels, a, b, sym, unit_of, what, fname, out, written):
    ys = [r.diff(a, b) for r in runs]
    for r, y in zip(runs, ys):
        if y is None:
            note(f"{fname}: {r.label}: {missing_msg(r, a, b)}")
    if all(y is None for y in ys):
        note(f"skipped {fname}: no run records both {a} and {b}")
        return
    unit = next((r.unit(unit_of) for r in runs if r.has(unit_of)), "")
    fig, ax = _figure(2, 1, 11, 7.5)
    _overlay_errors(ax[0, 0], runs, labels, ys, sym, unit)
    ax[0, 0].set_title("whole run (peak over whole run in legend)", fontsize=10)
    starts = [r.window_start() if r.window_start() is not None else 0.0 for r in runs]
    _overlay_errors(ax[1, 0], runs, labels, ys, sym, unit, t_from=starts)
    ax[1, 0].set_title(f"final {_window_text(runs)} of each run (metric window; "
                       "peak in window in legend)", fontsize=10)
    fig.suptitle(f"{what}: " + " vs ".join(labels))
    _save(fig, os.path.join(out, fname), written)


def _window_text(runs):
    """The runs' metric window: "5 s", or "2 s / 5 s" when they differ."""
    ws = []
    for r in runs:
        w = f"{r.window():g} s"
        if w not in ws:
            ws.append(w)
    return " / ".join(ws)


def compare(runs, out):
    os.makedirs(out, exist_ok=True)
    written = []
    labels = _unique_labels(runs)

    # Tracking experiments (RHT, FCU): measured minus desired for every run that records them.
    for desired, measured in TRACKING_PAIRS:
        if any(r.has(desired) and r.has(measured) for r in runs):
            _compare_error_fig(runs, labels, measured, desired, f"{measured} − {desired}",
                               desired, "tracking error", "compare_tracking_error.png", out,
                               written)
            break

    _compare_error_fig(runs, labels, "v", "v_ideal", "e_V = v − v_i", "v",
                       "velocity error e_V (cf. paper Fig. 12)",
                       "compare_velocity_error.png", out, written)

    if any(r.cycles is not None for r in runs):
        styles = [(r, lab, f"C{i % 10}") for i, (r, lab) in enumerate(zip(runs, labels))]
        fig = recovery_figure(styles, "per-cycle recovery: " + " vs ".join(labels),
                              legend=OUTSIDE, w=11)
        _save(fig, os.path.join(out, "compare_recovery.png"), written)
    else:
        note("skipped compare_recovery.png: no run has a cycles.csv")

    _compare_error_fig(runs, labels, "f_ideal", "f_input", "e_F = E − F′", "f_ideal",
                       "input force error e_F (cf. paper Figs. 11, 14)",
                       "compare_force_error.png", out, written)

    # Velocity of each run vs the ideal twin(s): whole run and a zoom on the final second.
    if any(r.has("v") for r in runs):
        fig, ax = _figure(2, 1, 11, 7.5)
        unit = next(r.unit("v") for r in runs if r.has("v"))
        allv = [r.cols[n] for r in runs for n in ("v", "v_ideal") if n in r.cols]
        k, u = scaled_unit(unit, allv)
        twins = []  # distinct ideal twins: (run index, t, v_i)
        for i, r in enumerate(runs):
            if not r.has("v_ideal"):
                continue
            vi = r.cols["v_ideal"]
            if not any(tw[2].shape == vi.shape and np.allclose(tw[2], vi, equal_nan=True)
                       and np.array_equal(tw[1], r.t) for tw in twins):
                twins.append((i, r.t, vi))
        for row, zoom in ((0, False), (1, True)):
            a = ax[row, 0]
            for i, (r, lab) in enumerate(zip(runs, labels)):
                if not r.has("v"):
                    continue
                t, v = r.t, r.cols["v"]
                if zoom:
                    m = t >= float(np.nanmax(t)) - 1.0
                    t, v = t[m], v[m]
                tt, vv = envelope(t, v)
                a.plot(tt, vv * k, lw=0.9, color=f"C{i % 10}", label=lab, alpha=0.9)
            for j, (i, t, vi) in enumerate(twins):
                if zoom:
                    m = t >= float(np.nanmax(t)) - 1.0
                    t, vi = t[m], vi[m]
                tt, vv = envelope(t, vi)
                lab = "v_i (ideal twin)" if len(twins) == 1 else f"v_i of {labels[i]}"
                a.plot(tt, vv * k, lw=1.0, ls="--", color="k" if j == 0 else f"C{i % 10}",
                       label=lab, alpha=0.8)
            a.set_ylabel(f"velocity [{u}]")
            a.set_xlabel("time [s]")
            a.grid(True, alpha=0.3)
            a.legend(**OUTSIDE)
            a.set_title("final 1 s of each run" if zoom else "whole run", fontsize=10)
        fig.suptitle("velocity vs ideal twin: " + " vs ".join(labels))
        _save(fig, os.path.join(out, "compare_velocity.png"), written)
    else:
        note("skipped compare_velocity.png: no run records v")

    path = os.path.join(out, "metrics.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(metrics_markdown(runs, labels, [os.path.basename(p) for p in written]))
    written.append(path)
    return written


# --------------------------------------------------------------------------- metrics.md

_ORDER = ["scenario", "compensator", "diverged", "steps", "duration_s", "wall_time_s",
          "energy_ratio", "metrics.e_F_peak_N", "metrics.e_V_peak_mps", "metrics.e_R",
          "metrics.amplitude_ratio"]
# How to pick the best value of a row: "min" (smallest magnitude) or "one" (closest to 1).
_BEST = {"energy_ratio": "one", "metrics.e_F_peak_N": "min", "metrics.e_V_peak_mps": "min",
         "metrics.e_R": "one", "metrics.amplitude_ratio": "one"}


def _flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _cell(v):
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)):
        s = json.dumps(v)
        return s if len(s) <= 40 else s[:37] + "..."
    return str(v).replace("|", "\\|").replace("\n", " ")


def metrics_markdown(runs, labels, plots):
    flat = [_flatten(r.summary) for r in runs]
    keys = [k for k in _ORDER if any(k in f for f in flat)]
    for f in flat:
        for k in f:
            if k not in keys:
                keys.append(k)
    lines_ = ["# hyloop compare", ""]
    lines_.append("Runs: " + ", ".join(f"`{r.path}`" for r in runs))
    lines_.append("")
    lines_.append("| metric | " + " | ".join(_cell(lab) for lab in labels) + " |")
    lines_.append("|---|" + "---:|" * len(runs))
    lines_.append("| run directory | " + " | ".join(_cell(r.dirname) for r in runs) + " |")
    for k in keys:
        vals = [f.get(k) for f in flat]
        cells = [_cell(v) for v in vals]
        rule = _BEST.get(k)
        nums = [(i, float(v)) for i, v in enumerate(vals)
                if isinstance(v, (int, float)) and not isinstance(v, bool)
                and math.isfinite(float(v))]
        if rule and len(nums) > 1:
            score = (lambda x: abs(x)) if rule == "min" else (lambda x: abs(x - 1.0))
            best = min(score(x) for _, x in nums)
            for i, x in nums:
                if score(x) == best:
                    cells[i] = f"**{cells[i]}**"
        lines_.append(f"| {k} | " + " | ".join(cells) + " |")
    lines_ += ["",
               "Bold: best of the row (smallest peak error; ratio closest to 1). Peaks are the "
               f"largest magnitude over the final {_window_text(runs)} (metrics.window_s); e_R "
               "and amplitude ratio are the per-cycle values farthest from 1 among cycles "
               "ending in that window (DESIGN.md §7).", ""]
    if plots:
        lines_.append("## Plots")
        lines_.append("")
        for p in plots:
            lines_.append(f"![{p}]({p})")
        lines_.append("")
    return "\n".join(lines_)


# --------------------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(
        prog=PROG, description="Plot a hyloop run directory, or compare several runs.")
    ap.add_argument("dirs", nargs="+", metavar="RUN_DIR", help="run directory (or directories "
                    "with --compare)")
    ap.add_argument("--compare", action="store_true",
                    help="overlay several runs; needs at least two RUN_DIRs and --out")
    ap.add_argument("--out", metavar="OUT_DIR",
                    help="output directory (default for one run: RUN_DIR/plots)")
    args = ap.parse_args(argv)
    if args.compare:
        if len(args.dirs) < 2:
            ap.error("--compare needs at least two run directories")
        if not args.out:
            ap.error("--compare needs --out OUT_DIR")
    elif len(args.dirs) != 1:
        ap.error("give one run directory (or use --compare RUN_A RUN_B ... --out OUT_DIR)")

    np.seterr(all="ignore")  # diverged runs carry inf/NaN; they are drawn as gaps
    try:
        runs = [Run(d) for d in args.dirs]
        try:
            if args.compare:
                written = compare(runs, args.out)
            else:
                written = report_one(runs[0], args.out or os.path.join(args.dirs[0], "plots"))
        except OSError as e:
            print(f"{PROG}: error: cannot write output: {e}", file=sys.stderr)
            return 1
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
