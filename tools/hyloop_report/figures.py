"""Figure assembly: one builder per figure (PNG) of one run, and report_one, which draws the
figures the roles of the run's signals call for (roles.py) and saves them."""

import os

import numpy as np

from . import roles
from .io import InputError, note
from .panels import (panel_cycles, panel_ef, panel_energy, panel_eps, panel_ev, panel_force,
                     panel_gain_split, panel_kh, panel_power, panel_recovery_both,
                     panel_velocity, needs_zoom, split_axes)
from .plotting import QUANTITY, ZOOM, blank, figure, fmt, lines
from .plotting import save as save_png

def recovery_figure(runs_styles, title, legend=None, w=10):
    """e_R and amplitude ratio per cycle; a right-hand zoom column on 1 ± 3 % if needed."""
    runs = [r for r, _, _ in runs_styles]
    zoom = needs_zoom(runs, ("e_R", "amplitude_ratio"))
    ncols = 2 if zoom else 1
    fig, ax = figure(2, ncols, w * (1.6 if zoom else 1.0), 6.5, sharex=True)
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


def tracking_figure(run, desired, measured):
    """Desired vs measured columns (whole run and a 1 s zoom at the largest desired value) and
    the error."""
    t, d, m = run.t, run.cols[desired], run.cols[measured]
    fig, ax = figure(3, 1, 10, 9)
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
    ax[2, 0].set_title(f"peak |error| = {fmt(peak, unit)}", fontsize=10)
    fig.suptitle(run.title(f"tracking: {measured} vs {desired}"))
    return fig




def _pair_figure(run, fname, what, top, bottom, need_data=True):
    """Two stacked panels sharing time; None when need_data and neither has data."""
    fig, ax = figure(2, 1, 10, 6.5, sharex=True)
    a = top(ax[0, 0], run)
    b = bottom(ax[1, 0], run)
    if need_data and not (a or b):
        note(f"skipped {fname}: none of its columns are in samples.csv")
        return None
    ax[0, 0].set_xlabel("")
    fig.suptitle(run.title(what))
    return fname, fig


def velocity(run):
    return _pair_figure(run, "velocity.png", "velocity: v vs ideal twin v_i, and e_V",
                        panel_velocity, panel_ev)


def force(run):
    return _pair_figure(run, "force.png", "force: input force F′ vs ideal E, and e_F",
                        panel_force, panel_ef)


def power(run):
    return _pair_figure(run, "power.png", "power and energy vs ideal twin",
                        panel_power, panel_energy)


def gain_energy(run):
    # Saved even when both are zero: the panels say so (a compensator that never acted).
    return _pair_figure(run, "gain_energy.png", "compensation gain K_h and observed energy ε_h",
                        panel_kh, panel_eps, need_data=False)


def recovery(run):
    if run.cycles is None:
        note("skipped recovery.png: no cycles.csv")
        return None
    return "recovery.png", recovery_figure(
        [(run, None, "C0")], run.title("per-cycle recovery (band: [0.995, 1.005])"))


def overview(run):
    """2×3 dashboard."""
    fig, ax = figure(2, 3, 18, 9)
    drawn = [
        panel_velocity(ax[0, 0], run), panel_ev(ax[0, 1], run), panel_ef(ax[0, 2], run),
        panel_energy(ax[1, 0], run), panel_gain_split(split_axes(fig, ax[1, 1]), run),
        panel_recovery_both(ax[1, 2], run) if run.cycles is not None
        else (blank(ax[1, 2], "no cycles.csv"), False)[1],
    ]
    if not any(drawn):
        return None
    fig.suptitle(run.title("overview"), fontsize=14)
    return "overview.png", fig


def tracking(run):
    return "tracking.png", tracking_figure(run, run.role("target"), run.role("measured"))


def _signals_figure(run, names, title, max_groups):
    """The columns `names` against time, one axes per unit (at most max_groups)."""
    groups = {}
    for n in names:
        groups.setdefault(run.unit(n), []).append(n)
    keys = list(groups)[:max_groups]
    if len(groups) > max_groups:
        note(f"signals.png: {len(groups) - max_groups} more unit groups not drawn")
    fig, ax = figure(len(keys), 1, 10, 2.4 * len(keys) + 0.8, sharex=True)
    for i, u in enumerate(keys):
        names_u = groups[u]
        qty = QUANTITY.get(u) if len(names_u) > 2 else None
        lines(ax[i, 0], run.t, [(run.cols[n], n, {}) for n in names_u],
              qty or ", ".join(names_u), u)
        if i < len(keys) - 1:
            ax[i, 0].set_xlabel("")
    fig.suptitle(run.title(title))
    return "signals.png", fig


def signals(run):
    """Anything recorded that the twin figures do not show, grouped by unit."""
    shown = roles.shown(run)
    others = [n for n in run.cols if n not in shown]
    if not others:
        return None
    return _signals_figure(run, others, "other recorded signals", 8)


def all_signals(run):
    """Generic: every recorded column against time, grouped by unit, all groups."""
    names = [n for n in run.cols if n != "time"]
    if not names:
        return None
    return _signals_figure(run, names, "recorded signals", len(names))


# Figure name (roles.NEEDS) -> builder(run) returning (file name, Figure) or None.
FIGURES = {
    "tracking": tracking, "velocity": velocity, "force": force, "power": power,
    "gain_energy": gain_energy, "recovery": recovery, "overview": overview,
    "signals": signals, "all_signals": all_signals,
}


def report_one(run, out, save=save_png):
    """Draws and saves the figures the run's signal roles call for; returns the paths written."""
    written = []
    for name in roles.figures_for(run):
        made = FIGURES[name](run)
        if made is not None:
            fname, fig = made
            save(fig, os.path.join(out, fname), written)
    if not written:
        raise InputError(f"{os.path.join(run.path, 'samples.csv')}: "
                         "no plottable columns besides time[s]")
    return written
