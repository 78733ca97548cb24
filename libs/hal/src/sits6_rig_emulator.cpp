#include "hyloop/hal/sits6_rig_emulator.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "require.hpp"

namespace hyloop::hal {
namespace {

using detail::require;

std::string axis_field(const char* field, int axis, const char* member = "") {
  return std::string(field) + "[" + std::to_string(axis) + "]" + member;
}

/// One delay line per wrench component; `sensor_delay_steps` checked here to name the field.
std::array<core::DelayLine, kSits6Axes> make_delay_lines(double d) {
  require(std::isfinite(d) && d >= 0.0 && d <= core::DelayLine::kMaxDelaySteps,
          "sensor_delay_steps", d, "finite and in [0, 1e6] steps");
  return {core::DelayLine(d), core::DelayLine(d), core::DelayLine(d),
          core::DelayLine(d), core::DelayLine(d), core::DelayLine(d)};
}

void check_vectors(const Sits6RigConfig& c) {
  for (int i = 0; i < kSits6Axes; ++i) {
    const double w = c.wrench_noise_std[i];
    const double x = c.pose_noise_std[i];
    const double b = c.wrench_bias[i];
    require(std::isfinite(w) && w >= 0.0, axis_field("wrench_noise_std", i).c_str(), w,
            ">= 0 (N or N*m)");
    require(std::isfinite(x) && x >= 0.0, axis_field("pose_noise_std", i).c_str(), x,
            ">= 0 (m or rad)");
    require(std::isfinite(b), axis_field("wrench_bias", i).c_str(), b, "finite (N or N*m)");
  }
}

/// As ActuatorSafety: min < max (neither NaN), velocity and acceleration bounds > 0 (inf allowed).
void check_limits(const ActuatorLimits& l, int i) {
  require(!std::isnan(l.position_min) && l.position_min < l.position_max,
          axis_field("limits", i, ".position_min").c_str(), l.position_min,
          "< position_max (m or rad)");
  require(!std::isnan(l.position_max) && l.position_max > l.position_min,
          axis_field("limits", i, ".position_max").c_str(), l.position_max,
          "> position_min (m or rad)");
  require(l.velocity_max > 0.0, axis_field("limits", i, ".velocity_max").c_str(), l.velocity_max,
          "> 0 (m/s or rad/s; inf allowed)");
  require(l.acceleration_max > 0.0, axis_field("limits", i, ".acceleration_max").c_str(),
          l.acceleration_max, "> 0 (m/s^2 or rad/s^2; inf allowed)");
}

/// x + b, and x itself when b = 0 (keeps a −0 reading bit-identical to SitsRigEmulator's).
double biased(double x, double b) noexcept { return b == 0.0 ? x : x + b; }

/// G_R,i; to_state_space's message prefixed with the field.
core::LtiSystem make_robot(const core::TransferFunction& tf, double step, int i) {
  try {
    return core::LtiSystem(core::to_state_space(tf), step);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(axis_field("robot", i) + ": " + e.what());
  }
}

}  // namespace

Sits6RigEmulator::Sits6RigEmulator(const Sits6RigConfig& config)
    : config_(config),
      contact_(config.contact),
      sensor_delay_(make_delay_lines(config.sensor_delay_steps)) {
  require(std::isfinite(config.step) && config.step > 0.0, "step", config.step, "> 0 s");
  require(config.engage_cycle >= 0, "engage_cycle", static_cast<double>(config.engage_cycle),
          ">= 0");
  check_vectors(config);
  for (int i = 0; i < kSits6Axes; ++i) {
    check_limits(config.limits[i], i);
    if (config.robot[i]) {
      robot_[i].emplace(make_robot(*config.robot[i], config.step, i));
    }
  }
  reset(core::Vector6::Zero());
}

void Sits6RigEmulator::reset(const core::Vector6& pose) {
  command_ = {pose, core::Vector6::Zero()};
  pose_ = pose;
  twist_.setZero();
  measured_pose_ = pose_;
  measured_twist_ = twist_;
  engaged_ = config_.engage_cycle == 0;
  rest_.setZero();
  contact_wrench_ = engaged_ ? contact_.wrench(pose_, twist_) : core::Vector6::Zero();
  for (int i = 0; i < kSits6Axes; ++i) {
    if (robot_[i]) {
      robot_[i]->reset(pose[i]);
    }
    sensor_delay_[i].reset(contact_wrench_[i]);
    measured_wrench_[i] = biased(contact_wrench_[i], config_.wrench_bias[i]);
    rng_[i].seed(config_.seed + static_cast<std::uint64_t>(i) * kSits6SeedStride);
    unit_noise_[i].reset();
  }
  cycle_ = -1;
}

DriverStatus Sits6RigEmulator::apply(const Pose6Command& command) noexcept {
  for (int i = 0; i < kSits6Axes; ++i) {
    const LimitVerdict verdict =
        check_command({command.pose[i], command.rate[i]}, config_.limits[i]);
    if (verdict != LimitVerdict::kOk) {
      ++rejected_;
      rejected_axis_ = i;
      rejection_reason_ = verdict;
      return DriverStatus::kRejected;
    }
  }
  command_ = command;
  return DriverStatus::kOk;
}

void Sits6RigEmulator::advance() noexcept {
  ++cycle_;
  for (int i = 0; i < kSits6Axes; ++i) {
    if (robot_[i]) {
      pose_[i] = robot_[i]->step(command_.pose[i]);
      twist_[i] = robot_[i]->output_rate();
    } else {
      pose_[i] = command_.pose[i];
      twist_[i] = command_.rate[i];
    }
  }
  if (config_.engage_cycle == 0) {
    contact_wrench_ = contact_.wrench(pose_, twist_);
  } else {
    if (!engaged_ && cycle_ >= config_.engage_cycle) {
      engaged_ = true;
      rest_ = pose_;
    }
    contact_wrench_ = engaged_ ? contact_.wrench(core::relative_pose(pose_, rest_), twist_)
                               : core::Vector6::Zero();
  }
  // Per axis as SitsRigEmulator::advance: the wrench draw, then the pose draw, each only when
  // its σ > 0 and the reading updates.
  for (int i = 0; i < kSits6Axes; ++i) {
    const double delayed = sensor_delay_[i].push(contact_wrench_[i]);
    if (!faults_.freeze_wrench) {
      const double sigma = config_.wrench_noise_std[i];
      const double noise = sigma > 0.0 ? sigma * unit_noise_[i](rng_[i]) : 0.0;
      measured_wrench_[i] = biased(delayed + noise, config_.wrench_bias[i]);
    }
    if (!faults_.lose_pose) {
      measured_pose_[i] = pose_[i];
      measured_twist_[i] = twist_[i];
      if (config_.pose_noise_std[i] > 0.0) {
        measured_pose_[i] += config_.pose_noise_std[i] * unit_noise_[i](rng_[i]);
      }
    }
  }
}

void Sits6PosePlant::reset(const std::array<double, kSits6Axes>& pose) {
  last_command_ = core::Vector6(pose.data());
  rig_.reset(last_command_);
  measurement_ = {};
  measure();
}

const PoseMeasurement& Sits6PosePlant::step(
    const std::array<double, kSits6Axes>& command) noexcept {
  const double step = rig_.config().step;
  const core::Vector6 c(command.data());
  (void)rig_.apply({c, (c - last_command_) / step});  // a rejected one: the last held (counted)
  last_command_ = c;
  rig_.advance();
  measurement_.time += step;
  measure();
  return measurement_;
}

void Sits6PosePlant::measure() noexcept {
  for (std::size_t i = 0; i < kSits6Axes; ++i) {
    const auto a = static_cast<Eigen::Index>(i);
    measurement_.pose[i] = rig_.robot_pose()[a];
    measurement_.true_pose[i] = rig_.true_robot_pose()[a];
    measurement_.wrench[i] = rig_.measured_wrench()[a];
  }
}

}  // namespace hyloop::hal
