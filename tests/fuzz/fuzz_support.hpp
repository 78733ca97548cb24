#pragma once
// Shared by the fuzz targets (tests/fuzz, docs/reliability.md "Fuzzing and sanitizers"): the
// libFuzzer entry point every target defines, and FUZZ_CHECK, which turns a broken invariant into
// a crash libFuzzer records (an input that only raises a documented error is not a finding).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace hyloop::fuzz {

[[noreturn]] inline void fail(const char* file, int line, const char* what, const char* detail) {
  std::fprintf(stderr, "fuzz invariant broken at %s:%d: %s%s%s\n", file, line, what,
               detail[0] != '\0' ? ": " : "", detail);
  std::abort();
}

}  // namespace hyloop::fuzz

/// Aborts with the condition's text (and `detail`, a C string) when `cond` is false.
#define FUZZ_CHECK(cond, detail)                               \
  do {                                                         \
    if (!(cond)) {                                             \
      ::hyloop::fuzz::fail(__FILE__, __LINE__, #cond, detail); \
    }                                                          \
  } while (false)
