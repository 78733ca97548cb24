#pragma once
// A single-writer sequence lock: the hand-over of a small trivially copyable value from a
// driver's I/O thread to the loop (or back). The writer never waits; a reader copies the value
// and retries only if a write overlapped the copy. A store takes well under a microsecond and the
// drivers store at most once a datagram, so a retry is rare and short; a writer storing back to
// back without pause could starve readers, so none does. No allocation, no lock, no system call.
//
// The value is stored as relaxed atomic 64-bit words, so an overlapped copy is a torn value that
// is thrown away, never a data race. One writer thread; any number of readers.

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace hyloop::hal {

template <typename T>
class SeqLock {
  static_assert(std::is_trivially_copyable_v<T>);
  static constexpr std::size_t kWords = (sizeof(T) + 7) / 8;

 public:
  SeqLock() noexcept : SeqLock(T{}) {}
  explicit SeqLock(const T& value) noexcept {
    std::array<std::uint64_t, kWords> words{};
    std::memcpy(words.data(), &value, sizeof(T));
    for (std::size_t i = 0; i < kWords; ++i) {
      words_[i].store(words[i], std::memory_order_relaxed);
    }
  }

  /// Publishes `value`. Writer thread only. RT-safe.
  void store(const T& value) noexcept {
    std::array<std::uint64_t, kWords> words{};
    std::memcpy(words.data(), &value, sizeof(T));
    const std::uint64_t s = sequence_.load(std::memory_order_relaxed);
    sequence_.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    for (std::size_t i = 0; i < kWords; ++i) {
      words_[i].store(words[i], std::memory_order_relaxed);
    }
    sequence_.store(s + 2, std::memory_order_release);
  }

  /// One attempt: false when a write overlapped (then `out` is unchanged). RT-safe.
  bool try_load(T& out) const noexcept {
    const std::uint64_t before = sequence_.load(std::memory_order_acquire);
    if ((before & 1U) != 0U) {
      return false;
    }
    std::array<std::uint64_t, kWords> words{};
    for (std::size_t i = 0; i < kWords; ++i) {
      words[i] = words_[i].load(std::memory_order_relaxed);
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (sequence_.load(std::memory_order_relaxed) != before) {
      return false;
    }
    std::memcpy(static_cast<void*>(&out), words.data(), sizeof(T));
    return true;
  }

  /// The newest value (retries while a write overlaps). RT-safe.
  [[nodiscard]] T load() const noexcept {
    T out{};
    while (!try_load(out)) {
    }
    return out;
  }

  /// How many store() calls completed (a reader's cheap "anything new?"). RT-safe.
  [[nodiscard]] std::uint64_t version() const noexcept {
    return sequence_.load(std::memory_order_acquire) / 2;
  }

 private:
  std::atomic<std::uint64_t> sequence_{0};
  std::array<std::atomic<std::uint64_t>, kWords> words_{};
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
};

}  // namespace hyloop::hal
