#!/usr/bin/env python3
"""Fingerprints of every shipped scenario's run, to compare two builds (refactors must not
change a bit of what a run records).

For each scenario under scenarios/ and each way of running it (`run`: in process; `up`: the
services as processes, lockstep; `inproc`: the services co-located, lockstep) it writes the
SHA-256 of samples.csv, of the resolved scenario.yaml and of summary.json without the fields
that depend on the wall clock, the host or the revision. Scenarios whose kind has no distributed form are run in process only.

  tools/run_fingerprints.py --bin build/bin --out /tmp/new.json [--modes run,up,inproc]
  tools/run_fingerprints.py --compare /tmp/old.json /tmp/new.json   # exit 1 on any difference

--only NAME... restricts the runs to those scenarios (dir/stem, e.g. sits/table1_none: an older
build knows only its own), --set passes field overrides to every run, and --summaries DIR keeps
each scrubbed summary.json there (DIR/dir-stem-mode.json) to read what a summary difference is.
--drop FIELD (repeatable) leaves a top-level summary field out of the hash: a change that adds a
field (e.g. `signals`, issue 23) is compared with the build before it on everything else.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

SOURCE = pathlib.Path(__file__).resolve().parent.parent
# Fields of summary.json that differ between two identical runs.
VOLATILE = {"wall_time_s", "steps_per_second", "revision", "started_at", "finished_at",
            "host", "hostname", "run_id", "estop_latency_us", "deadline_misses", "created_at",
            "hyloop_version", "build", "pid", "duration_wall_s", "mode", "through",
            "stop_latency_us", "latency_us", "loop", "git_revision", "address"}


def scrub(value):
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in sorted(value.items()) if k not in VOLATILE}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def one(binary, scenario, mode, work, overrides=(), summaries=None, drop=()):
    out = pathlib.Path(work) / ("%s-%s-%s" % (scenario.parent.name, scenario.stem, mode))
    cmd = [str(binary), "run" if mode == "run" else "up", str(scenario), "--out", str(out)]
    if mode == "inproc":
        cmd.append("--inproc")
    for o in overrides:
        cmd += ["--set", o]
    p = subprocess.run(cmd, cwd=SOURCE, capture_output=True, text=True, timeout=900)
    key = "%s/%s:%s" % (scenario.parent.name, scenario.stem, mode)
    if not (out / "samples.csv").exists():
        return key, {"exit": p.returncode, "error": (p.stderr or p.stdout)[-300:]}
    summary = json.loads((out / "summary.json").read_text())
    scrubbed = scrub({k: v for k, v in summary.items() if k not in drop})
    if summaries:
        (pathlib.Path(summaries) / (out.name + ".json")).write_text(
            json.dumps(scrubbed, indent=1, sort_keys=True) + "\n")
    result = {"exit": p.returncode, "samples_sha256": digest(out / "samples.csv"),
              "scenario_sha256": digest(out / "scenario.yaml"),
              "summary_sha256": hashlib.sha256(
                  json.dumps(scrubbed, sort_keys=True).encode()).hexdigest()}
    if p.returncode != 0:  # why, for the reader of a difference (not compared)
        result["why"] = "%s: %s" % (summary.get("stop_reason"),
                                    summary.get("distributed", {}).get("message"))
    shutil.rmtree(out, ignore_errors=True)
    return key, result


def fingerprint(args):
    binary = pathlib.Path(args.bin).resolve() / "hyloop"
    scenarios = sorted(SOURCE.glob("scenarios/*/*.yaml"))
    if args.only:
        scenarios = [s for s in scenarios if "%s/%s" % (s.parent.name, s.stem) in args.only]
    if args.summaries:
        pathlib.Path(args.summaries).mkdir(parents=True, exist_ok=True)
    modes = args.modes.split(",")
    work = tempfile.mkdtemp(prefix="hyloop-fingerprints-")
    jobs = []
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for s in scenarios:
                for m in modes:
                    jobs.append(pool.submit(one, binary, s, m, work, args.set, args.summaries,
                                            args.drop))
            results = dict(j.result() for j in jobs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    pathlib.Path(args.out).write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    failed = [k for k, v in results.items() if "error" in v]
    print("%d runs fingerprinted, %d without samples.csv" % (len(results), len(failed)))


def compare(old_path, new_path):
    old = json.loads(pathlib.Path(old_path).read_text())
    new = json.loads(pathlib.Path(new_path).read_text())
    bad = 0
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a and b and {k: v for k, v in a.items() if k != "why"} == {
                k: v for k, v in b.items() if k != "why"}:
            continue
        if a != b:
            bad += 1
            print("DIFFERS %s\n  old %s\n  new %s" % (key, a, b))
    print("%d of %d runs identical" % (len(set(old) | set(new)) - bad, len(set(old) | set(new))))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="directory holding the hyloop binaries")
    ap.add_argument("--out", help="fingerprints file to write")
    ap.add_argument("--modes", default="run,up,inproc")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    ap.add_argument("--only", nargs="+", metavar="DIR/STEM", help="scenarios to run")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    ap.add_argument("--summaries", metavar="DIR", help="keep the scrubbed summaries here")
    ap.add_argument("--drop", action="append", default=[], metavar="FIELD",
                    help="leave this top-level summary field out of the hash")
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not args.bin or not args.out:
        ap.error("--bin and --out, or --compare OLD NEW")
    fingerprint(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
