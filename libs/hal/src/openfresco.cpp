#include "hyloop/hal/openfresco.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace hyloop::hal::openfresco {

std::optional<Action> action_from_code(double code) noexcept {
  if (!std::isfinite(code) || code != std::floor(code) || code < 1.0 || code > 99.0) {
    return std::nullopt;
  }
  const auto c = static_cast<std::int32_t>(code);
  if ((c >= 1 && c <= 15) || c == 99) {
    return static_cast<Action>(c);
  }
  return std::nullopt;
}

std::string_view to_string(Action action) noexcept {
  switch (action) {
    case Action::kOpen:
      return "open";
    case Action::kSetup:
      return "setup";
    case Action::kSetTrialResponse:
      return "setTrialResponse";
    case Action::kExecute:
      return "execute";
    case Action::kCommitState:
      return "commitState";
    case Action::kGetDaqResponse:
      return "getDaqResponse";
    case Action::kGetDisp:
      return "getDisp";
    case Action::kGetVel:
      return "getVel";
    case Action::kGetAccel:
      return "getAccel";
    case Action::kGetForce:
      return "getForce";
    case Action::kGetTime:
      return "getTime";
    case Action::kGetInitialStiff:
      return "getInitialStiff";
    case Action::kGetTangentStiff:
      return "getTangentStiff";
    case Action::kGetDamp:
      return "getDamp";
    case Action::kGetMass:
      return "getMass";
    case Action::kTerminate:
      return "terminate";
  }
  return "?";
}

std::string_view to_string(Quantity quantity) noexcept {
  switch (quantity) {
    case Quantity::kDisp:
      return "disp";
    case Quantity::kVel:
      return "vel";
    case Quantity::kAccel:
      return "accel";
    case Quantity::kForce:
      return "force";
    case Quantity::kTime:
      return "time";
  }
  return "?";
}

std::string slot_name(std::size_t slot) {
  if (slot >= 2 * kQuantityCount) {
    return "dataSize";
  }
  const auto q = static_cast<Quantity>(slot % kQuantityCount);
  return std::string(slot < kQuantityCount ? "ctrl " : "daq ") + std::string(to_string(q)) +
         " size";
}

void encode_setup(const SetupId& id, std::span<std::byte, kSetupBytes> out) noexcept {
  std::array<std::int32_t, kSetupInts> ints{};
  std::copy(id.ctrl.begin(), id.ctrl.end(), ints.begin());
  std::copy(id.daq.begin(), id.daq.end(), ints.begin() + kQuantityCount);
  ints[2 * kQuantityCount] = id.data_size;
  std::memcpy(out.data(), ints.data(), kSetupBytes);
}

SetupId decode_setup(std::span<const std::byte, kSetupBytes> in) noexcept {
  std::array<std::int32_t, kSetupInts> ints{};
  std::memcpy(ints.data(), in.data(), kSetupBytes);
  SetupId id;
  std::copy(ints.begin(), ints.begin() + kQuantityCount, id.ctrl.begin());
  std::copy(ints.begin() + kQuantityCount, ints.begin() + 2 * kQuantityCount, id.daq.begin());
  id.data_size = ints[2 * kQuantityCount];
  return id;
}

namespace {

BlockLayout pack_blocks(const std::array<std::int32_t, kQuantityCount>& sizes, std::size_t first) {
  BlockLayout layout;
  std::size_t at = first;
  for (std::size_t q = 0; q < kQuantityCount; ++q) {
    layout.offset[q] = at;
    layout.size[q] = static_cast<std::size_t>(std::max(sizes[q], 0));
    at += layout.size[q];
  }
  return layout;
}

}  // namespace

BlockLayout ctrl_layout(const SetupId& id) noexcept { return pack_blocks(id.ctrl, 1); }
BlockLayout daq_layout(const SetupId& id) noexcept { return pack_blocks(id.daq, 0); }

std::string check_setup_shape(const SetupId& id, std::int32_t max_data_size) {
  std::int64_t ctrl_total = 0;
  std::int64_t daq_total = 0;
  for (std::size_t q = 0; q < kQuantityCount; ++q) {
    for (const bool daq : {false, true}) {
      const std::int32_t size = daq ? id.daq[q] : id.ctrl[q];
      if (size < 0 || size > max_data_size) {
        return "set-up ID slot " + std::to_string(q + (daq ? kQuantityCount : 0)) + " (" +
               slot_name(q + (daq ? kQuantityCount : 0)) + ") = " + std::to_string(size) +
               ": must be in [0, " + std::to_string(max_data_size) + "]";
      }
      (daq ? daq_total : ctrl_total) += size;
    }
  }
  const std::int64_t low = std::max<std::int64_t>({1 + ctrl_total, daq_total, 1});
  if (id.data_size < low || id.data_size > max_data_size) {
    return "set-up ID slot 10 (dataSize) = " + std::to_string(id.data_size) + ": must be in [" +
           std::to_string(low) + ", " + std::to_string(max_data_size) +
           "] (1 + the ctrl sizes, the daq sizes, the site's limit)";
  }
  return {};
}

void encode_doubles(std::span<const double> values, std::span<std::byte> out) noexcept {
  std::memcpy(out.data(), values.data(), std::min(values.size_bytes(), out.size()));
}

void decode_doubles(std::span<const std::byte> in, std::span<double> values) noexcept {
  std::memcpy(values.data(), in.data(), std::min(values.size_bytes(), in.size()));
}

void write_column_major(std::span<const double> row_major, std::size_t n,
                        std::span<double> out) noexcept {
  if (row_major.size() < n * n || out.size() < n * n) {
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      out[j * n + i] = row_major[i * n + j];
    }
  }
}

StreamReader::StreamReader(std::size_t max_message_bytes)
    : buffer_(max_message_bytes), message_bytes_(std::min(kSetupBytes, max_message_bytes)) {
  if (max_message_bytes == 0) {
    throw std::invalid_argument("max_message_bytes = 0: must be > 0");
  }
}

bool StreamReader::set_message_bytes(std::size_t message_bytes) noexcept {
  if (message_bytes == 0 || message_bytes > buffer_.size()) {
    return false;
  }
  message_bytes_ = message_bytes;
  filled_ = 0;
  return true;
}

std::size_t StreamReader::consume(std::span<const std::byte> input) noexcept {
  const std::size_t take = std::min(input.size(), message_bytes_ - filled_);
  if (take > 0) {
    std::memcpy(buffer_.data() + filled_, input.data(), take);
    filled_ += take;
  }
  return take;
}

std::span<const std::byte> StreamReader::message() const noexcept {
  if (!complete()) {
    return {};
  }
  return {buffer_.data(), message_bytes_};
}

}  // namespace hyloop::hal::openfresco
