#pragma once
// The optional capabilities a kind may offer beside its runs (issue 23), each an interface of
// its own that Kind hands out (nullptr: the kind has none, and the tool and the services refuse
// its scenarios for it by name):
//   Identification  the rig's response identified from a sweep: `hyloop identify`, the
//                   coordinator's RunIdentification and the identification service, which plays
//                   the sweep in the dynamics' slot (SweepIdentification)
//   Analysis        `hyloop analyze`: the loop's stability predicted from the scenario
// Tuning is Kind::tune (kind.hpp). Every capability works on the scenario's text, parses it with
// the kind's own parser and throws ScenarioError / std::invalid_argument naming the field.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hyloop::experiment {

class LoadedScenario;

/// Samples of an identification experiment: the command u[k] and the measured position y[k].
struct SweepData {
  std::vector<double> command;
  std::vector<double> position;
};

/// The sweep's command of one cycle: the position u[k] (m) and its time derivative (m/s).
struct SweepCommand {
  double position = 0.0;  ///< m
  double velocity = 0.0;  ///< m/s
};

/// The model a sweep is fitted with (for logs and the ArxModel message).
struct SweepFit {
  std::string method;  ///< arx | iv | oe
  int na = 0;
  int nb = 0;
  int nk = 0;  ///< input delay, steps
};

/// One scenario's sweep, parsed and checked: what the services play and fit.
class SweepIdentification {
 public:
  virtual ~SweepIdentification() = default;
  [[nodiscard]] virtual std::string name() const = 0;  ///< the scenario's name
  /// The scenario as the loop services get it (Configure), resolved.
  [[nodiscard]] virtual std::string scenario_yaml() const = 0;
  [[nodiscard]] virtual std::size_t samples() const noexcept = 0;  ///< N cycles
  [[nodiscard]] virtual double step_s() const noexcept = 0;        ///< T, s
  /// u[k]: the one definition of the sweep, in process and through the services. RT-safe (no
  /// allocation, no exception).
  [[nodiscard]] virtual SweepCommand command(std::uint64_t k) const noexcept = 0;
  [[nodiscard]] virtual SweepFit fit() const = 0;
  /// Fits the samples; the report has "discrete_model" {"num", "den"}, "a", "b",
  /// "nrmse_prediction_percent" and "fit_note". @throws std::runtime_error when it cannot fit.
  [[nodiscard]] virtual nlohmann::json identify(const SweepData& data) const = 0;
};

class Identification {
 public:
  virtual ~Identification() = default;
  /// The sweep as the services run it (RunIdentification): the scenario with `overrides`, made
  /// a sweep run (a new command every step, N = the kind's sample count cycles).
  [[nodiscard]] virtual std::unique_ptr<SweepIdentification> sweep_run(
      const std::string& text, const std::string& origin,
      const std::vector<std::string>& overrides) const = 0;
  /// The loaded scenario as given (the identification service's Configure, one parse): refused
  /// with the field and the value it needs unless it already is a sweep run.
  [[nodiscard]] virtual std::unique_ptr<SweepIdentification> sweep(
      const LoadedScenario& scenario) const = 0;
  /// `hyloop identify`: the sweep taken in process and fitted, or (`from_run` not empty) the
  /// samples of that run directory fitted.
  [[nodiscard]] virtual nlohmann::json identify(const std::string& text, const std::string& origin,
                                                const std::vector<std::string>& overrides,
                                                const std::string& from_run) const = 0;
};

/// `hyloop analyze`'s options. An empty gain is the scenario's own.
struct AnalyzeRequest {
  std::optional<double> k_h;  ///< compensation gain, N·s/m
  std::optional<double> k_x;  ///< phase correction stiffness, N/m
  bool identified = true;     ///< the identified rig model (else the configured one)
  bool simulate = false;      ///< also find each predicted boundary on runs
};

class Analysis {
 public:
  virtual ~Analysis() = default;
  [[nodiscard]] virtual nlohmann::json analyze(const std::string& text, const std::string& origin,
                                               const std::vector<std::string>& overrides,
                                               const AnalyzeRequest& request) const = 0;
};

}  // namespace hyloop::experiment
