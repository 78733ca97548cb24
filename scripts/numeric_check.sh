#!/usr/bin/env bash
# The numeric tests once more "on another CPU" (issue 11, docs/rht.md "Same numbers on every
# machine"): glibc's libm is switched to its code path without FMA/AVX2, which gives other last
# bits for exp, log, sin, cos and pow, as on a CPU without those features.
#
#   scripts/numeric_check.sh [BUILD_DIR] [--both]
#
# BUILD_DIR (default build) must hold a built tree (scripts/build.sh). Runs the block, driver and
# integration tests (ctest labels core, hal, integration) and the identification service's tests
# under GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA. --both runs the plain pass first too (CI's
# plain pass is scripts/test.sh). Exits non-zero if a test fails in either pass.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
both=0
for arg in "$@"; do
  case "$arg" in
    --both) both=1 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "numeric_check.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
    *) build="$arg" ;;
  esac
done
if [[ ! -f "$build/CTestTestfile.cmake" ]]; then
  echo "numeric_check.sh: $build is not a configured build directory (run scripts/build.sh)" >&2
  exit 2
fi

tunable="glibc.cpu.hwcaps=-AVX2,-FMA"
labels='^(core|hal|integration)$'
services='^Identification(Loop|Grpc)\.'
jobs="$(nproc 2>/dev/null || echo 2)"

# Does the tunable change libm on this CPU? On one without FMA/AVX2 both passes take the same
# path: say so instead of pretending to have tested another one.
libm_digest() {
  env ${1:+GLIBC_TUNABLES="$1"} /usr/bin/python3 -c '
import hashlib, math, struct
h = hashlib.sha256()
for i in range(200000):
    x = 1e-3 + i * 1.37e-4
    h.update(struct.pack("5d", math.exp(x), math.log(x), math.sin(50 * x), math.cos(50 * x),
                         math.pow(x, 1.7)))
print(h.hexdigest())'
}
if [[ "$(libm_digest "")" == "$(libm_digest "$tunable")" ]]; then
  echo "numeric_check.sh: note: $tunable does not change libm's results on this CPU" \
       "(no FMA/AVX2 path to switch off); the second pass repeats the first" >&2
fi

run_pass() {
  local name="$1" tunables="$2"
  echo "== numeric tests, $name"
  env ${tunables:+GLIBC_TUNABLES="$tunables"} ctest --test-dir "$build" --output-on-failure \
    --no-tests=error -j "$jobs" -L "$labels"
  env ${tunables:+GLIBC_TUNABLES="$tunables"} ctest --test-dir "$build" --output-on-failure \
    --no-tests=error -j "$jobs" -R "$services"
}

if [[ "$both" == 1 ]]; then
  run_pass "plain libm" ""
fi
run_pass "GLIBC_TUNABLES=$tunable (libm without FMA/AVX2)" "$tunable"
echo "numeric_check.sh: all numeric tests passed"
