"""Which figures a run gets: from the roles its kind gave its signals, never from its name.

Each kind declares once, in C++ (Kind::signal_roles), what its recorded columns mean; the run's
summary.json lists them under "signals" as {"role": "name[unit]"}. A figure is drawn when the run
has the roles it needs:

    tracking.png     target vs measured (how the rig followed what the loop asked)
    velocity.png     velocity vs velocity_ideal, and their difference
    force.png        force_input vs force_ideal, and their difference
    power.png        power vs power_ideal, energy vs energy_ideal
    gain_energy.png  gain and observed_energy (a compensator's)
    recovery.png     per-cycle e_R of cycles.csv, for a run with velocity roles
    overview.png     the velocity, force, energy, gain and recovery panels on one page
    signals.png      every recorded column none of the twin figures above draws

A run whose summary names no roles (a run directory written before they existed, or a kind that
declares none) gets every column against time, with a notice.
"""

from .io import note

# Figure name -> the roles it needs (all of them, or any of them for gain_energy).
NEEDS = (
    ("tracking", ("target", "measured"), all),
    ("velocity", ("velocity", "velocity_ideal"), all),
    ("force", ("force_input", "force_ideal"), all),
    ("power", ("power", "power_ideal"), all),
    ("gain_energy", ("gain", "observed_energy"), any),
    ("recovery", ("velocity", "velocity_ideal"), all),
    ("overview", ("velocity", "velocity_ideal"), all),
)

# The roles the twin figures draw: signals.png leaves their columns out (the tracking pair
# stays in it, beside the other signals).
TWIN_ROLES = ("velocity", "velocity_ideal", "force_input", "force_ideal", "power", "power_ideal",
              "energy", "energy_ideal", "gain", "observed_energy")


def figures_for(run):
    """The figure names a run gets, in the order they are drawn."""
    if not run.roles:
        note(f"{run.path}: summary.json names no signal roles ('signals'): generic panels, "
             "every column against time")
        return ("all_signals",)
    names = [name for name, roles, rule in NEEDS if rule(run.role(r) for r in roles)]
    return tuple(names) + ("signals",)


def shown(run):
    """Columns the twin figures draw (signals.png shows the others)."""
    return {"time"} | {run.role(r) for r in TWIN_ROLES if run.role(r)}
