#!/usr/bin/env bash
# HDF5 recording cost (issue 14 §2): an hour of 1 kHz rows of 30 columns through the HDF5
# recorder, back to back (the writer's throughput, ~20 s) and paced by a 1 kHz loop thread (the
# loop side's cost and deadline misses; takes `seconds` of wall time, default 3600). Writes
# bench/results/hdf5_record.json. Usage: bench/hdf5_record.sh [paced seconds] [build dir]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3600}
build=${2:-build}
tmp=$(mktemp -d)
"$build/bin/hdf5_record_bench" --seconds 3600 --columns 30 --out "$tmp/back_to_back.json" > /dev/null
"$build/bin/hdf5_record_bench" --paced --seconds "$seconds" --columns 30 --out "$tmp/paced.json" > /dev/null
mkdir -p bench/results
/usr/bin/python3 - "$tmp/back_to_back.json" "$tmp/paced.json" > bench/results/hdf5_record.json <<'PY'
import json, sys
print(json.dumps({"back_to_back": json.load(open(sys.argv[1])),
                  "paced": json.load(open(sys.argv[2]))}, indent=2))
PY
cat bench/results/hdf5_record.json
rm -rf "$tmp"
