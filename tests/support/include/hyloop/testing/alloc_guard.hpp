#pragma once
// Counts heap allocations made by the current thread while a guard is alive. Linking
// hyloop::test_support replaces the global operator new/delete with counting versions.
//
//   hyloop::testing::AllocGuard guard;
//   runner.step();
//   EXPECT_EQ(guard.allocations(), 0);

#include <cstddef>

namespace hyloop::testing {

class AllocGuard {
 public:
  AllocGuard();
  ~AllocGuard();
  AllocGuard(const AllocGuard&) = delete;
  AllocGuard& operator=(const AllocGuard&) = delete;

  /// Allocations made by this thread since the guard was created.
  [[nodiscard]] std::size_t allocations() const;
  /// Bytes this thread asked for since the guard was created (freed or not).
  [[nodiscard]] std::size_t bytes() const;

 private:
  std::size_t start_;
  std::size_t start_bytes_;
};

}  // namespace hyloop::testing
