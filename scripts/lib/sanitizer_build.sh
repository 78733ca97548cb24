# Sourced by scripts/fuzz.sh and scripts/sanitize.sh: the one sanitizer build both use, so CI
# compiles the sanitized libraries once. clang, ASan + UBSan, libFuzzer's coverage
# instrumentation (HYLOOP_FUZZ), the tests and the fuzz targets, -O1 -g1, in build-asan.
#   HYLOOP_ASAN_BUILD_DIR=DIR   build directory (default build-asan)
#   HYLOOP_JOBS=N               build parallelism (default 2)
# Defines configure_sanitizer_build (idempotent) and the variables sanitizer_build, sanitizer_jobs.
sanitizer_build=${HYLOOP_ASAN_BUILD_DIR:-$root/build-asan}
sanitizer_jobs=${HYLOOP_JOBS:-2}

configure_sanitizer_build() {
  local clang
  clang=$(command -v clang++ || command -v clang++-14 || true)
  [[ -n "$clang" ]] || { echo "clang++ not found (scripts/setup.sh installs it)" >&2; return 1; }
  # A build dir of an earlier layout (gcc, or without the fuzz targets) is configured anew.
  if [[ -f "$sanitizer_build/CMakeCache.txt" ]] &&
     ! grep -q '^HYLOOP_FUZZ:BOOL=ON' "$sanitizer_build/CMakeCache.txt"; then
    rm -rf "$sanitizer_build"
  fi
  cmake -S "$root" -B "$sanitizer_build" -G Ninja -DCMAKE_CXX_COMPILER="$clang" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DHYLOOP_FUZZ=ON -DHYLOOP_WERROR=ON -DHYLOOP_BUILD_BENCH=OFF >/dev/null
}

# The sanitizers' options for every run in the build (tests and fuzzers).
# halt_on_error: stop at the first error; ctest and fuzz.sh see its exit code.
# alloc_dealloc_mismatch=0: libzmq 4.3.4 (Debian) frees with free() blocks it allocated with
# operator new(nothrow) on its I/O thread, a false positive in the library that every service hits.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_odr_violation=2:alloc_dealloc_mismatch=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0
