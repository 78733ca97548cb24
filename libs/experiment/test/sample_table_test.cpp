// Issue 27 (the coordinator's Start): a streamed SampleTable keeps no row (no storage reserved
// for its capacity) yet writes the CSV a kept table writes, byte for byte, with the same counts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::experiment {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(SampleTable, StreamedWritesTheKeptCsvByteForByte) {
  const fs::path dir =
      fs::temp_directory_path() / ("hyloop_sample_table_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::vector<std::string> headers = {"t[s]", "x[m]", "f[N]"};
  constexpr std::size_t kRows = 20000;  // more than one 64 KiB buffer of lines
  SampleTable kept(headers, kRows - 5);
  std::size_t bytes = 0;
  {
    const testing::AllocGuard guard;
    SampleTable streamed(headers, kRows - 5, SampleTable::Streamed{});
    bytes = guard.bytes();
    streamed.stream_to(dir / "streamed.csv");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < kRows; ++i) {
      const double t = static_cast<double>(i) * 1e-3;
      const std::vector<double> row = {t, std::sin(t) * 1e-7,
                                       i % 997 == 0 ? nan
                                       : i == 5     ? -inf
                                                    : t / 3.0};
      EXPECT_EQ(streamed.append(row), kept.append(row));
    }
    EXPECT_FALSE(streamed.append(std::vector<double>{1.0}));  // a wrong row is dropped
    EXPECT_FALSE(kept.append(std::vector<double>{1.0}));
    EXPECT_EQ(streamed.rows(), kept.rows());
    EXPECT_EQ(streamed.dropped(), kept.dropped());
    streamed.write_csv(dir / "streamed.csv");
    EXPECT_THROW(streamed.write_csv(dir / "elsewhere.csv"), std::logic_error);
  }
  EXPECT_LT(bytes, std::size_t{4096});  // not the capacity's 480 kB
  kept.write_csv(dir / "kept.csv");
  EXPECT_EQ(slurp(dir / "streamed.csv"), slurp(dir / "kept.csv"));
  EXPECT_GT(slurp(dir / "kept.csv").size(), std::size_t{1} << 17);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hyloop::experiment
