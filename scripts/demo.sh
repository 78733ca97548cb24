#!/usr/bin/env bash
# The main job: set up, build, run the SITS experiment with the SCVG compensator in process
# (no network, no other process) and plot it. Output: runs/demo/ (plots in runs/demo/plots/).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
./build/bin/hyloop run scenarios/sits/table1_scvg.yaml --out runs/demo --force
./build/bin/hyloop report runs/demo
echo "demo: plots in runs/demo/plots/ (overview.png first)"
