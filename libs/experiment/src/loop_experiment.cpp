#include "hyloop/experiment/loop_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace hyloop::experiment {

std::vector<std::string> LoopExperiment::columns(const DynamicsPart& dynamics, const RigPart& rig) {
  std::vector<std::string> c = dynamics.names();
  for (std::string& t : rig.truth_names()) c.push_back(std::move(t));
  return c;
}

LoopExperiment::LoopExperiment(LoopPlan plan, std::unique_ptr<RigPart> rig,
                               std::unique_ptr<DynamicsPart> dynamics, std::string name,
                               std::string resolved_yaml)
    : plan_(std::move(plan)),
      rig_(std::move(rig)),
      dynamics_(std::move(dynamics)),
      name_(std::move(name)),
      resolved_yaml_(std::move(resolved_yaml)),
      stage_(plan_.hold_steps, plan_.safety),  // at the control period, as the actuator's
      conditioner_(plan_.tare, plan_.filter_time_constant, plan_.step),
      force_(plan_.measurement.find_quantity("force")),
      truth_count_(rig_->truth_names().size()),
      row_(dynamics_->names().size() + truth_count_, 0.0),
      peak_(row_.size(), 0.0),
      samples_(columns(*dynamics_, *rig_), static_cast<std::size_t>(plan_.total_steps)) {
  if (plan_.measurement.size() > hal::kMaxSignals || truth_count_ > kMaxTruth) {
    throw std::invalid_argument("kind " + plan_.kind + ": more signals or truth values than " +
                                "a loop carries");
  }
  stage_.reset(plan_.initial);
  applied_ = stage_.output().command;
}

void LoopExperiment::record(std::span<const double> row) noexcept {
  for (std::size_t i = 0; i < row.size(); ++i) peak_[i] = std::max(peak_[i], std::abs(row[i]));
  observe_row(row);
  (void)samples_.append(row);
  ++cycle_;
}

bool LoopExperiment::step() noexcept {
  if (stop_ != nullptr || cycle_ >= plan_.total_steps) return false;
  const std::size_t values = dynamics_->names().size();
  const std::span<double> measured(measured_.data(), plan_.measurement.size());
  rig_->step(applied_, measured, std::span<double>(row_).subspan(values, truth_count_));
  if (force_) measured[*force_] = conditioner_.update(measured[*force_]);
  hal::ActuatorCommand next{};
  const StepStatus status =
      dynamics_->step(cycle_, measured, std::span<double>(row_).first(values), next);
  const std::int64_t k = cycle_;
  record(row_);
  if (status.stopped()) {
    stop_ = status.reason();  // a string literal: nothing to copy in the cycle
    return false;
  }
  applied_ = stage_.update(k + 1, &next).command;
  return cycle_ < plan_.total_steps;
}

bool LoopExperiment::record_cycle(std::span<const double> row) noexcept {
  if (row.size() != row_.size() || cycle_ >= plan_.total_steps) return false;
  record(row);
  return true;
}

nlohmann::json LoopExperiment::summary() const {
  nlohmann::json peaks = nlohmann::json::object();
  for (std::size_t i = 0; i < peak_.size(); ++i) peaks[samples_.headers()[i]] = peak_[i];
  return {{"stop_reason", stop_ != nullptr         ? nlohmann::json(stop_)
                          : recorded_stop_.empty() ? nlohmann::json(nullptr)
                                                   : nlohmann::json(recorded_stop_)},
          {"peak_abs", peaks}};
}

}  // namespace hyloop::experiment
