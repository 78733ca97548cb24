"""Reading a run directory: samples.csv, cycles.csv (name[unit] CSV) and summary.json."""

import json
import os
import re
import sys
import warnings

import numpy as np

PROG = "report.py"
METRIC_WINDOW_S = 5.0      # DESIGN.md §7: peaks over the final 5 s (summary metrics.window_s
                           # when the run says otherwise: a shorter run uses all of it)


class InputError(Exception):
    """Bad input: reported as one line and exit code 2."""


def note(msg):
    print(f"{PROG}: note: {msg}", file=sys.stderr)


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


def read_json_object(path):
    """A JSON file holding an object, as a dict; InputError naming the file otherwise."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: malformed JSON: {' '.join(str(e).split())}")
    if not isinstance(doc, dict):
        raise InputError(f"{path}: malformed: expected a JSON object")
    return doc


def read_summary(path):
    """summary.json as a dict ({} with a note when it is missing)."""
    spath = os.path.join(path, "summary.json")
    if not os.path.isfile(spath):
        note(f"{spath}: missing; titles use the directory name, no metrics")
        return {}
    return read_json_object(spath)


class Run:
    """One run directory: columns by name (`cols`), their units, cycles and the summary."""

    def __init__(self, path):
        self.path = path
        if not os.path.isdir(path):
            raise InputError(f"{path}: not a run directory (does not exist)")
        self.dirname = os.path.basename(os.path.normpath(os.path.abspath(path)))
        self.summary = read_summary(path)
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
        kind = self.summary.get("kind")
        self.kind = kind if isinstance(kind, str) and kind else None
        self.roles = self._read_roles()

    def _read_roles(self):
        """{role: column name} of summary.json "signals" ({"role": "name[unit]"}, the kind's
        Kind::signal_roles) whose column samples.csv records in that unit."""
        signals = self.summary.get("signals")
        if signals is None:
            return {}
        if not isinstance(signals, dict):
            raise InputError(f"{os.path.join(self.path, 'summary.json')}: signals: "
                             "must be an object of role: \"name[unit]\"")
        roles = {}
        for role, column in signals.items():
            name, _, unit = str(column).partition("[")
            unit = unit[:-1] if unit.endswith("]") else None
            if unit is None or name not in self.cols:
                note(f"{self.path}: signals.{role} = '{column}': not a column of samples.csv")
            elif self.unit(name) != unit:
                note(f"{self.path}: signals.{role}: column '{name}' is in [{self.unit(name)}], "
                     f"the kind says [{unit}]; not used")
            else:
                roles[role] = name
        return roles

    def role(self, role):
        """The column the run's kind gave `role`, or None."""
        return self.roles.get(role)

    def role_col(self, role):
        """The values of the column with `role`, or None."""
        name = self.roles.get(role)
        return self.cols.get(name) if name else None

    def has(self, *names):
        return all(n in self.cols for n in names)

    def unit(self, name, default=""):
        return self.units.get(name, default)

    def signal(self, name, unit):
        """Column `name` when it is recorded in `unit`; None (with a note) otherwise."""
        if name not in self.cols:
            return None
        if self.unit(name) != unit:
            note(f"{self.path}: column '{name}' is in [{self.unit(name)}], expected [{unit}]; "
                 "not plotted as such")
            return None
        return self.cols[name]

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
