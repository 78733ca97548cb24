#!/usr/bin/env bash
# The fuzzing stage of CI (issue 10; docs/reliability.md "Fuzzing and sanitizers"): builds the
# libFuzzer targets of tests/fuzz with clang, ASan and UBSan in build-asan (CMake option
# HYLOOP_FUZZ; the sanitizer build scripts/sanitize.sh tests in: scripts/lib/sanitizer_build.sh),
# runs each on its committed seed corpus for HYLOOP_FUZZ_SECONDS, and fails on any crash,
# sanitizer report, leak, timeout or out-of-memory. One summary line per target.
#
#   scripts/fuzz.sh [TARGET...]          default: every target (codec scenario requests)
#   HYLOOP_FUZZ_SECONDS=45               time per target (-max_total_time)
#   HYLOOP_FUZZ_TIMEOUT=25               seconds one input may take (-timeout)
#   HYLOOP_FUZZ_RSS_MB=2048              memory limit (-rss_limit_mb, also the malloc limit)
#   HYLOOP_ASAN_BUILD_DIR=DIR            build directory (default build-asan)
#   HYLOOP_JOBS=N                        build parallelism (default 2)
#
# New inputs go to DIR/corpus/<target> (not into git). A failing input is saved as
# DIR/artifacts/<target>/crash-* (or leak-*, timeout-*, oom-*); reproduce it with
#   DIR/bin/fuzz_<target> DIR/artifacts/<target>/crash-…
# and, once fixed, commit it to tests/fuzz/corpus/<target>/ so that ctest's fuzz_replay_<target>
# replays it in every build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/lib/sanitizer_build.sh"
build=$sanitizer_build
seconds=${HYLOOP_FUZZ_SECONDS:-45}
timeout=${HYLOOP_FUZZ_TIMEOUT:-25}
rss_mb=${HYLOOP_FUZZ_RSS_MB:-2048}
all_targets=(codec scenario requests wire)
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${all_targets[@]}")

start=$(date +%s)
configure_sanitizer_build
cmake --build "$build" -j"$sanitizer_jobs" --target "${targets[@]/#/fuzz_}"
built=$(date +%s)

failed=()
summary=()
for t in "${targets[@]}"; do
  seeds=$root/tests/fuzz/corpus/$t
  work=$build/corpus/$t
  artifacts=$build/artifacts/$t
  log=$build/fuzz-$t.log
  mkdir -p "$work" "$artifacts"
  args=(-max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb="$rss_mb"
        -print_final_stats=1 -artifact_prefix="$artifacts/")
  [[ -f $root/tests/fuzz/$t.dict ]] && args+=(-dict="$root/tests/fuzz/$t.dict")
  status=0
  (cd "$root" && "$build/bin/fuzz_$t" "${args[@]}" "$work" "$seeds") >"$log" 2>&1 || status=$?
  # libFuzzer's last status line "#N DONE cov: C ft: F corp: U/B ..." and its final stats.
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1 || true)
  if [[ $status -eq 0 ]]; then
    verdict=OK
  else
    verdict="FAILED (exit $status, log $log, input in $artifacts/)"
    failed+=("$t")
    grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz invariant|.*runtime error)' "$log" | head -5 >&2 || true
  fi
  summary+=("fuzz $t: $verdict; ${execs:-0} execs (${rate:-0}/s) in ${seconds} s; ${cov:-no coverage line}; peak rss ${rss:-?} MB")
done
end=$(date +%s)
printf '%s\n' "${summary[@]}"
echo "fuzz: build $((built - start)) s, fuzzing $((end - built)) s, total $((end - start)) s"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
