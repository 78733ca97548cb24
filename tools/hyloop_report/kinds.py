"""Which figures each experiment kind gets: one table, KINDS, keyed by summary.json "kind".

A kind names its figures (built in figures.py from the panels in panels.py), the signals its
tracking figure compares (by column name and unit), the columns its dedicated figures show (the
rest go to signals.png) and the columns that identify it when summary.json names no kind
(run directories written before the field existed). An unknown kind gets GENERIC (every column
against time) with a notice, never another kind's figures.
"""

from dataclasses import dataclass

from .io import note


@dataclass(frozen=True)
class Signal:
    name: str   # column name in samples.csv
    unit: str   # the unit it must be recorded in


@dataclass(frozen=True)
class KindPanels:
    figures: tuple            # figure names (figures.FIGURES), in the order they are drawn
    tracking: tuple = ()      # (desired, measured) Signal pair for tracking.png
    shown: frozenset = frozenset({"time"})  # columns the dedicated figures draw
    signature: frozenset = frozenset()      # columns that identify the kind (no "kind" field)


SITS_SHOWN = frozenset({"time", "v", "v_ideal", "f_input", "f_ideal", "power", "power_ideal",
                        "energy", "energy_ideal", "k_h", "eps_h"})

KINDS = {
    "sits": KindPanels(
        figures=("velocity", "force", "power", "gain_energy", "recovery", "overview", "signals"),
        shown=SITS_SHOWN,
        signature=frozenset({"v", "v_ideal", "f_input", "f_ideal"})),
    "rht": KindPanels(
        figures=("tracking", "signals"),
        tracking=(Signal("d_desired", "m"), Signal("d_measured", "m")),
        signature=frozenset({"d_desired", "d_measured"})),
    "fcu": KindPanels(
        figures=("tracking", "signals"),
        tracking=(Signal("n_ideal", "%"), Signal("n", "%")),
        signature=frozenset({"x_c", "x_m", "n", "n_ideal"})),
    # The benchmark's criteria J2/J3 compare the specimen's x_m with the target y1 (floor 1).
    "vrths": KindPanels(
        figures=("tracking", "signals"),
        tracking=(Signal("y1", "m"), Signal("x_m", "m")),
        signature=frozenset({"y1", "r1"})),
}

# Every recorded column against time, grouped by unit.
GENERIC = KindPanels(figures=("all_signals",))


def resolve(run):
    """(kind name or None, KindPanels) for a run: its summary's kind, inferred from the columns
    when the summary names none, GENERIC (with a notice) when the kind is unknown."""
    if run.kind is not None:
        if run.kind in KINDS:
            return run.kind, KINDS[run.kind]
        note(f"unknown kind '{run.kind}' in summary.json (known: {', '.join(KINDS)}): "
             "generic panels, every column against time")
        return run.kind, GENERIC
    matches = [k for k, p in KINDS.items() if p.signature & set(run.cols)]
    if len(matches) == 1:
        note(f"summary.json names no kind; the columns are those of a '{matches[0]}' run")
        return matches[0], KINDS[matches[0]]
    note("summary.json names no kind and the columns match "
         f"{'several kinds' if matches else 'no kind'}: generic panels, every column against time")
    return None, GENERIC


def figures_for(run):
    """The figure names a run gets."""
    return resolve(run)[1].figures


def tracking_pairs():
    """(desired, measured) column names of every kind with a tracking figure (compare)."""
    return [(p.tracking[0].name, p.tracking[1].name) for p in KINDS.values() if p.tracking]
