#!/usr/bin/env python3
"""docs/scenarios.md documents every field the scenario parsers accept, and only those.

The accepted fields come from the parsers themselves, through the hyloop tool:
  1. the resolved scenario (`hyloop validate FILE --print`) of every shipped scenario: its leaf
     paths (a list of mappings contributes `path[].key`);
  2. for every mapping in it, the parser's own list of the keys it reads there: an unknown key
     `--set PATH.zz_doc_probe=1` is refused with "unknown field (allowed here: a, b, ...)", which
     also names fields a resolved scenario leaves out (e.g. rig.robot.num/den unless custom);
  3. the same of the validate-only scenarios in tools/testdata/scenario_doc (the rig.driver block
     of a device on the wire, which no shipped scenario uses: hyloop run refuses it).
The documented fields are the backticked names in the first column of the tables headed
"| field |" under each "## Kind `KIND`" heading of docs/scenarios.md; a row may abbreviate "`a.b.c`, `d`, `e`" for
a.b.c, a.b.d, a.b.e.

Those tables are generated from the field tables (libs/experiment scenario_fields.hpp) by
`hyloop schema KIND --markdown` between the markers BEGIN/END below, in each kind's section; the
check also fails when the text there differs from what the tables generate (`--write` rewrites it).

    check_scenario_doc.py --hyloop build/bin/hyloop [--doc docs/scenarios.md] [--scenarios DIR]
                          [--write]
Exit 0 when every accepted field of every kind is documented in that kind's section, every
documented field is accepted and the generated sections are current; else 1, listing the
differences.
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, Iterable, List, Set

import yaml

PROBE = "zz_doc_probe"
ALLOWED = re.compile(r"unknown field \(allowed here: (?P<keys>[^)]*)\)")
KIND_HEADING = re.compile(r"^##\s+Kind\s+`(?P<kind>[a-z0-9_]+)`")
TICKED = re.compile(r"`([^`]+)`")
BEGIN = "<!-- BEGIN generated: hyloop schema {kind} --markdown (tools/check_scenario_doc.py --write) -->"
END = "<!-- END generated: hyloop schema {kind} --markdown -->"


def generated_sections(hyloop: str, doc: Path, write: bool) -> List[str]:
    """Compares (or with write, replaces) each kind's generated section; returns the problems."""
    kinds = subprocess.run([hyloop, "schema", "--list"], capture_output=True, text=True,
                           check=True).stdout.split()
    text = doc.read_text(encoding="utf-8")
    problems = []
    for kind in kinds:
        begin, end = BEGIN.format(kind=kind), END.format(kind=kind)
        want = subprocess.run([hyloop, "schema", kind, "--markdown"], capture_output=True,
                              text=True, check=True).stdout
        a, b = text.find(begin), text.find(end)
        if a < 0 or b < a:
            problems.append(f"{doc.name}: no generated section for kind {kind} (markers {begin!r} "
                            f"... {end!r} in its '## Kind `{kind}`' section)")
            continue
        have = text[a + len(begin):b].strip("\n") + "\n"
        if have != want:
            if write:
                text = text[:a + len(begin)] + "\n" + want + text[b:]
            else:
                diff = difflib.unified_diff(have.splitlines(), want.splitlines(), "docs", "tables",
                                            lineterm="", n=0)
                problems.append(f"{doc.name}: the generated section of kind {kind} is not current "
                                f"(run tools/check_scenario_doc.py --hyloop HYLOOP --write):\n  " +
                                "\n  ".join(list(diff)[:40]))
    if write:
        doc.write_text(text, encoding="utf-8")
    return problems


def leaf_paths(node: object, prefix: str = "") -> Iterable[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from leaf_paths(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        for item in node:
            yield from leaf_paths(item, prefix + "[]")
    else:
        yield prefix


def mapping_paths(node: object, prefix: str = "") -> Iterable[str]:
    if isinstance(node, dict):
        yield prefix
        for k, v in node.items():
            yield from mapping_paths(v, f"{prefix}.{k}" if prefix else str(k))


def accepted_fields(hyloop: str, scenarios: List[Path]) -> Dict[str, Set[str]]:
    """kind -> every dotted path its parser accepts, as seen on the shipped scenarios."""
    fields: Dict[str, Set[str]] = {}
    probed: Set[tuple] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for n, scenario in enumerate(scenarios):
            r = subprocess.run([hyloop, "validate", str(scenario), "--print"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"{scenario}: hyloop validate --print failed (exit "
                                 f"{r.returncode}; is the build current?): {r.stderr.strip()}")
            out = r.stdout
            doc = yaml.safe_load(out)
            kind = doc["kind"]
            paths = fields.setdefault(kind, set())
            paths.update(leaf_paths(doc))
            resolved = Path(tmp) / f"{n}.yaml"  # every key present: probes see mappings only
            resolved.write_text(out)
            for m in mapping_paths(doc):
                if (kind, m) in probed:
                    continue
                probed.add((kind, m))
                probe = f"{m}.{PROBE}=1" if m else f"{PROBE}=1"
                r = subprocess.run([hyloop, "validate", str(resolved), "--set", probe],
                                   capture_output=True, text=True)
                hit = ALLOWED.search(r.stderr + r.stdout)
                if r.returncode == 0 or not hit:
                    raise SystemExit(f"{scenario}: probing {m or 'the top level'} gave no list of "
                                     f"allowed fields: {(r.stderr + r.stdout).strip()}")
                for key in hit.group("keys").split(", "):
                    path = f"{m}.{key}" if m else key
                    # a key that holds a mapping is covered by its own leaves
                    if not any(p.startswith(path + ".") or p.startswith(path + "[]")
                               for p in paths):
                        paths.add(path)
    # A key probed before any scenario showed its leaves (a mapping a resolved scenario leaves out
    # for other variants, e.g. rht's compensator.ats) is covered by those leaves once seen.
    for kind, paths in fields.items():
        fields[kind] = {p for p in paths
                        if not any(q.startswith(p + ".") or q.startswith(p + "[]") for q in paths)}
    return fields


def documented_fields(doc: Path) -> Dict[str, Set[str]]:
    """kind -> the fields named in the first column of its section's tables."""
    out: Dict[str, Set[str]] = {}
    kind = None
    in_fields = False  # inside a table whose first header cell is "field"
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            m = KIND_HEADING.match(line)
            kind = m.group("kind") if m else None
            continue
        if not line.startswith("|"):
            in_fields = False
            continue
        cells = line.split("|")
        if len(cells) < 3:
            continue
        if cells[1].strip() == "field":
            in_fields = True
            continue
        if kind is None or not in_fields:
            continue
        names = TICKED.findall(cells[1])
        if not names:
            continue
        first = names[0]
        parent = first.rsplit(".", 1)[0] if "." in first else ""
        for i, name in enumerate(names):
            name = name.split(":")[0].strip()  # `kind: sits` names the field kind
            if i > 0 and "." not in name and parent:
                name = f"{parent}.{name}"
            out.setdefault(kind, set()).add(name)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parents[1]
    p.add_argument("--hyloop", required=True)
    p.add_argument("--doc", type=Path, default=root / "docs" / "scenarios.md")
    p.add_argument("--scenarios", type=Path, default=root / "scenarios")
    p.add_argument("--write", action="store_true",
                   help="rewrite the generated sections from `hyloop schema KIND --markdown`")
    a = p.parse_args()

    generated = generated_sections(a.hyloop, a.doc, a.write)
    for g in generated:
        print(g)

    scenarios = sorted(a.scenarios.rglob("*.yaml"))
    # Validate-only scenarios for blocks no shipped scenario uses (rig.driver on the wire).
    extra = sorted((root / "tools" / "testdata" / "scenario_doc").glob("*.yaml"))
    accepted = accepted_fields(a.hyloop, scenarios + extra)
    documented = documented_fields(a.doc)
    bad = False
    for kind in sorted(accepted):
        have = documented.get(kind, set())
        missing = sorted(accepted[kind] - have)
        stale = sorted(have - accepted[kind])
        print(f"{kind}: {len(accepted[kind])} fields accepted, {len(have)} documented")
        for f in missing:
            print(f"  MISSING from {a.doc.name} (## Kind `{kind}`): {f}")
        for f in stale:
            print(f"  documented but not accepted by the parser: {f}")
        bad |= bool(missing or stale)
    for kind in sorted(set(documented) - set(accepted)):
        print(f"{kind}: documented, but no shipped scenario has this kind")
        bad = True
    bad |= bool(generated)
    print(f"{len(scenarios)} shipped scenarios (+{len(extra)} validate-only); generated sections "
          f"{'NOT current' if generated else 'current'}; {'FAILED' if bad else 'ok'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
