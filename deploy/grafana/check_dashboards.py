#!/usr/bin/python3
"""Checks the hyloop Grafana dashboards and lists their PromQL expressions.

    /usr/bin/python3 deploy/grafana/check_dashboards.py [DASHBOARD.json ...]
        [--prometheus http://127.0.0.1:9090] [--require-data] [--quiet]

Prints every expression of every dashboard, one per line: `dashboard<TAB>panel<TAB>expr`
(dashboard = the file's stem, panel = the panel's title), on stdout. Without arguments it reads
every deploy/grafana/dashboards/*.json beside this script.

Validates the structure (errors on stderr, exit status 1):
- the dashboard has a non-empty string `uid` (unique across the files, at most 40 characters),
  a `title`, and a non-empty `panels` list;
- every panel (rows' nested panels included) has an `id` (unique in its dashboard), a `type`,
  a `title` and a `gridPos`; every panel but rows and text panels has a `datasource` with a `uid`
  (the provisioned data source's uid when deploy/grafana/provisioning/datasources/*.yml is
  readable) and a non-empty `targets` list whose entries have a `refId` (unique in the panel) and
  a non-empty string `expr`;
- every expression names only metrics of the contract in docs/metrics.md (hyloop_* names, plus
  _bucket/_sum/_count of the histograms), has balanced brackets and quotes, and uses no Grafana
  template variables ($var, $__interval), so it is plain PromQL that Prometheus can evaluate.

With --prometheus URL every expression is also evaluated through Prometheus's HTTP API
(/api/v1/query); a rejected expression is an error, and with --require-data so is an empty result.
"""

import argparse
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent

CONTRACT = HERE.parent.parent / "docs" / "metrics.md"


def contract(path=CONTRACT):
    """{name: type} of every metric in the tables of docs/metrics.md (the one list of them)."""
    out = {}
    for line in path.read_text().splitlines():
        m = re.match(r"\|\s*`(hyloop_[a-z0-9_]+)`\s*\|\s*(counter|gauge|histogram)\s*\|", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


_CONTRACT = contract()
HISTOGRAMS = {name for name, kind in _CONTRACT.items() if kind == "histogram"}
METRICS = set(_CONTRACT)
SERIES = METRICS | {h + s for h in HISTOGRAMS for s in ("_bucket", "_sum", "_count")}
NO_TARGET_PANELS = {"row", "text", "news", "dashlist"}
METRIC_NAME = re.compile(r"\bhyloop_[A-Za-z0-9_]*")
TEMPLATE_VAR = re.compile(r"\$(\w+|\{[^}]*\})")


def provisioned_datasource_uids() -> set[str]:
    """uids of the provisioned data sources (empty when PyYAML or the files are missing)."""
    try:
        import yaml  # Debian's python3-yaml
    except ImportError:
        return set()
    uids = set()
    for path in sorted((HERE / "provisioning" / "datasources").glob("*.y*ml")):
        doc = yaml.safe_load(path.read_text()) or {}
        for ds in doc.get("datasources", []) or []:
            if isinstance(ds, dict) and ds.get("uid"):
                uids.add(ds["uid"])
    return uids


def strip_strings(expr: str) -> tuple[str, bool]:
    """The expression with string literals blanked, and whether every literal was closed."""
    out = []
    quote = None
    i = 0
    while i < len(expr):
        c = expr[i]
        if quote:
            if c == "\\" and quote != "`":
                i += 2
                continue
            if c == quote:
                quote = None
                out.append('""')
        elif c in "\"'`":
            quote = c
        else:
            out.append(c)
        i += 1
    return "".join(out), quote is None


def check_expr(expr: str) -> list[str]:
    problems = []
    code, closed = strip_strings(expr)
    if not closed:
        problems.append("unterminated string literal")
    stack = []
    pairs = {")": "(", "]": "[", "}": "{"}
    for c in code:
        if c in "([{":
            stack.append(c)
        elif c in pairs:
            if not stack or stack.pop() != pairs[c]:
                problems.append(f"unbalanced '{c}'")
                break
    else:
        if stack:
            problems.append(f"unclosed '{stack[-1]}'")
    if TEMPLATE_VAR.search(code):
        problems.append("Grafana template variable (not plain PromQL)")
    for name in METRIC_NAME.findall(code):
        if name not in SERIES:
            problems.append(f"metric {name} is not in the contract (docs/metrics.md)")
    if not METRIC_NAME.search(code):
        problems.append("names no hyloop_ metric")
    return problems


def walk_panels(panels):
    for p in panels:
        yield p
        if isinstance(p, dict) and isinstance(p.get("panels"), list):
            yield from walk_panels(p["panels"])


class Checker:
    def __init__(self, datasource_uids: set[str]):
        self.errors: list[str] = []
        self.exprs: list[tuple[str, str, str]] = []
        self.uids: dict[str, str] = {}
        self.datasource_uids = datasource_uids

    def error(self, where: str, message: str) -> None:
        self.errors.append(f"{where}: {message}")

    def check_file(self, path: Path) -> None:
        name = path.stem
        try:
            dash = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            self.error(str(path), f"not readable JSON: {e}")
            return
        if not isinstance(dash, dict):
            self.error(str(path), "not a JSON object")
            return
        uid = dash.get("uid")
        if not isinstance(uid, str) or not uid:
            self.error(name, "missing uid")
        elif len(uid) > 40:
            self.error(name, f"uid {uid!r} longer than 40 characters")
        elif uid in self.uids:
            self.error(name, f"uid {uid!r} also used by {self.uids[uid]}")
        else:
            self.uids[uid] = name
        if not isinstance(dash.get("title"), str) or not dash["title"]:
            self.error(name, "missing title")
        panels = dash.get("panels")
        if not isinstance(panels, list) or not panels:
            self.error(name, "no panels")
            return
        ids = set()
        for panel in walk_panels(panels):
            self.check_panel(name, panel, ids)

    def check_panel(self, name: str, panel, ids: set) -> None:
        if not isinstance(panel, dict):
            self.error(name, "a panel is not a JSON object")
            return
        title = panel.get("title")
        where = f"{name}: panel {title!r}"
        if not isinstance(title, str) or not title:
            self.error(where, "missing title")
        pid = panel.get("id")
        if not isinstance(pid, int):
            self.error(where, "missing integer id")
        elif pid in ids:
            self.error(where, f"duplicate id {pid}")
        else:
            ids.add(pid)
        ptype = panel.get("type")
        if not isinstance(ptype, str) or not ptype:
            self.error(where, "missing type")
        grid = panel.get("gridPos")
        if not isinstance(grid, dict) or not all(k in grid for k in ("h", "w", "x", "y")):
            self.error(where, "missing gridPos {h, w, x, y}")
        if ptype in NO_TARGET_PANELS:
            return
        ds = panel.get("datasource")
        if not isinstance(ds, dict) or not ds.get("uid"):
            self.error(where, "missing datasource {type, uid}")
        elif self.datasource_uids and ds["uid"] not in self.datasource_uids:
            self.error(where, f"datasource uid {ds['uid']!r} is not provisioned "
                              f"({', '.join(sorted(self.datasource_uids))})")
        targets = panel.get("targets")
        if not isinstance(targets, list) or not targets:
            self.error(where, "no targets")
            return
        ref_ids = set()
        for target in targets:
            if not isinstance(target, dict):
                self.error(where, "a target is not a JSON object")
                continue
            ref = target.get("refId")
            if not isinstance(ref, str) or not ref or ref in ref_ids:
                self.error(where, f"missing or duplicate refId {ref!r}")
            ref_ids.add(ref)
            tds = target.get("datasource")
            if tds is not None and isinstance(ds, dict) and isinstance(tds, dict) \
                    and tds.get("uid") != ds.get("uid"):
                self.error(where, f"target {ref}: datasource differs from the panel's")
            expr = target.get("expr")
            if not isinstance(expr, str) or not expr.strip():
                self.error(where, f"target {ref}: missing expr")
                continue
            for problem in check_expr(expr):
                self.error(where, f"target {ref}: {problem}: {expr}")
            self.exprs.append((name, title if isinstance(title, str) else "", expr))


def evaluate(base_url: str, expr: str, timeout: float) -> tuple[bool, int, str]:
    """(accepted, number of result series or samples, error message) of an instant query."""
    url = base_url.rstrip("/") + "/api/v1/query"
    data = urllib.parse.urlencode({"query": expr}).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=timeout) as r:
            body = json.load(r)
    except urllib.error.HTTPError as e:
        try:
            body = json.load(e)
        except (json.JSONDecodeError, ValueError):
            return False, 0, f"HTTP {e.code}"
    except (urllib.error.URLError, OSError) as e:
        return False, 0, f"cannot reach {url}: {e}"
    if body.get("status") != "success":
        return False, 0, f"{body.get('errorType')}: {body.get('error')}"
    result = body.get("data", {}).get("result")
    if body.get("data", {}).get("resultType") == "scalar":
        return True, 1, ""
    return True, len(result or []), ""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="dashboards (default: all)")
    parser.add_argument("--prometheus", metavar="URL",
                        help="also evaluate every expression through this Prometheus")
    parser.add_argument("--require-data", action="store_true",
                        help="with --prometheus: an empty result is an error")
    parser.add_argument("--timeout", type=float, default=10.0, help="HTTP timeout, seconds")
    parser.add_argument("--quiet", action="store_true", help="do not print the expressions")
    args = parser.parse_args(argv)

    files = args.files or sorted((HERE / "dashboards").glob("*.json"))
    if not files:
        print("check_dashboards: no dashboards found", file=sys.stderr)
        return 1
    checker = Checker(provisioned_datasource_uids())
    for path in files:
        checker.check_file(path)
    if not args.quiet:
        for dashboard, panel, expr in checker.exprs:
            print(f"{dashboard}\t{panel}\t{' '.join(expr.split())}")
    if args.prometheus:
        for dashboard, panel, expr in checker.exprs:
            ok, n, message = evaluate(args.prometheus, expr, args.timeout)
            if not ok:
                checker.error(f"{dashboard}: panel {panel!r}", f"Prometheus rejects {expr}: "
                                                              f"{message}")
            elif args.require_data and n == 0:
                checker.error(f"{dashboard}: panel {panel!r}", f"no data for {expr}")
    for e in checker.errors:
        print(f"check_dashboards: {e}", file=sys.stderr)
    if checker.errors:
        print(f"check_dashboards: {len(checker.errors)} error(s) in {len(files)} dashboard(s)",
              file=sys.stderr)
        return 1
    print(f"check_dashboards: {len(files)} dashboards, {len(checker.exprs)} expressions, OK",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
