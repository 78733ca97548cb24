"""Several runs overlaid (`hyloop compare`): error, recovery and velocity figures, metrics.md."""

import os

import numpy as np

from .figures import recovery_figure
from .io import note, open_output, output_dir
from .metrics import metrics_markdown, window_text
from .plotting import OUTSIDE, envelope, figure, missing_msg, scaled_unit
from .plotting import save as save_png

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
    """Role a minus role b of each run (unit: role unit_of's)."""
    ys = [r.role_diff(a, b) for r in runs]
    for r, y in zip(runs, ys):
        if y is None:
            note(f"{fname}: {r.label}: {missing_msg(r, a, b)}")
    if all(y is None for y in ys):
        note(f"skipped {fname}: no run records both a {a} and a {b}")
        return
    unit = next((r.role_unit(unit_of) for r in runs if r.role(unit_of)), "")
    fig, ax = figure(2, 1, 11, 7.5)
    _overlay_errors(ax[0, 0], runs, labels, ys, sym, unit)
    ax[0, 0].set_title("whole run (peak over whole run in legend)", fontsize=10)
    starts = [r.window_start() if r.window_start() is not None else 0.0 for r in runs]
    _overlay_errors(ax[1, 0], runs, labels, ys, sym, unit, t_from=starts)
    ax[1, 0].set_title(f"final {window_text(runs)} of each run (metric window; "
                       "peak in window in legend)", fontsize=10)
    fig.suptitle(f"{what}: " + " vs ".join(labels))
    save_png(fig, os.path.join(out, fname), written)


def compare(runs, out):
    output_dir(out)
    written = []
    labels = _unique_labels(runs)

    # Runs whose kind names a tracking pair: measured minus target.
    first = next((r for r in runs if r.role("target") and r.role("measured")), None)
    if first is not None:
        sym = f"{first.role('measured')} − {first.role('target')}"
        _compare_error_fig(runs, labels, "measured", "target", sym, "target", "tracking error",
                           "compare_tracking_error.png", out, written)

    _compare_error_fig(runs, labels, "velocity", "velocity_ideal", "e_V = v − v_i", "velocity",
                       "velocity error e_V (cf. paper Fig. 12)",
                       "compare_velocity_error.png", out, written)

    if any(r.cycles is not None for r in runs):
        styles = [(r, lab, f"C{i % 10}") for i, (r, lab) in enumerate(zip(runs, labels))]
        fig = recovery_figure(styles, "per-cycle recovery: " + " vs ".join(labels),
                              legend=OUTSIDE, w=11)
        save_png(fig, os.path.join(out, "compare_recovery.png"), written)
    else:
        note("skipped compare_recovery.png: no run has a cycles.csv")

    _compare_error_fig(runs, labels, "force_ideal", "force_input", "e_F = E − F′",
                       "force_ideal", "input force error e_F (cf. paper Figs. 11, 14)",
                       "compare_force_error.png", out, written)

    _compare_velocity(runs, labels, out, written)

    path = os.path.join(out, "metrics.md")
    with open_output(path, binary=False) as f:
        f.write(metrics_markdown(runs, labels, [os.path.basename(p) for p in written]))
    written.append(path)
    return written


def _distinct_twins(runs):
    """Distinct ideal twins: (run index, t, v_i)."""
    twins = []
    for i, r in enumerate(runs):
        vi = r.role_col("velocity_ideal")
        if vi is None:
            continue
        if not any(tw[2].shape == vi.shape and np.allclose(tw[2], vi, equal_nan=True)
                   and np.array_equal(tw[1], r.t) for tw in twins):
            twins.append((i, r.t, vi))
    return twins


def _compare_velocity(runs, labels, out, written):
    """Velocity of each run vs the ideal twin(s): whole run and a zoom on the final second."""
    if not any(r.role("velocity") for r in runs):
        note("skipped compare_velocity.png: no run records a velocity")
        return
    fig, ax = figure(2, 1, 11, 7.5)
    unit = next(r.role_unit("velocity") for r in runs if r.role("velocity"))
    allv = [c for r in runs for c in (r.role_col("velocity"), r.role_col("velocity_ideal"))
            if c is not None]
    k, u = scaled_unit(unit, allv)
    twins = _distinct_twins(runs)
    for row, zoom in ((0, False), (1, True)):
        a = ax[row, 0]
        for i, (r, lab) in enumerate(zip(runs, labels)):
            if r.role("velocity") is None:
                continue
            t, v = r.t, r.role_col("velocity")
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
    save_png(fig, os.path.join(out, "compare_velocity.png"), written)
