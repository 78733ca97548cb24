#!/usr/bin/env python3
"""The JSON Schema of each kind (`hyloop schema KIND`) agrees with the scenario parsers.

  1. each kind's schema is a valid draft 2020-12 schema (Debian's python3-jsonschema);
  2. every shipped scenario (scenarios/*/*.yaml) and its resolved form (`hyloop validate --print`,
     every field written out) validates against its kind's schema;
  3. hand-broken scenarios (wrong type, out of range, unknown field, bad enum, missing required,
     wrong nesting, ... across all kinds) each fail schema validation AND `hyloop validate`
     (exit 2), both naming the field.

    check_scenario_schema.py --hyloop build/bin/hyloop [--scenarios DIR]
Exit 0 when all hold; else 1, listing what did not.
"""

from __future__ import annotations

import argparse
import copy
import importlib.metadata
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parent.parent


def schema_errors(validator: jsonschema.Draft202012Validator, doc: object) -> List[str]:
    """Each error as 'dotted.path: message' (the path of the offending value)."""
    out = []
    for e in validator.iter_errors(doc):
        path = ".".join(str(p) for p in e.absolute_path)
        out.append(f"{path}: {e.message}")
    return out


def set_path(doc: dict, dotted: str, value: object) -> None:
    keys = dotted.split(".")
    at = doc
    for k in keys[:-1]:
        at = at.setdefault(k, {}) if not k.isdigit() else at[int(k)]
    last = keys[-1]
    if last.isdigit():
        at[int(last)] = value
    else:
        at[last] = value


def delete_path(doc: dict, dotted: str) -> None:
    keys = dotted.split(".")
    at = doc
    for k in keys[:-1]:
        at = at[k]
    del at[keys[-1]]


Mutation = Callable[[dict], None]

# (name, base scenario, mutation, words both messages must contain).
# Each word names the field (a path component that only that field has here).
BROKEN: List[Tuple[str, str, Mutation, List[str]]] = [
    ("sits wrong type", "sits/ideal.yaml",
     lambda d: set_path(d, "model.mass_kg", "heavy"), ["mass_kg"]),
    ("sits out of range", "sits/ideal.yaml",
     lambda d: set_path(d, "model.mass_kg", 0), ["mass_kg"]),
    ("sits unknown field (typo)", "sits/ideal.yaml",
     lambda d: set_path(d, "rig.contact.stiffnes_n_per_m", 1000), ["stiffnes_n_per_m"]),
    ("sits bad enum", "sits/table1_fgc.yaml",
     lambda d: set_path(d, "compensator.type", "pid"), ["type", "pid"]),
    ("sits missing required (custom robot without num/den)", "sits/ideal.yaml",
     lambda d: set_path(d, "rig.robot", {"preset": "custom"}), ["num"]),
    ("sits integer expected", "sits/ideal.yaml",
     lambda d: set_path(d, "safety.watchdog_cycles", 2.5), ["watchdog_cycles"]),
    ("rht wrong nesting (servo as a list)", "rht/p4.yaml",
     lambda d: set_path(d, "servo", [50, 0.8]), ["servo"]),
    ("rht bad enum", "rht/p4.yaml",
     lambda d: set_path(d, "compensator.model", "p9"), ["model", "p9"]),
    ("rht out of range (exclusive bound)", "rht/p4.yaml",
     lambda d: set_path(d, "compensator.forgetting_factor", 1.5), ["forgetting_factor"]),
    ("fcu wrong type (integer)", "fcu/polynomial.yaml",
     lambda d: set_path(d, "compensator.steps_ahead", 1.5), ["steps_ahead"]),
    ("fcu out of range in a list item", "fcu/inverse.yaml",
     lambda d: set_path(d, "reference.sinusoids.0.amplitude_deg", -1), ["amplitude_deg"]),
    ("fcu wrong nesting (engine field at the top)", "fcu/none.yaml",
     lambda d: set_path(d, "idle_speed", 0.5), ["idle_speed"]),
    ("fcu unknown field in a list item", "fcu/none.yaml",
     lambda d: set_path(d, "reference.sinusoids", [{"amplitude_deg": 1, "freq_hz": 0.1}]),
     ["freq_hz"]),
]


def run(cmd: List[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hyloop", required=True)
    parser.add_argument("--scenarios", default=str(ROOT / "scenarios"))
    args = parser.parse_args()
    problems: List[str] = []

    kinds = run([args.hyloop, "schema", "--list"]).stdout.split()
    validators: Dict[str, jsonschema.Draft202012Validator] = {}
    for kind in kinds:
        schema = json.loads(run([args.hyloop, "schema", kind]).stdout)
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[kind] = jsonschema.Draft202012Validator(schema)
    print(f"schemas: {', '.join(kinds)} (draft 2020-12, jsonschema {importlib.metadata.version('jsonschema')})")

    bad = run([args.hyloop, "schema", "no_such_kind"])
    if bad.returncode != 2 or not all(k in bad.stderr for k in kinds):
        problems.append(f"hyloop schema no_such_kind: exit {bad.returncode}, {bad.stderr!r}")

    shipped = sorted(Path(args.scenarios).glob("*/*.yaml"))
    for path in shipped:
        doc = yaml.safe_load(path.read_text()) or {}
        kind = doc.get("kind", "sits")
        if kind not in validators:
            problems.append(f"{path}: kind {kind!r} has no schema")
            continue
        for label, text in (("file", None), ("resolved", "print")):
            if text is not None:
                r = run([args.hyloop, "validate", str(path), "--print"])
                if r.returncode != 0:
                    problems.append(f"{path}: hyloop validate failed: {r.stderr.strip()}")
                    continue
                doc = yaml.safe_load(r.stdout)
            errors = schema_errors(validators[kind], doc)
            if errors:
                problems.append(f"{path} ({label}): " + "; ".join(errors))
    print(f"shipped scenarios checked: {len(shipped)} (each as written and resolved)")

    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, base, mutate, words) in enumerate(BROKEN):
            src = Path(args.scenarios) / base
            doc = copy.deepcopy(yaml.safe_load(src.read_text()))
            mutate(doc)
            gm = doc.get("ground_motion")
            if isinstance(gm, dict) and isinstance(gm.get("file"), str):
                for cand in (src.parent / gm["file"], ROOT / gm["file"]):
                    if cand.exists():
                        gm["file"] = str(cand.resolve())
                        break
            out = Path(tmp) / f"broken_{n}.yaml"
            out.write_text(yaml.safe_dump(doc, sort_keys=False))
            kind = doc.get("kind", "sits")
            errors = schema_errors(validators[kind], doc)
            schema_text = " | ".join(errors)
            r = run([args.hyloop, "validate", str(out)])
            verdicts = []
            if not errors:
                verdicts.append("schema accepted it")
            elif not all(w in schema_text for w in words):
                verdicts.append(f"schema errors do not name {words}: {schema_text}")
            if r.returncode != 2:
                verdicts.append(f"hyloop validate exit {r.returncode} (expected 2)")
            elif not all(w in r.stderr for w in words):
                verdicts.append(f"hyloop message does not name {words}: {r.stderr.strip()}")
            status = "ok" if not verdicts else "FAIL"
            print(f"  broken [{status}] {name}\n      schema: {schema_text[:160]}\n"
                  f"      hyloop: {r.stderr.strip()[:160]}")
            problems += [f"broken '{name}': {v}" for v in verdicts]

    for p in problems:
        print("PROBLEM:", p)
    print(f"{len(BROKEN)} broken scenarios, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
