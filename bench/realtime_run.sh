#!/usr/bin/env bash
# A real-time run with the loop services as separate processes on loopback, and a bare periodic
# timer at the same period measured alongside by the coordinator: by default the 60 s SITS run
# of issue 5 (T = 2 ms, Tc = 4 ms); with `fcu`, the 40 s FCU polynomial run (T = 1 ms). Writes
# bench/results/realtime_<kind>.json (the summary's `distributed` section, the kind's metrics and
# the machine's load). Usage: bench/realtime_run.sh [seconds] [build dir] [sits|fcu]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${2:-build}
kind=${3:-sits}
case "$kind" in
  sits) scenario=scenarios/sits/table1_scvg.yaml ;;
  fcu) scenario=scenarios/fcu/polynomial.yaml ;;
  *) echo "realtime_run.sh: kind \"$kind\": must be sits or fcu" >&2; exit 2 ;;
esac
out=$(mktemp -d)/run
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
"$build/bin/hyloop" up "$scenario" --out "$out" --mode realtime \
  --set timing.duration_s="$seconds" > /dev/null
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
mkdir -p bench/results
/usr/bin/python3 - "$out/summary.json" "$load_before" "$load_after" "$seconds" <<'PY' > "bench/results/realtime_$kind.json"
import json, sys
s = json.load(open(sys.argv[1]))
d = s["distributed"]
print(json.dumps({"scenario": s["scenario"], "seconds": float(sys.argv[4]), "steps": s["steps"],
                  "load_before": sys.argv[2], "load_after": sys.argv[3],
                  "state": d["state"], "latency_sample_to_command": d["latency_sample_to_command"],
                  "loop_misses": d["loop_misses"], "bare_timer": d["bare_timer"],
                  "deadline_misses": d["deadline_misses"], "skipped_cycles": d["skipped_cycles"],
                  "rejected_messages": d["rejected_messages"],
                  "miss_ratio_to_bare_timer": (d["loop_misses"]["rate"] / d["bare_timer"]["rate"])
                  if d["bare_timer"]["rate"] > 0 else None,
                  "metrics": s.get("metrics") or {k: s.get(k) for k in (
                      "tracking_indicator", "engine_speed_error", "flow_error_kg_s",
                      "delay_estimate", "valve_saturated_steps")}}, indent=2))
PY
cat "bench/results/realtime_$kind.json"
rm -rf "$(dirname "$out")"
