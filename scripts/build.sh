#!/usr/bin/env bash
# Configures and builds hyloop into build/ (every executable lands in build/bin/). One
# configuration for the demo and the tests, so nothing is built twice.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
if [[ ! -f build/CMakeCache.txt ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHYLOOP_WERROR=ON ${HYLOOP_CMAKE_ARGS:-} >/dev/null
fi
cmake --build build -j "$jobs"
