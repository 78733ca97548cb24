#pragma once
// A counter written by one thread and read by any: a relaxed load and store, no read-modify-write.

#include <atomic>
#include <cstdint>

namespace hyloop::hal::detail {

inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t by = 1) noexcept {
  counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

}  // namespace hyloop::hal::detail
