#include "hyloop/transport/codec.hpp"

#include <google/protobuf/io/coded_stream.h>

#include <limits>
#include <stdexcept>
#include <utility>

namespace hyloop::transport {

std::string_view to_string(Verdict v) noexcept {
  switch (v) {
    case Verdict::kAccepted:
      return "accepted";
    case Verdict::kMalformed:
      return "malformed";
    case Verdict::kOversized:
      return "oversized";
    case Verdict::kWrongRun:
      return "wrong_run";
    case Verdict::kStale:
      return "stale";
    case Verdict::kDuplicate:
      return "duplicate";
    case Verdict::kOutOfOrder:
      return "out_of_order";
    case Verdict::kWrongLength:
      return "wrong_length";
    case Verdict::kAhead:
      return "ahead";
  }
  return "unknown";
}

std::uint64_t VerdictCounters::rejected() const noexcept {
  std::uint64_t sum = 0;
  for (std::size_t i = 1; i < kVerdictCount; ++i) {
    sum += counts_[i].load(std::memory_order_relaxed);
  }
  return sum;
}

void VerdictCounters::reset() noexcept {
  for (auto& c : counts_) {
    c.store(0, std::memory_order_relaxed);
  }
}

// ---------------------------------------------------------------------------------------------
// Encoder

Encoder::Encoder(EncoderConfig config) : config_(std::move(config)), buffer_(config_.max_bytes) {
  if (config_.max_bytes == 0 ||
      config_.max_bytes > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::invalid_argument("Encoder: max_bytes out of range");
  }
}

void Encoder::stamp(v2::Header& header, std::uint64_t cycle, double virtual_time_s,
                    std::int64_t send_time_ns) {
  if (header.run_id() != config_.run_id) {  // assign only on change: no reallocation
    header.set_run_id(config_.run_id);
  }
  header.set_cycle(cycle);
  header.set_virtual_time_s(virtual_time_s);
  header.set_send_time_ns(send_time_ns);
  header.set_sender(config_.sender);
}

std::span<const std::byte> Encoder::serialize(const google::protobuf::MessageLite& msg) {
  const std::size_t size = msg.ByteSizeLong();
  if (size > buffer_.size()) {
    oversized_.store(oversized_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return {};
  }
  if (!msg.SerializeToArray(buffer_.data(), static_cast<int>(size))) {
    return {};
  }
  encoded_.store(encoded_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return {buffer_.data(), size};
}

// ---------------------------------------------------------------------------------------------
// Validator

namespace {
// now − sent > max_age without overflow: a send time off the wire may be any int64 (found by
// tests/fuzz codec: INT64_MIN overflowed the subtraction and passed as fresh).
bool older_than(std::int64_t now_ns, std::int64_t sent_ns, std::int64_t max_age_ns) noexcept {
  return now_ns > sent_ns &&
         static_cast<std::uint64_t>(now_ns) - static_cast<std::uint64_t>(sent_ns) >
             static_cast<std::uint64_t>(max_age_ns);
}
}  // namespace

Validator::Validator(ValidatorConfig config)
    : config_(std::move(config)), expected_(config_.first_cycle) {
  if (config_.run_id.empty()) {
    throw std::invalid_argument("Validator: run_id must not be empty");
  }
}

Verdict Validator::check_size(std::size_t wire_bytes) noexcept {
  if (wire_bytes > config_.max_bytes) {
    counters_.add(Verdict::kOversized);
    return Verdict::kOversized;
  }
  return Verdict::kAccepted;
}

Verdict Validator::check(const v2::Header& header, std::int64_t now_ns) noexcept {
  Verdict v = Verdict::kAccepted;
  const std::uint64_t cycle = header.cycle();
  if (header.run_id().empty()) {
    v = Verdict::kMalformed;  // no header (proto3: an absent header reads as all defaults)
  } else if (header.run_id() != config_.run_id) {
    v = Verdict::kWrongRun;
  } else if (has_last_ && cycle == last_) {
    v = Verdict::kDuplicate;
  } else if (has_last_ && cycle < last_) {
    v = Verdict::kOutOfOrder;
  } else if (config_.mode == Mode::kLockstep) {
    if (cycle < expected_) {
      v = Verdict::kOutOfOrder;  // before the first expected cycle
    } else if (cycle > expected_) {
      v = Verdict::kAhead;
    }
  } else if (config_.max_age.count() > 0 &&
             older_than(now_ns, header.send_time_ns(), config_.max_age.count())) {
    v = Verdict::kStale;
  }
  counters_.add(v);
  if (v == Verdict::kAccepted) {
    last_ = cycle;
    has_last_ = true;
    expected_ = cycle + 1;
  }
  return v;
}

void Validator::reset(std::uint64_t first_cycle) noexcept {
  expected_ = first_cycle;
  last_ = 0;
  has_last_ = false;
}

// ---------------------------------------------------------------------------------------------

namespace detail {

bool merge_from(google::protobuf::MessageLite& msg, std::span<const std::byte> bytes) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    return false;
  }
  google::protobuf::io::CodedInputStream input(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                               static_cast<int>(bytes.size()));
  return msg.MergePartialFromCodedStream(&input) && input.ConsumedEntireMessage() &&
         input.CurrentPosition() == static_cast<int>(bytes.size());
}

}  // namespace detail
}  // namespace hyloop::transport
