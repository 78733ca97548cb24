#!/usr/bin/python3
"""Plots for hyloop run directories (`hyloop report` and `hyloop compare`).

Usage:
    report.py RUN_DIR [--out OUT_DIR]
    report.py --compare RUN_A RUN_B [RUN_C ...] --out OUT_DIR

One run: writes the figures the roles of its signals call for (summary.json "signals", each
kind's declaration; hyloop_report/roles.py) into RUN_DIR/plots/ or OUT_DIR: tracking.png
(target vs measured), velocity.png, force.png, power.png, gain_energy.png, recovery.png and
overview.png (the ideal-twin comparisons) when the run has their roles, and signals.png for
recorded columns none of those show; a run naming no roles gets signals.png with every column
against time. A `hyloop montecarlo` directory
(montecarlo.json) gets montecarlo.png and montecarlo_sensitivity.png. Compare: writes
compare_velocity_error.png, compare_recovery.png, compare_force_error.png,
compare_velocity.png (compare_tracking_error.png for tracking runs) and metrics.md into OUT_DIR.
Every file written is printed on stdout, one path per line; notes go to stderr.

Exit codes: 0 success; 2 bad input (missing or malformed file/column; one line on stderr
naming it) or bad usage; 1 failure writing the output.

Only Debian's python3-numpy and python3-matplotlib (Agg backend) are used. The code is the
package hyloop_report next to this file. See docs/report.md for what each plot shows.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    from hyloop_report import figures as _figures
    from hyloop_report.cli import main as _main
    from hyloop_report.compare import compare
    from hyloop_report.io import InputError, Run, read_table
    from hyloop_report.roles import figures_for
    from hyloop_report.metrics import metrics_markdown
    from hyloop_report.plotting import envelope, scaled_unit
except ImportError as e:
    print(f"report.py: error: cannot load the package hyloop_report next to "
          f"{os.path.abspath(__file__)}: {e}", file=sys.stderr)
    sys.exit(1)

# What tests and other scripts use from this module (it was one file before).
__all__ = ["InputError", "Run", "compare", "envelope", "figures_for", "main",
           "metrics_markdown", "read_table", "report_one", "scaled_unit"]


def _save(fig, path, written):
    _figures.save_png(fig, path, written)


def report_one(run, out):
    """The one-run report; saves through this module's _save (tests replace it)."""
    return _figures.report_one(run, out, save=lambda fig, path, written: _save(fig, path, written))


def main(argv=None):
    return _main(argv, report_one=report_one)


if __name__ == "__main__":
    sys.exit(main())
