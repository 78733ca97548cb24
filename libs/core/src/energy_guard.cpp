#include "hyloop/core/energy_guard.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "number_text.hpp"

namespace hyloop::core {
using detail::require;

EnergyGuard::EnergyGuard(const EnergyGuardConfig& c)
    : config_(c),
      reference_(std::numeric_limits<double>::quiet_NaN()),
      tripped_at_(std::numeric_limits<double>::quiet_NaN()) {
  require(std::isfinite(c.max_energy_ratio) && c.max_energy_ratio > 1.0, "max_energy_ratio",
          c.max_energy_ratio, "must be finite and > 1");
  require(std::isfinite(c.energy_floor) && c.energy_floor > 0.0, "energy_floor", c.energy_floor,
          "must be finite and > 0");
  require(c.hold >= 1, "hold", c.hold, "must be >= 1");
}

bool EnergyGuard::update(double t, double energy) noexcept {
  if (tripped_) return true;
  if (!std::isfinite(energy)) {
    tripped_ = true;
    tripped_at_ = t;
    return true;
  }
  if (std::isnan(reference_)) reference_ = std::max(energy, config_.energy_floor);
  const double ratio = energy / reference_;
  if (ratio > max_ratio_) {
    max_ratio_ = ratio;
    max_ratio_at_ = t;
  }
  above_ = ratio > config_.max_energy_ratio ? above_ + 1 : 0;
  if (above_ >= config_.hold) {
    tripped_ = true;
    tripped_at_ = t;
  }
  return tripped_;
}

}  // namespace hyloop::core
