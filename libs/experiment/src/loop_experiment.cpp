#include "hyloop/experiment/loop_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace hyloop::experiment {

LoopChain::LoopChain(LoopPlan plan, std::unique_ptr<RigPart> rig,
                     std::unique_ptr<DynamicsPart> dynamics,
                     const std::vector<std::string>& record_columns)
    : plan_(std::move(plan)),
      rig_(std::move(rig)),
      dynamics_(std::move(dynamics)),
      stage_(plan_.hold_steps, plan_safety(plan_)),  // at the control period, as the actuator's
      conditioner_(plan_.tare, plan_.filter_time_constant, plan_.step),
      force_(plan_.measurement.find_quantity("force")),
      value_count_(dynamics_->names().size()),
      truth_count_(rig_->truth_names().size()),
      values_(value_count_ + truth_count_, 0.0),
      row_(record_columns.size(), 0.0) {
  if (plan_.measurement.size() > hal::kMaxSignals || truth_count_ > kMaxTruth) {
    throw std::invalid_argument("kind " + plan_.kind + ": more signals or truth values than " +
                                "a loop carries");
  }
  std::vector<std::string> names = dynamics_->names();
  for (std::string& t : rig_->truth_names()) names.push_back(std::move(t));
  for (const std::string& n : names) {
    const auto it = std::find(record_columns.begin(), record_columns.end(), n);
    place_.push_back(it == record_columns.end() ? -1 : it - record_columns.begin());
  }
  const std::array<hal::ActuatorCommand, hal::kMaxAxes> initial = plan_initial(plan_);
  stage_.reset(std::span(initial.data(), plan_axes(plan_)));
}

bool LoopChain::step(Experiment& recorder) noexcept {
  const std::int64_t k = recorder.cycle();
  if (stopped_ || k >= plan_.total_steps) return false;
  const std::span<double> measured(measured_.data(), plan_.measurement.size());
  const std::span<double> values(values_);
  rig_->step_axes(stage_.applied(), measured, values.subspan(value_count_, truth_count_));
  if (const char* fault = rig_->fault(); fault != nullptr) {
    stopped_ = true;  // the rig service's FAULT: the coordinator stops before this row
    recorder.record_stop(fault);
    return false;
  }
  if (force_) measured[*force_] = conditioner_.update(measured[*force_]);
  std::array<hal::ActuatorCommand, hal::kMaxAxes> next{};
  const StepStatus status = dynamics_->step_axes(k, measured, values.first(value_count_),
                                                 std::span(next.data(), stage_.axes()));
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (place_[i] >= 0) row_[static_cast<std::size_t>(place_[i])] = values_[i];
  }
  if (!recorder.record_cycle(row_)) return false;
  if (status.stopped()) {
    stopped_ = true;
    recorder.record_stop(status.reason());
    return false;
  }
  (void)stage_.update(k + 1, next.data());
  return recorder.cycle() < plan_.total_steps;
}

std::vector<std::string> LoopExperiment::columns(const DynamicsPart& dynamics, const RigPart& rig) {
  std::vector<std::string> c = dynamics.names();
  for (std::string& t : rig.truth_names()) c.push_back(std::move(t));
  return c;
}

namespace {
// The chain recording in LoopExperiment's columns (the parts' own names, in their order).
LoopChain own_columns_chain(LoopPlan plan, std::unique_ptr<RigPart> rig,
                            std::unique_ptr<DynamicsPart> dynamics) {
  const std::vector<std::string> columns = LoopExperiment::columns(*dynamics, *rig);
  return {std::move(plan), std::move(rig), std::move(dynamics), columns};
}
}  // namespace

LoopExperiment::LoopExperiment(LoopPlan plan, std::unique_ptr<RigPart> rig,
                               std::unique_ptr<DynamicsPart> dynamics, std::string name,
                               std::string resolved_yaml)
    : chain_(own_columns_chain(std::move(plan), std::move(rig), std::move(dynamics))),
      name_(std::move(name)),
      resolved_yaml_(std::move(resolved_yaml)),
      peak_(columns(chain_.dynamics(), chain_.rig()).size(), 0.0),
      samples_(columns(chain_.dynamics(), chain_.rig()),
               static_cast<std::size_t>(chain_.plan().total_steps)) {
  stop_reason_.reserve(kMaxStopReason);
}

bool LoopExperiment::record_cycle(std::span<const double> row) noexcept {
  if (row.size() != peak_.size() || cycle_ >= chain_.plan().total_steps) return false;
  for (std::size_t i = 0; i < row.size(); ++i) peak_[i] = std::max(peak_[i], std::abs(row[i]));
  observe_row(row);
  (void)samples_.append(row);
  ++cycle_;
  return true;
}

void LoopExperiment::record_stop(std::string_view reason) noexcept {
  if (stop_reason_.empty()) stop_reason_.assign(reason.substr(0, kMaxStopReason));
}

nlohmann::json LoopExperiment::summary() const {
  nlohmann::json peaks = nlohmann::json::object();
  for (std::size_t i = 0; i < peak_.size(); ++i) peaks[samples_.headers()[i]] = peak_[i];
  return {{"stop_reason",
           stop_reason_.empty() ? nlohmann::json(nullptr) : nlohmann::json(stop_reason_)},
          {"peak_abs", peaks}};
}

}  // namespace hyloop::experiment
