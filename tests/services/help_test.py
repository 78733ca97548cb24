#!/usr/bin/env python3
"""Every installed binary (bin/hyloop and bin/hyloop-*) answers --help with exit 0 and lists its
options (issue 15, defect 3: hyloop-coordinator's own options were missing from its help).
Usage: help_test.py BIN_DIR"""
import os
import subprocess
import sys

COMMON = ["--config", "--grpc-address", "--metrics-address", "--log-level", "--security-dir",
          "--insecure", "--ipc-dir"]
EXPECTED = {
    "hyloop": ["run", "up", "ctl", "certs", "validate"],
    "hyloop-coordinator": COMMON + ["--services", "--endpoints", "--endpoint-prefix",
                                    "--runs-dir", "--data-dir"],
    "hyloop-identification": COMMON + ["--data-dir"],
    "hyloop-dynamics": COMMON,
    "hyloop-actuator": COMMON,
    "hyloop-sensor": COMMON,
    "hyloop-rig-emulator": COMMON,
}


def main():
    bindir = sys.argv[1]
    found = sorted(f for f in os.listdir(bindir)
                   if f == "hyloop" or f.startswith("hyloop-"))
    failures = []
    missing = sorted(set(EXPECTED) - set(found))
    if missing:
        failures.append("not built: " + ", ".join(missing))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYLOOP_")}
    for name in found:
        r = subprocess.run([os.path.join(bindir, name), "--help"], capture_output=True,
                           text=True, timeout=30, env=env)
        text = r.stdout + r.stderr
        lacking = [o for o in EXPECTED.get(name, []) if o not in r.stdout]
        ok = r.returncode == 0 and "Usage:" in r.stdout and not lacking
        print("%-24s exit %d%s" % (name, r.returncode,
                                   "" if not lacking else ", missing " + " ".join(lacking)))
        if not ok:
            failures.append("%s --help: exit %d, missing %s\n%s" %
                            (name, r.returncode, lacking, text[:400]))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
