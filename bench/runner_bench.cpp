// Steps per second of the in-process SITS runner on the SCVG scenario (Table 1, all three
// delays, 60 s at T = 2 ms = 30 000 steps): the loop alone, the loop keeping every sample in
// memory, and the loop plus writing the run directory.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "hyloop/kinds/sits/sits_runner.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"
#include "hyloop/recording/run_directory.hpp"

namespace {
using namespace hyloop::experiment;

SitsScenario scenario(bool samples) {
  return load_scenario(
      std::string(HYLOOP_SOURCE_DIR) + "/scenarios/sits/table1_scvg.yaml",
      {std::string("outputs.samples=") + (samples ? "true" : "false"), "outputs.progress=off"});
}

void run_loop(benchmark::State& state, bool samples, bool write) {
  const SitsScenario s = scenario(samples);
  const auto dir =
      std::filesystem::temp_directory_path() / ("hyloop_bench_" + std::to_string(getpid()));
  std::int64_t steps = 0;
  for (auto _ : state) {
    SitsRunner runner(s);
    while (runner.step()) {
    }
    steps += runner.cycle();
    if (write) hyloop::recording::write_run_directory(runner, dir, true);
    benchmark::DoNotOptimize(runner.last_row());
  }
  std::filesystem::remove_all(dir);
  state.counters["steps_per_s"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
  state.counters["steps_per_run"] = static_cast<double>(s.steps());
}

void BM_ScvgLoopNoSamples(benchmark::State& state) { run_loop(state, false, false); }
void BM_ScvgLoopWithSamples(benchmark::State& state) { run_loop(state, true, false); }
void BM_ScvgLoopWithSamplesAndRunDirectory(benchmark::State& state) { run_loop(state, true, true); }

BENCHMARK(BM_ScvgLoopNoSamples)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
BENCHMARK(BM_ScvgLoopWithSamples)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
BENCHMARK(BM_ScvgLoopWithSamplesAndRunDirectory)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
