#pragma once
// The force channel of a wire driver whose I/O thread publishes its newest sample (a SeqLock
// behind Driver::latest()): read() gives that sample's force less the tare offset (N), the
// sample's own counter (sequence, seqno, IPOC) as its cycle, and the driver's health. Wait-free:
// no lock, no allocation, no system call.

#include <cstdint>

#include "hyloop/hal/drivers.hpp"

namespace hyloop::hal {

/// `kCycle`: the sample's counter member, e.g. &RsiSample::ipoc.
template <typename Driver, auto kCycle>
class LatestForce final : public ForceSensorDriver {
 public:
  explicit LatestForce(const Driver& driver) : driver_(driver) {}
  DriverStatus read(ForceSample& sample) noexcept override {
    const auto s = driver_.latest();
    sample.force = s.force - offset_;
    sample.cycle = static_cast<std::int64_t>(s.*kCycle);
    return driver_.health();
  }
  void tare() override { offset_ = driver_.latest().force; }

 private:
  const Driver& driver_;
  double offset_ = 0.0;
};

}  // namespace hyloop::hal
