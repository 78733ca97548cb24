#include "hyloop/hal/wire_impairment.hpp"

#include <algorithm>
#include <cmath>

#include "require.hpp"

namespace hyloop::hal {

namespace {

bool is_probability(double p) { return std::isfinite(p) && p >= 0.0 && p <= 1.0; }

}  // namespace

void validate(const WireImpairments& w) {
  using detail::require;
  require(std::isfinite(w.latency) && w.latency >= 0.0, "impairments.latency", w.latency,
          "finite and >= 0 s");
  require(std::isfinite(w.jitter) && w.jitter >= 0.0, "impairments.jitter", w.jitter,
          "finite and >= 0 s");
  require(is_probability(w.loss) && w.loss < 1.0, "impairments.loss", w.loss, "in [0, 1)");
  require(is_probability(w.reorder), "impairments.reorder", w.reorder, "in [0, 1]");
  require(is_probability(w.duplicate), "impairments.duplicate", w.duplicate, "in [0, 1]");
}

WireImpairer::WireImpairer(const WireImpairments& impairments, double hold)
    : w_(impairments), hold_(hold), rng_(impairments.seed) {
  validate(impairments);
}

bool WireImpairer::lose_incoming() noexcept { return w_.loss > 0.0 && uniform_(rng_) < w_.loss; }

bool WireImpairer::submit(std::span<const std::uint8_t> datagram, double now) noexcept {
  if (w_.loss > 0.0 && uniform_(rng_) < w_.loss) {
    return false;
  }
  double due = now + w_.latency + (w_.jitter > 0.0 ? w_.jitter * uniform_(rng_) : 0.0);
  if (w_.reorder > 0.0 && uniform_(rng_) < w_.reorder) {
    due += hold_;
  }
  enqueue(datagram, due);
  if (w_.duplicate > 0.0 && uniform_(rng_) < w_.duplicate) {
    enqueue(datagram, due);
  }
  return true;
}

void WireImpairer::enqueue(std::span<const std::uint8_t> datagram, double due) noexcept {
  if (queued_ == queue_.size()) {
    ++overflowed_;
    return;
  }
  InFlight& f = queue_[queued_++];
  f.due = due;
  f.size = std::min(datagram.size(), f.bytes.size());
  std::copy_n(datagram.begin(), f.size, f.bytes.begin());
}

std::size_t WireImpairer::flush(const UdpSocket& socket, const sockaddr_in& to,
                                double now) noexcept {
  std::size_t sent = 0;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < queued_; ++i) {
    if (queue_[i].due <= now) {
      sent += socket.send_to({queue_[i].bytes.data(), queue_[i].size}, to) ? 1 : 0;
    } else {
      if (kept != i) {
        queue_[kept] = queue_[i];
      }
      ++kept;
    }
  }
  queued_ = kept;
  return sent;
}

double WireImpairer::next_due(double otherwise) const noexcept {
  double due = otherwise;
  for (std::size_t i = 0; i < queued_; ++i) {
    due = std::min(due, queue_[i].due);
  }
  return due;
}

}  // namespace hyloop::hal
