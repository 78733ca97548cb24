"""Panels: one function per panel. Each draws on the axes it is given and returns True when
it drew data, False when it drew a "not available" note instead. Signals are read by the role
the run's kind gave them (Run.role / Run.role_col, summary.json "signals"), never by a kind's
column names."""

import numpy as np

from .io import note
from .plotting import (BAND, HYBRID_STYLE, IDEAL_STYLE, ZOOM, blank, fmt, lines,
                       missing_msg, peak_in_window, scaled_unit, shade_window)

def _twin_panel(ax, run, hybrid, twin, quantity, default_unit, color, title):
    """A hybrid signal (wide light band) and its ideal twin (thin dark line) on one axis.
    hybrid, twin: (role, legend label)."""
    (h, h_label), (i, i_label) = hybrid, twin
    ok = lines(ax, run.t, [
        (run.role_col(h), h_label, dict(HYBRID_STYLE, color=color)),
        (run.role_col(i), i_label, IDEAL_STYLE),
    ], quantity, run.role_unit(h, run.role_unit(i, default_unit)))
    if not ok:
        blank(ax, missing_msg(run, h, i))
    ax.set_title(title, fontsize=10)
    return ok


def panel_velocity(ax, run):
    return _twin_panel(ax, run, ("velocity", "v (hybrid simulation)"),
                       ("velocity_ideal", "v_i (ideal twin)"),
                       "velocity", "m/s", "C0", "velocity vs ideal twin")


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
        (fmt(peak * k, u) if peak is not None else "n/a") + f" ({src})"
    ax.set_title(txt, fontsize=9)
    ax.legend(loc="best", fontsize=8, framealpha=0.85)
    return True


def panel_ev(ax, run):
    return _error_panel(ax, run, run.role_diff("velocity", "velocity_ideal"), "e_V = v − v_i",
                        run.role_unit("velocity", "m/s"), "e_V_peak_mps",
                        missing_msg(run, "velocity", "velocity_ideal"))


def panel_force(ax, run):
    return _twin_panel(ax, run, ("force_input", "F′ (input force of the dynamic model)"),
                       ("force_ideal", "E (ideal twin force)"), "force", "N", "C1",
                       "input force vs ideal")


def panel_ef(ax, run):
    return _error_panel(ax, run, run.role_diff("force_ideal", "force_input"), "e_F = E − F′",
                        run.role_unit("force_ideal", "N"), "e_F_peak_N",
                        missing_msg(run, "force_ideal", "force_input"))


def panel_power(ax, run):
    return _twin_panel(ax, run, ("power", "P (hybrid simulation)"),
                       ("power_ideal", "P_i (ideal twin)"), "power", "W", "C2", "power vs ideal")


def panel_energy(ax, run):
    er = run.summary.get("energy_ratio")
    title = "energy vs ideal"
    if isinstance(er, (int, float)):
        title += f"  (energy ratio last/first cycle: {er:.4g})"
    return _twin_panel(ax, run, ("energy", "energy (hybrid simulation)"),
                       ("energy_ideal", "energy (ideal twin)"), "energy", "J", "C4", title)


def _gain_like(ax, run, role, sym, desc, color):
    y = run.role_col(role)
    if y is None:
        blank(ax, f"{sym}: {missing_msg(run, role)}")
        ax.set_title(desc, fontsize=10)
        return False
    if np.all(y == 0):
        comp = run.summary.get("compensator")
        extra = f" (compensator: {comp})" if comp else ""
        blank(ax, f"{sym} is zero throughout this run{extra}: panel skipped")
        ax.set_title(desc, fontsize=10)
        return False
    lines(ax, run.t, [(y, None, {"color": color})], sym, run.role_unit(role, ""))
    ax.set_title(desc, fontsize=10)
    return True


def panel_kh(ax, run):
    return _gain_like(ax, run, "gain", "K_h", "compensation gain K_h (cf. paper Fig. 16)", "C5")


def panel_eps(ax, run):
    return _gain_like(ax, run, "observed_energy", "ε_h",
                      "observed energy ε_h (cf. paper Fig. 15)", "C6")


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


