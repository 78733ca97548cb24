#include "report.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string_view>
#include <thread>

namespace hyloop::bench {

namespace {

using Json = nlohmann::ordered_json;

/// x rounded to `digits` decimals (the precision the file has always had); null if not finite.
Json rounded(double x, int digits) {
  if (!std::isfinite(x)) return nullptr;
  const double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
}

Json error_json(const std::string& error) { return error.empty() ? Json(nullptr) : Json(error); }

const Row* find_row(const std::vector<Row>& rows, std::string_view transport,
                    std::string_view placement, int rate_hz) {
  for (const Row& r : rows) {
    if (r.transport == transport && r.placement == placement && r.rate_hz == rate_hz) return &r;
  }
  return nullptr;
}

double ratio(double a, double b) { return (std::isfinite(a) && b > 0.0) ? a / b : kNaN; }

std::vector<int> pacings_of(const Options& opt) {
  std::vector<int> pacings{0};
  pacings.insert(pacings.end(), opt.rates.begin(), opt.rates.end());
  return pacings;
}

Json host_json(const RunInfo& info) {
  utsname uts{};
  ::uname(&uts);
  const auto load = [](const LoadAverage& l) {
    return Json::array({rounded(l.one, 2), rounded(l.five, 2), rounded(l.fifteen, 2)});
  };
  return {{"cpus", std::thread::hardware_concurrency()},
          {"kernel", std::string(uts.sysname) + " " + uts.release},
          {"load_before", load(info.before)},
          {"load_after", load(info.after)}};
}

Json config_json(const Options& opt, const RunInfo& info) {
  return {{"hops", kNodes},
          {"message_bytes", info.message_bytes},
          {"roundtrips_b2b", opt.roundtrips},
          {"seconds_paced", rounded(opt.seconds, 3)},
          {"warmup_roundtrips", opt.warmup},
          {"spin_margin_us", opt.spin_us},
          {"timer_slack_ns", 1},
          {"miss_threshold", "one period"},
          {"quick", opt.quick},
          {"wall_s", rounded(info.wall_s, 1)}};
}

Json lateness_json(const RunResult& r) {
  const auto us = [](std::int64_t ns) { return rounded(1e-3 * static_cast<double>(ns), 2); };
  return {{"p50", us(r.lateness_p50_ns)},
          {"p99", us(r.lateness_p99_ns)},
          {"max", us(r.lateness_max_ns)}};
}

Json row_json(const Row& r, const std::vector<Row>& rows) {
  const Row* timer = find_row(rows, "timer", "none", r.rate_hz);
  const double timer_rate = timer != nullptr ? timer->miss_rate() : kNaN;
  const Summary& s = r.latency;
  return {{"transport", r.transport},
          {"placement", r.placement},
          {"pacing", r.rate_hz == 0 ? "b2b" : "paced"},
          {"rate_hz", r.rate_hz},
          {"n", s.n},
          {"lost", r.result.lost},
          {"latency_us",
           {{"p50", rounded(s.p50_us, 2)},
            {"p90", rounded(s.p90_us, 2)},
            {"p99", rounded(s.p99_us, 2)},
            {"p99_9", rounded(s.p999_us, 2)},
            {"max", rounded(s.max_us, 2)},
            {"mean", rounded(s.mean_us, 2)}}},
          {"deadlines", r.result.deadlines},
          {"missed", r.result.missed},
          {"miss_rate", rounded(r.miss_rate(), 6)},
          {"timer_miss_rate", rounded(r.rate_hz != 0 ? timer_rate : kNaN, 6)},
          {"miss_ratio_vs_timer", rounded(ratio(r.miss_rate(), timer_rate), 3)},
          {"clock_misses", r.result.clock_misses},
          {"clock_skipped", r.result.clock_skipped},
          {"wake_lateness_us", r.rate_hz == 0 ? Json(nullptr) : lateness_json(r.result)},
          {"rejected", r.result.rejected},
          {"child_failures", r.result.child_failures},
          {"elapsed_s", rounded(r.result.elapsed_s, 3)},
          {"error", error_json(r.result.error)}};
}

/// p50 and p99 of `a` over `b`, against an aim.
Json latency_ratio_json(const Row& a, const Row& b, double aim) {
  const double r50 = ratio(a.latency.p50_us, b.latency.p50_us);
  const double r99 = ratio(a.latency.p99_us, b.latency.p99_us);
  return {{"p50", rounded(r50, 3)},
          {"p99", rounded(r99, 3)},
          {"aim", aim},
          {"met", r50 <= aim && r99 <= aim}};
}

/// Aim 1: hyloop within 1.3x of the bare ZeroMQ ring at p50 and p99.
Json hyloop_vs_zmq(const std::vector<Row>& rows, const std::vector<int>& pacings) {
  Json out = Json::array();
  for (const std::string_view placement : {"process", "thread"}) {
    for (const int rate : pacings) {
      const Row* h = find_row(rows, "hyloop", placement, rate);
      const Row* z = find_row(rows, "zmq", placement, rate);
      if (h == nullptr || z == nullptr) continue;
      Json j = {{"placement", placement}, {"rate_hz", rate}};
      j.update(latency_ratio_json(*h, *z, 1.3));
      out.push_back(std::move(j));
    }
  }
  return out;
}

/// Aim 2: components in one process within 1.5x of the raw Unix-socket ring (threads).
Json thread_hyloop_vs_uds(const std::vector<Row>& rows, const std::vector<int>& pacings) {
  Json out = Json::array();
  for (const int rate : pacings) {
    const Row* h = find_row(rows, "hyloop", "thread", rate);
    const Row* u = find_row(rows, "uds", "thread", rate);
    if (h == nullptr || u == nullptr) continue;
    Json j = {{"rate_hz", rate}};
    j.update(latency_ratio_json(*h, *u, 1.5));
    out.push_back(std::move(j));
  }
  return out;
}

/// Aim 3: miss rate of every paced ring against the bare timer (aim: thread hyloop at 2 kHz
/// within 2x).
Json miss_rate_vs_timer(const std::vector<Row>& rows) {
  Json out = Json::array();
  for (const Row& r : rows) {
    if (r.rate_hz == 0 || r.transport == "timer") continue;
    const Row* timer = find_row(rows, "timer", "none", r.rate_hz);
    if (timer == nullptr) continue;
    Json j = {{"transport", r.transport},
              {"placement", r.placement},
              {"rate_hz", r.rate_hz},
              {"miss_rate", rounded(r.miss_rate(), 6)},
              {"timer_miss_rate", rounded(timer->miss_rate(), 6)},
              {"ratio", rounded(ratio(r.miss_rate(), timer->miss_rate()), 3)}};
    if (r.transport == "hyloop" && r.placement == "thread" && r.rate_hz == 2000) {
      j["aim"] = 2.0;
      j["met"] = r.miss_rate() <= 2.0 * timer->miss_rate();
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

Summary summarise(std::vector<std::int64_t> v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const auto at = [&](double q) {  // nearest rank
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    return 1e-3 * static_cast<double>(v[std::clamp<std::size_t>(rank, 1, v.size()) - 1]);
  };
  s.p50_us = at(0.50);
  s.p90_us = at(0.90);
  s.p99_us = at(0.99);
  s.p999_us = at(0.999);
  s.max_us = 1e-3 * static_cast<double>(v.back());
  double sum = 0.0;
  for (const std::int64_t x : v) sum += static_cast<double>(x);
  s.mean_us = 1e-3 * sum / static_cast<double>(v.size());
  return s;
}

double Row::miss_rate() const {
  return result.deadlines == 0
             ? kNaN
             : static_cast<double>(result.missed) / static_cast<double>(result.deadlines);
}

std::string Row::pacing() const { return rate_hz == 0 ? "b2b" : std::to_string(rate_hz) + " Hz"; }

LoadAverage load_average() {
  LoadAverage l;
  std::ifstream f("/proc/loadavg");
  f >> l.one >> l.five >> l.fifteen;
  return l;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

std::string num(double x, int digits) {
  if (!std::isfinite(x)) return "null";
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.*f", digits, x);
  return buf.data();
}

void print_table(const std::vector<Row>& rows) {
  std::printf("%-7s %-8s %-8s %7s %5s %8s %8s %8s %8s %9s %13s %8s %9s\n", "ring", "placement",
              "pacing", "n", "lost", "p50 us", "p90 us", "p99 us", "p99.9", "max us", "missed/dl",
              "miss %", "wake p50");
  for (const Row& r : rows) {
    const bool paced = r.rate_hz != 0;
    const std::string missed =
        paced ? std::to_string(r.result.missed) + "/" + std::to_string(r.result.deadlines) : "-";
    std::printf("%-7s %-8s %-8s %7llu %5llu %8s %8s %8s %8s %9s %13s %8s %9s%s%s\n",
                r.transport.c_str(), r.placement.c_str(), r.pacing().c_str(),
                static_cast<unsigned long long>(r.latency.n),
                static_cast<unsigned long long>(r.result.lost), num(r.latency.p50_us, 1).c_str(),
                num(r.latency.p90_us, 1).c_str(), num(r.latency.p99_us, 1).c_str(),
                num(r.latency.p999_us, 1).c_str(), num(r.latency.max_us, 1).c_str(), missed.c_str(),
                paced ? num(100.0 * r.miss_rate(), 3).c_str() : "-",
                paced ? num(1e-3 * static_cast<double>(r.result.lateness_p50_ns), 1).c_str() : "-",
                r.result.error.empty() ? "" : "  ERROR: ", r.result.error.c_str());
  }
}

nlohmann::ordered_json results_json(const Options& opt, const std::vector<Row>& rows,
                                    const RunInfo& info) {
  Json rows_json = Json::array();
  for (const Row& r : rows) rows_json.push_back(row_json(r, rows));
  const std::vector<int> pacings = pacings_of(opt);
  return {{"benchmark", "ring_bench"},
          {"date_utc", info.started},
          {"host", host_json(info)},
          {"config", config_json(opt, info)},
          {"rows", std::move(rows_json)},
          {"ratios",
           {{"hyloop_vs_zmq", hyloop_vs_zmq(rows, pacings)},
            {"thread_hyloop_vs_thread_uds", thread_hyloop_vs_uds(rows, pacings)},
            {"miss_rate_vs_timer", miss_rate_vs_timer(rows)}}}};
}

void write_json(const std::string& path, const Options& opt, const std::vector<Row>& rows,
                const RunInfo& info) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << results_json(opt, rows, info).dump(2) << "\n";
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace hyloop::bench
