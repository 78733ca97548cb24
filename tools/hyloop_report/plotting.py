"""Plot helpers shared by the panels: decimation, unit prefixes, axes, figures."""

import math
import os
import re

import numpy as np
import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402  (after selecting the backend)

from .io import open_output, output_dir  # noqa: E402

DPI = 150
MAX_POINTS = 4000          # points per plotted line after min/max envelope decimation
BAND = (0.995, 1.005)      # ±0.5 % band for e_R and the amplitude ratio
ZOOM = 0.03                # per-cycle zoom panels show 1 ± 3 % when a series leaves that range
OUTSIDE = {"loc": "upper left", "bbox_to_anchor": (1.005, 1.0), "fontsize": 8,
           "framealpha": 0.85}   # legend right of the axes (compare plots)
# A signal and its ideal twin on one axis: the hybrid simulation as a wide light band, the twin
# as a thin dark line on top, so both stay visible where they coincide.
HYBRID_STYLE = {"lw": 2.4, "alpha": 0.45, "zorder": 2}
IDEAL_STYLE = {"color": "k", "lw": 0.7, "alpha": 0.9, "zorder": 3}


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


_PREFIX = {-9: "n", -6: "µ", -3: "m", 0: "", 3: "k", 6: "M"}
_PREFIXABLE = {"m", "N", "J", "W", "s", "rad", "Pa", "V", "A", "Hz", "Nm", "N·m"}
QUANTITY = {"m": "displacement", "m/s": "velocity", "m/s^2": "acceleration", "N": "force",
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


def missing_msg(run, *roles):
    """What a panel lacks: the roles (Run.role) no recorded column has."""
    absent = [r for r in roles if run.role_col(r) is None]
    return "no recorded column has the role: " + ", ".join(absent)


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


def fmt(x, unit=""):
    if x is None:
        return "n/a"
    return f"{x:.4g} {unit}".strip()


def figure(nrows, ncols, w, h, sharex=False):
    fig = Figure(figsize=(w, h), dpi=DPI, layout="constrained")
    axes = fig.subplots(nrows, ncols, sharex=sharex, squeeze=False)
    return fig, axes


def save(fig, path, written):
    output_dir(os.path.dirname(path) or ".")
    with open_output(path) as f:
        fig.savefig(f, dpi=DPI, format="png")
    written.append(path)
