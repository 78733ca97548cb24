"""The command line of tools/report.py (`hyloop report` / `hyloop compare`)."""

import argparse
import os
import sys

import numpy as np

from . import figures, montecarlo
from .compare import compare
from .io import PROG, InputError, Run, output_dir


def main(argv=None, report_one=None):
    """report_one: the one-run report (figures.report_one unless given)."""
    report_one = report_one or figures.report_one
    ap = argparse.ArgumentParser(
        prog=PROG, description="Plot a hyloop run directory, or compare several runs.")
    ap.add_argument("dirs", nargs="+", metavar="RUN_DIR", help="run directory (or directories "
                    "with --compare), or a `hyloop montecarlo` directory")
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
        mc = not args.compare and montecarlo.is_montecarlo_dir(args.dirs[0])
        runs = [] if mc else [Run(d) for d in args.dirs]
        # The default RUN_DIR/plots must be a directory inside the run (not a link out of it).
        out = output_dir(args.out, create=False) if args.out else output_dir(
            os.path.join(args.dirs[0], "plots"), run_dir=args.dirs[0], create=False)
        try:
            if mc:
                written = montecarlo.report(args.dirs[0], out, save=figures.save_png)
            elif args.compare:
                written = compare(runs, out)
            else:
                written = report_one(runs[0], out)
        except OSError as e:
            print(f"{PROG}: error: cannot write output: {e}", file=sys.stderr)
            return 1
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    for p in written:
        print(p)
    return 0

