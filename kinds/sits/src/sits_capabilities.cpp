// The SITS kind's identification and analysis capabilities (capabilities.hpp) over the jobs of
// sits_jobs.hpp: the sweep of Eq. 23 and its ARX/IV/OE fit, the Routh and sampled-loop analysis.
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "hyloop/experiment/capabilities.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/kinds/sits/sits_jobs.hpp"
#include "hyloop/kinds/sits/sits_runner.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"

namespace hyloop::experiment {
namespace {

class SitsSweep final : public SweepIdentification {
 public:
  explicit SitsSweep(SitsScenario scenario) : s_(std::move(scenario)) {}
  std::string name() const override { return s_.name; }
  std::string scenario_yaml() const override { return to_yaml(s_); }
  std::size_t samples() const noexcept override {
    return static_cast<std::size_t>(s_.identification.samples);
  }
  double step_s() const noexcept override { return s_.timing.step; }
  SweepCommand command(std::uint64_t k) const noexcept override { return sweep_command(s_, k); }
  SweepFit fit() const override {
    return {.method = std::string(core::to_string(s_.identification.method)),
            .na = s_.identification.na,
            .nb = s_.identification.nb,
            .nk = s_.identification.nk};
  }
  nlohmann::json identify(const SweepData& data) const override {
    return identify_from_sweep(s_, data);
  }

 private:
  SitsScenario s_;
};

class SitsIdentification final : public Identification {
 public:
  std::unique_ptr<SweepIdentification> sweep_run(
      const std::string& text, const std::string& origin,
      const std::vector<std::string>& overrides) const override {
    return std::make_unique<SitsSweep>(identification_run_scenario(text, origin, overrides));
  }

  std::unique_ptr<SweepIdentification> sweep(const LoadedScenario& loaded) const override {
    const auto* parsed = dynamic_cast<const ParsedScenario<SitsScenario, SitsRunner>*>(&loaded);
    if (parsed == nullptr) {
      throw std::invalid_argument("scenario kind \"" + loaded.kind().name() +
                                  "\": not a sits scenario");
    }
    SitsScenario s = parsed->scenario();
    const auto n = static_cast<std::size_t>(s.identification.samples);
    if (s.hold_steps() != 1) {
      throw std::invalid_argument("delays.control_cycle: the actuator holds each command for h = " +
                                  std::to_string(s.hold_steps()) +
                                  " steps; an identification run needs a new command every step "
                                  "(delays.control_cycle=false)");
    }
    if (s.steps() != static_cast<std::int64_t>(n)) {
      throw std::invalid_argument(
          "timing.duration_s = " + format_number(s.timing.duration) + " s gives " +
          std::to_string(s.steps()) +
          " cycles; an identification run needs identification.samples = " + std::to_string(n) +
          " cycles (timing.duration_s = " + format_number(static_cast<double>(n) * s.timing.step) +
          ")");
    }
    return std::make_unique<SitsSweep>(std::move(s));
  }

  nlohmann::json identify(const std::string& text, const std::string& origin,
                          const std::vector<std::string>& overrides,
                          const std::string& from_run) const override {
    const SitsScenario s = parse_scenario(text, origin, overrides);
    return from_run.empty() ? identify_robot(s) : identify_from_run(s, from_run);
  }
};

class SitsAnalysis final : public Analysis {
 public:
  nlohmann::json analyze(const std::string& text, const std::string& origin,
                         const std::vector<std::string>& overrides,
                         const AnalyzeRequest& request) const override {
    const SitsScenario s = parse_scenario(text, origin, overrides);
    return analyze_loop(s, AnalyzeOptions{.k_h = request.k_h,
                                          .k_x = request.k_x,
                                          .identified = request.identified,
                                          .simulate = request.simulate});
  }
};

}  // namespace

const Identification& sits_identification() {
  static const SitsIdentification identification;
  return identification;
}

const Analysis& sits_analysis() {
  static const SitsAnalysis analysis;
  return analysis;
}

}  // namespace hyloop::experiment
