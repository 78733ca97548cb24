#pragma once
// Linear contact between the robot's tool and the target, SITS paper Eq. 19:
//
//   F = −K_tc·X − B_tc·Ẋ        K_tc in N/m, B_tc in N·s/m, X in m, Ẋ in m/s, F in N.

#include <cmath>
#include <stdexcept>
#include <string>

namespace hyloop::core {

struct ContactConfig {
  double stiffness = 20000.0;  ///< K_tc, N/m, > 0
  double damping = 50.0;       ///< B_tc, N·s/m, ≥ 0
};

class ContactModel {
 public:
  /// @throws std::invalid_argument naming `stiffness` or `damping` when out of range.
  explicit ContactModel(const ContactConfig& config) : config_(config) {
    if (!std::isfinite(config.stiffness) || config.stiffness <= 0.0) {
      throw std::invalid_argument("stiffness = " + std::to_string(config.stiffness) +
                                  ": must be > 0 N/m");
    }
    if (!std::isfinite(config.damping) || config.damping < 0.0) {
      throw std::invalid_argument("damping = " + std::to_string(config.damping) +
                                  ": must be >= 0 N*s/m");
    }
  }

  /// Contact force in N. RT-safe.
  [[nodiscard]] double force(double position, double velocity) const noexcept {
    return -config_.stiffness * position - config_.damping * velocity;
  }

  /// Elastic energy ½·K_tc·X² in J. RT-safe.
  [[nodiscard]] double potential_energy(double position) const noexcept {
    return 0.5 * config_.stiffness * position * position;
  }

  [[nodiscard]] const ContactConfig& config() const noexcept { return config_; }

 private:
  ContactConfig config_;
};

}  // namespace hyloop::core
