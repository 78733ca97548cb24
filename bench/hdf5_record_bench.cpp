// HDF5 recording cost (issue 14 §2; docs/performance.md, "HDF5 recording"): a loop thread
// hands rows of `--columns` doubles to the HDF5 recorder (hdf5_recorder.hpp), as
// RunRecording::observer() does, and we measure
//   - the loop side: on_row()'s time per cycle (p50/p99/max), the ring-full stalls (a deadline
//     miss the writer causes is a stall: nothing else in on_row() can wait), and in --paced mode
//     the loop's own deadline misses with the cycles in which on_row() was slow among them;
//   - the writer: its busy time per cycle, its longest flush, the file's size.
// --paced: a 1 kHz periodic thread (absolute deadlines, timer slack 1 ns) for --seconds;
// otherwise the rows go in back to back (an hour of rows in seconds: the writer's throughput).
// Writes a JSON object to --out.
#include <sys/prctl.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hyloop/recording/hdf5_recorder.hpp"

namespace fs = std::filesystem;
using hyloop::recording::Hdf5Recorder;

namespace {

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"HDF5 recorder cost per cycle"};
  double seconds = 3600.0;
  double rate = 1000.0;
  std::size_t columns = 30;
  bool paced = false;
  std::string out = "bench/results/hdf5_record.json";
  std::string dir = fs::temp_directory_path().string();
  app.add_option("--seconds", seconds, "simulated run length, s");
  app.add_option("--rate", rate, "loop rate, Hz");
  app.add_option("--columns", columns, "columns per row");
  app.add_flag("--paced", paced, "a periodic loop thread at --rate (else back to back)");
  app.add_option("--out", out, "JSON results");
  app.add_option("--dir", dir, "where run.h5 goes (removed after)");
  CLI11_PARSE(app, argc, argv);

  std::vector<std::string> headers;
  for (std::size_t c = 0; c < columns; ++c) {
    std::string h = "c";
    h += std::to_string(c);
    h += "[m]";
    headers.push_back(h);
  }
  const fs::path file = fs::path(dir) / ("hdf5_record_bench_" + std::to_string(getpid()) + ".h5");
  const auto cycles = static_cast<std::int64_t>(std::llround(seconds * rate));
  const auto period_ns = static_cast<std::int64_t>(std::llround(1e9 / rate));
  std::vector<double> on_row_us(static_cast<std::size_t>(cycles));
  std::vector<double> row(columns, 0.0);
  std::int64_t misses = 0;
  std::int64_t misses_with_slow_on_row = 0;
  double worst_lateness_us = 0.0;
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  const auto wall_start = std::chrono::steady_clock::now();
  std::uint64_t stalls = 0;
  double writer_s = 0.0;
  double longest_flush = 0.0;
  std::uint64_t flushes = 0;
  std::uint64_t written = 0;
  {
    Hdf5Recorder recorder(file, headers);
    std::int64_t next = now_ns() + period_ns;
    for (std::int64_t k = 0; k < cycles; ++k) {
      if (paced) {
        timespec ts{static_cast<time_t>(next / 1000000000), static_cast<long>(next % 1000000000)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
        }
      }
      const std::int64_t start = now_ns();
      for (std::size_t c = 0; c < columns; ++c) {
        row[c] = std::sin(1e-3 * static_cast<double>(k) + static_cast<double>(c));
      }
      const std::int64_t before = now_ns();
      recorder.on_row(row);
      const std::int64_t after = now_ns();
      on_row_us[static_cast<std::size_t>(k)] = 1e-3 * static_cast<double>(after - before);
      if (paced) {
        const double late_us = 1e-3 * static_cast<double>(start - next);
        worst_lateness_us = std::max(worst_lateness_us, late_us);
        // A miss: this cycle's work ended after the next deadline.
        if (after > next + period_ns) {
          ++misses;
          if (after - before > period_ns / 10) ++misses_with_slow_on_row;
        }
        next += period_ns;
        if (after > next) next = after - (after - next) % period_ns + period_ns;  // skip ahead
      }
    }
    fs::create_directories(fs::path(dir) / "hdf5_record_bench_meta");
    const fs::path meta = fs::path(dir) / "hdf5_record_bench_meta";
    std::ofstream(meta / "summary.json") << "{}\n";
    std::ofstream(meta / "scenario.yaml") << "name: bench\n";
    recorder.finish(meta);
    fs::remove_all(meta);
    stalls = recorder.stalls();
    writer_s = recorder.writer_seconds();
    longest_flush = recorder.longest_flush_s();
    flushes = recorder.flushes();
    written = recorder.rows_written();
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const auto file_bytes = fs::file_size(file);
  fs::remove(file);
  std::ifstream loadavg("/proc/loadavg");
  std::string load;
  std::getline(loadavg, load);
  const nlohmann::json j = {
      {"mode", paced ? "paced" : "back_to_back"},
      {"seconds", seconds},
      {"rate_hz", rate},
      {"columns", columns},
      {"cycles", cycles},
      {"rows_written", written},
      {"wall_s", wall},
      {"file_bytes", file_bytes},
      {"on_row_us",
       {{"p50", percentile(on_row_us, 0.5)},
        {"p99", percentile(on_row_us, 0.99)},
        {"p999", percentile(on_row_us, 0.999)},
        {"max", *std::max_element(on_row_us.begin(), on_row_us.end())}}},
      {"ring_full_stalls", stalls},
      {"writer",
       {{"busy_s", writer_s},
        {"us_per_cycle", 1e6 * writer_s / static_cast<double>(std::max<std::int64_t>(cycles, 1))},
        {"share_of_period",
         writer_s / static_cast<double>(std::max<std::int64_t>(cycles, 1)) * rate},
        {"flushes", flushes},
        {"longest_flush_ms", 1e3 * longest_flush}}},
      {"loop",
       {{"deadline_misses", misses},
        {"misses_with_on_row_over_10pct_of_period", misses_with_slow_on_row},
        {"worst_wakeup_lateness_us", worst_lateness_us}}},
      {"loadavg_after", load}};
  std::ofstream(out) << j.dump(2) << "\n";
  std::printf("%s\n", j.dump(2).c_str());
  return written == static_cast<std::uint64_t>(cycles) ? 0 : 1;
}
