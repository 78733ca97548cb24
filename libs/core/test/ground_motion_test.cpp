#include "hyloop/core/ground_motion.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace hyloop::core {
namespace {

namespace fs = std::filesystem;

class GroundMotionFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hyloop_ground_motion_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  std::string error_of(const fs::path& p, GroundMotionFormat f = GroundMotionFormat::kAuto) {
    try {
      read_ground_motion(p, f);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

const char* const kAt2Header =
    "PEER NGA STRONG MOTION DATABASE RECORD\n"
    "Test record, component 000\n"
    "ACCELERATION TIME SERIES IN UNITS OF G\n";

TEST_F(GroundMotionFiles, ReadsPeerAt2InG) {
  const fs::path p = write("small.AT2", std::string(kAt2Header) +
                                            "NPTS=     5, DT=   .0100 SEC\n"
                                            "  .1000000E+00 -.2000000E+00  .5000000E-01\n"
                                            "  .0000000E+00  .3000000E+00\n");
  const GroundMotion m = read_ground_motion(p);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_DOUBLE_EQ(m.step, 0.01);
  EXPECT_DOUBLE_EQ(m.acceleration[1], -0.2 * kStandardGravity);
  EXPECT_DOUBLE_EQ(m.peak(), 0.3 * kStandardGravity);
  EXPECT_EQ(m.peak_index(), 4u);
  EXPECT_NEAR(m.duration(), 0.04, 1e-15);
}

TEST_F(GroundMotionFiles, ReadsTheOlderAt2Header) {
  const fs::path p = write("old.at2", std::string(kAt2Header) +
                                          "    4    0.0050    NPTS, DT\n"
                                          "0.1 0.2\n0.3 0.4\n");
  const GroundMotion m = read_ground_motion(p, GroundMotionFormat::kPeerAt2);
  EXPECT_EQ(m.size(), 4u);
  EXPECT_DOUBLE_EQ(m.step, 0.005);
}

TEST_F(GroundMotionFiles, RejectsAWrongPointCountNamingNpts) {
  const fs::path p = write("short.AT2", std::string(kAt2Header) +
                                            "NPTS=     6, DT=   .0100 SEC\n"
                                            "0.1 0.2 0.3\n0.4 0.5\n");
  EXPECT_THAT(error_of(p), ::testing::HasSubstr("NPTS = 6 in the header but 5 values found"));
}

TEST_F(GroundMotionFiles, RejectsNonFiniteAndMalformedValues) {
  const fs::path nan =
      write("nan.AT2", std::string(kAt2Header) + "NPTS=     3, DT=   .0100 SEC\n0.1 nan 0.3\n");
  EXPECT_THAT(error_of(nan), ::testing::HasSubstr("line 5: value nan is not finite"));
  const fs::path bad =
      write("bad.AT2", std::string(kAt2Header) + "NPTS=     3, DT=   .0100 SEC\n0.1 0.2x 0.3\n");
  EXPECT_THAT(error_of(bad), ::testing::HasSubstr("\"0.2x\" is not a number"));
  const fs::path dt =
      write("dt.AT2", std::string(kAt2Header) + "NPTS=     3, DT=   -.0100 SEC\n0.1 0.2 0.3\n");
  EXPECT_THAT(error_of(dt), ::testing::HasSubstr("DT = -0.01"));
  const fs::path inf = write("inf.txt", "0.0 0.1\n0.01 inf\n0.02 0.3\n");
  EXPECT_THAT(error_of(inf), ::testing::HasSubstr("line 2: values must be finite"));
}

TEST_F(GroundMotionFiles, ReadsTwoColumnTextWithHeaderAndComments) {
  const fs::path p = write("two.csv",
                           "# recorded on the shake table\n"
                           "time_s,accel_mps2\n"
                           "1.00, 0.0\n"
                           "1.02, 1.5\n"
                           "\n"
                           "1.04, -2.5\n"
                           "1.06, 0.5\n");
  const GroundMotion m =
      read_ground_motion(p, GroundMotionFormat::kAuto, AccelerationUnit::kMetrePerSecondSquared);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_NEAR(m.step, 0.02, 1e-15);
  EXPECT_DOUBLE_EQ(m.start_time, 1.0);
  EXPECT_DOUBLE_EQ(m.peak(), 2.5);
  EXPECT_NEAR(m.at(1.03), -0.5, 1e-12);  // halfway between 1.5 and −2.5
  EXPECT_EQ(m.at(0.5), 0.0);             // before the record
  EXPECT_EQ(m.at(2.0), 0.0);             // after it
}

TEST_F(GroundMotionFiles, RejectsANonUniformTimeStep) {
  const fs::path p = write("jitter.txt", "0.00 0.1\n0.02 0.2\n0.04 0.3\n0.07 0.4\n");
  EXPECT_THAT(error_of(p), ::testing::HasSubstr("line 4: time step 0.03 s differs from the first "
                                                "step 0.02 s"));
  const fs::path back = write("back.txt", "0.00 0.1\n0.00 0.2\n");
  EXPECT_THAT(error_of(back), ::testing::HasSubstr("must be after"));
  const fs::path one = write("one.txt", "0.00 0.1\n");
  EXPECT_THAT(error_of(one), ::testing::HasSubstr("at least 2"));
  EXPECT_THAT(error_of(dir_ / "missing.txt"), ::testing::HasSubstr("cannot be opened"));
}

TEST(GroundMotion, ScalesToATargetPeakAndResamplesLinearly) {
  GroundMotion m;
  m.step = 0.02;
  m.acceleration = {0.0, 1.0, -2.0, 0.5};
  const GroundMotion s = scale_to_peak(m, 0.263 * kStandardGravity);
  EXPECT_DOUBLE_EQ(s.peak(), 0.263 * kStandardGravity);
  EXPECT_DOUBLE_EQ(s.acceleration[1], 0.263 * kStandardGravity / 2.0);

  const GroundMotion r = resample(m, 0.01);
  ASSERT_EQ(r.size(), 7u);  // 0.06 s at 10 ms
  const double expected[] = {0.0, 0.5, 1.0, -0.5, -2.0, -0.75, 0.5};
  for (std::size_t k = 0; k < 7; ++k) {
    EXPECT_DOUBLE_EQ(r.acceleration[k], expected[k]) << k;
  }
  const GroundMotion coarse = resample(m, 0.025);  // 0, 0.025, 0.05 → 3 samples
  ASSERT_EQ(coarse.size(), 3u);
  EXPECT_DOUBLE_EQ(coarse.acceleration[1], 0.75 * 1.0 + 0.25 * -2.0);

  EXPECT_THAT([&] { scale_to_peak(m, -1.0); }, ::testing::ThrowsMessage<std::invalid_argument>(
                                                   ::testing::HasSubstr("target_peak = -1")));
  EXPECT_THAT([&] { resample(m, 0.0); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("step = 0")));
}

fs::path find_el_centro() {
  std::vector<fs::path> candidates;
  if (const char* dir = std::getenv("HYLOOP_DATA_DIR")) {
    candidates.emplace_back(fs::path(dir) / "elcentro_ns_1940.txt");
  }
  for (const char* c :
       {"data/ground_motion/elcentro_ns_1940.txt", "data/elcentro_ns_1940.txt",
        "../shared/data/elcentro_ns_1940.txt", "/work/shared/data/elcentro_ns_1940.txt"}) {
    candidates.emplace_back(c);
  }
  for (const auto& c : candidates) {
    if (fs::exists(c)) {
      return c;
    }
  }
  return {};
}

TEST(GroundMotion, ElCentro1940NsPeakDurationAndPointCount) {
  const fs::path p = find_el_centro();
  if (p.empty()) {
    GTEST_SKIP() << "elcentro_ns_1940.txt not found (set HYLOOP_DATA_DIR)";
  }
  const GroundMotion m = read_ground_motion(p);  // AT2 layout despite the .txt name
  EXPECT_EQ(m.size(), 1559u);
  EXPECT_DOUBLE_EQ(m.step, 0.02);
  EXPECT_NEAR(m.duration(), 31.16, 1e-12);
  EXPECT_EQ(m.peak_index(), 101u);
  EXPECT_NEAR(m.acceleration[101], -0.31882 * kStandardGravity, 1e-12);
  EXPECT_NEAR(m.peak(), 0.31882 * kStandardGravity, 1e-12);

  // The RHT paper's input: peak 0.263 g, at the 0.01 s integration step.
  const GroundMotion input = resample(scale_to_peak(m, 0.263 * kStandardGravity), 0.01);
  std::printf(
      "El Centro: %zu points at %.2f s, %.2f s, peak %.5f g at %.2f s; RHT input %zu points, "
      "peak %.5f g\n",
      m.size(), m.step, m.duration(), m.peak() / kStandardGravity,
      static_cast<double>(m.peak_index()) * m.step, input.size(), input.peak() / kStandardGravity);
  EXPECT_EQ(input.size(), 3117u);
  EXPECT_NEAR(input.duration(), 31.16, 1e-9);
  EXPECT_NEAR(input.peak(), 0.263 * kStandardGravity, 1e-12);
  EXPECT_EQ(input.peak_index(), 202u);
  EXPECT_NEAR(input.at(2.02), -0.263 * kStandardGravity, 1e-12);
}

}  // namespace
}  // namespace hyloop::core
