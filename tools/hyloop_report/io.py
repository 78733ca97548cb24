"""Reading a run directory: samples.csv, cycles.csv (name[unit] CSV) and summary.json."""

import json
import os
import re
import stat
import sys
import warnings

import numpy as np

PROG = "report.py"
METRIC_WINDOW_S = 5.0      # DESIGN.md §7: peaks over the final 5 s (summary metrics.window_s
                           # when the run says otherwise: a shorter run uses all of it)


# The limits of the files read from a run directory (the C++ side's kMaxRunTextBytes and
# kMaxRunTableBytes, libs/experiment/.../run_file.hpp; docs/security.md, "Run directories").
MAX_TEXT_BYTES = 16 << 20    # summary.json, montecarlo.json
MAX_TABLE_BYTES = 64 << 30   # samples.csv, cycles.csv, runs.csv

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


class InputError(Exception):
    """Bad input: reported as one line and exit code 2."""


def _kind(mode):
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def _refused(path, mode):
    return InputError(f"{path}: {_kind(mode)}: refused (a run directory's files are read and "
                      "written only as regular files inside it, never through a link)")


def _limit_text(n):
    return f"{n >> 30} GiB" if n % (1 << 30) == 0 else f"{n >> 20} MiB"


def open_run_file(directory, name, max_bytes):
    """The one way report and compare open a file of a run directory: `name` directly in
    `directory`, a regular file (a symlink, FIFO, device or socket is refused: lstat before
    opening, O_NOFOLLOW, fstat after), at most `max_bytes`. A text file object (UTF-8)."""
    path = os.path.join(directory, name)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise InputError(f"{path}: missing file")
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    if not stat.S_ISREG(st.st_mode):
        raise _refused(path, st.st_mode)
    if st.st_size > max_bytes:
        raise InputError(f"{path}: {st.st_size} bytes, larger than the limit of "
                         f"{_limit_text(max_bytes)} for this file of a run directory")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
                     | os.O_CLOEXEC)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    after = os.fstat(fd)
    if not stat.S_ISREG(after.st_mode) or (after.st_dev, after.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise InputError(f"{path}: changed while it was being opened: refused")
    return os.fdopen(fd, "r", encoding="utf-8")


def is_run_file(directory, name):
    """Whether `directory` has an entry `name` of any kind (a symlink too: opening it refuses)."""
    return os.path.lexists(os.path.join(directory, name))


def output_dir(out, run_dir=None, create=True):
    """The output directory `out`, created unless `create` is false (then only an existing one
    is checked); refuses one that is a symlink and, for the default RUN_DIR/plots (`run_dir`
    given), one whose real path is not inside the run directory."""
    if create:
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as e:
            raise InputError(f"{out}: cannot create the output directory: {e.strerror}")
    elif not os.path.lexists(out):
        return out
    st = os.lstat(out)
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(f"{out}: {_kind(st.st_mode)}: refused as the output directory (the "
                         "plots are written only into a real directory, never through a link)")
    if run_dir is not None:
        root = os.path.realpath(run_dir)
        if os.path.commonpath([root, os.path.realpath(out)]) != root:
            raise InputError(f"{out}: leads outside the run directory {run_dir}: refused")
    return out


def open_output(path, binary=True):
    """A file written by report/compare: created or truncated, never through a symlink or into
    a FIFO or device (O_NOFOLLOW, fstat)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK
                 | os.O_NOCTTY | os.O_CLOEXEC, 0o644)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        mode = os.fstat(fd).st_mode
        os.close(fd)
        raise _refused(path, mode)
    return os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")


def note(msg):
    print(f"{PROG}: note: {msg}", file=sys.stderr)


_HEADER_RE = re.compile(r"^\s*([^\[\]]*?)\s*\[(.*)\]\s*$")


def _parse_header(path, f):
    try:
        line = f.readline()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}")
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
    """Read a `name[unit]` CSV of a run directory (open_run_file). Returns (cols: name -> 1-D
    array, units: name -> unit)."""
    with open_run_file(os.path.dirname(path), os.path.basename(path), MAX_TABLE_BYTES) as f:
        names, units, usecols = _parse_header(path, f)
        for r in required:
            if r not in names:
                raise InputError(f"{path}: missing column '{r}' (header has: {', '.join(names)})")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # empty-file warning; handled below
                data = np.loadtxt(f, delimiter=",", usecols=usecols, ndmin=2, dtype=np.float64,
                                  comments=None)
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
    """A JSON file of a run directory (open_run_file) holding an object, as a dict; InputError
    naming the file otherwise."""
    try:
        with open_run_file(os.path.dirname(path), os.path.basename(path), MAX_TEXT_BYTES) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: malformed JSON: {' '.join(str(e).split())}")
    if not isinstance(doc, dict):
        raise InputError(f"{path}: malformed: expected a JSON object")
    return doc


def read_summary(path):
    """summary.json as a dict ({} with a note when it is missing)."""
    spath = os.path.join(path, "summary.json")
    if not is_run_file(path, "summary.json"):
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
        if is_run_file(path, "cycles.csv"):
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

    def role_unit(self, role, default=""):
        """The unit of the column with `role`, else `default`."""
        name = self.roles.get(role)
        return self.unit(name, default) if name else default

    def role_diff(self, a, b):
        """Column of role a minus column of role b at full resolution, or None."""
        x, y = self.role_col(a), self.role_col(b)
        return None if x is None or y is None else x - y

    def unit(self, name, default=""):
        return self.units.get(name, default)

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
