#pragma once
// The space instable target (SIT) as a 1-D free mass m_e driven by the input force F′
// (SITS paper Eq. 19–20), integrated by semi-implicit (symplectic) Euler:
//
//   v[k+1] = v[k] + T·F′[k]/m_e
//   x[k+1] = x[k] + T·v[k+1]
//
// Semi-implicit Euler is chosen because it is symplectic: on the undamped spring–mass it keeps
// the energy bounded (no numerical growth or decay), so any growth the loop shows comes from the
// delays and not from the integrator. Its frequency error is O((ω_n·T)²) ≈ 1.7e-5 for Table 1.
//
// IdealTwin is the same mass on the nominal contact model with no delay, stepped with the
// same integrator: E[k] = −K_tc·x_i[k] − B_tc·v_i[k]. It is the reference of the metrics.
// Units: m, m/s, N, kg, J.

#include <cmath>
#include <stdexcept>
#include <string>

#include "hyloop/core/contact_model.hpp"

namespace hyloop::core {

struct MassState {
  double position = 0.0;  ///< m
  double velocity = 0.0;  ///< m/s
};

class PointMass {
 public:
  /// @throws std::invalid_argument naming `mass` or `step` when not finite and > 0.
  PointMass(double mass, double step, MassState initial = {})
      : mass_(mass), step_(step), state_(initial) {
    if (!std::isfinite(mass) || mass <= 0.0) {
      throw std::invalid_argument("mass = " + std::to_string(mass) + ": must be > 0 kg");
    }
    if (!std::isfinite(step) || step <= 0.0) {
      throw std::invalid_argument("step = " + std::to_string(step) + ": must be > 0 s");
    }
  }

  /// Advances one step under the force F′[k] (N). RT-safe.
  void step(double force) noexcept {
    state_.velocity += step_ * force / mass_;
    state_.position += step_ * state_.velocity;
  }

  void reset(MassState state) noexcept { state_ = state; }
  [[nodiscard]] const MassState& state() const noexcept { return state_; }
  [[nodiscard]] double kinetic_energy() const noexcept {
    return 0.5 * mass_ * state_.velocity * state_.velocity;
  }
  [[nodiscard]] double mass() const noexcept { return mass_; }

 private:
  double mass_;
  double step_;
  MassState state_;
};

class IdealTwin {
 public:
  IdealTwin(double mass, double step, const ContactConfig& contact, MassState initial = {})
      : mass_(mass, step, initial), contact_(contact) {}

  /// E[k], the force on the twin at its current state (N). RT-safe.
  [[nodiscard]] double force() const noexcept {
    return contact_.force(mass_.state().position, mass_.state().velocity);
  }
  /// Advances the twin by one step under E[k]. RT-safe.
  void step() noexcept { mass_.step(force()); }

  /// ½m_e·v² + ½K_tc·x² (J). RT-safe.
  [[nodiscard]] double energy() const noexcept {
    return mass_.kinetic_energy() + contact_.potential_energy(mass_.state().position);
  }
  void reset(MassState state) noexcept { mass_.reset(state); }
  [[nodiscard]] const MassState& state() const noexcept { return mass_.state(); }

 private:
  PointMass mass_;
  ContactModel contact_;
};

}  // namespace hyloop::core
