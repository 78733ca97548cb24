#!/usr/bin/env bash
# Set up, build and run every test (unit, integration, reproduction, report script).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc 2>/dev/null || echo 2)"
