// Run export and HDF5 recording (issue 14 §2): units from the "name[unit]" headers, the
// outputs.format field of every kind, the recorder's rows bit for bit, no allocation on the
// loop's side, run.h5 of a complete and of a recovered run directory.
#include "hyloop/recording/hdf5_recorder.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/recording/run_directory.hpp"
#include "hyloop/recording/run_export.hpp"
#include "hyloop/testing/alloc_guard.hpp"
#include "hyloop/testing/scratch_dir.hpp"

namespace hyloop::recording {
using experiment::ColumnHeader;
using experiment::make_experiment;
using experiment::make_experiment_from_text;
using experiment::parse_column_header;
using experiment::SampleTable;
using experiment::ScenarioError;
namespace {

namespace fs = std::filesystem;
const fs::path kSource = HYLOOP_SOURCE_DIR;

fs::path temp_dir(const std::string& name) { return hyloop::testing::scratch_dir("hdf5", name); }

void write(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

/// Equal as bit patterns (NaN payloads, signed zeros).
::testing::AssertionResult same_bits(const RunTable& a, const RunTable& b) {
  if (a.headers != b.headers) return ::testing::AssertionFailure() << "headers differ";
  if (a.rows != b.rows) {
    return ::testing::AssertionFailure() << a.rows << " rows vs " << b.rows;
  }
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    if (std::bit_cast<std::uint64_t>(a.values[i]) != std::bit_cast<std::uint64_t>(b.values[i])) {
      return ::testing::AssertionFailure()
             << "value " << i << " (row " << i / a.headers.size() << ", column "
             << a.headers[i % a.headers.size()] << "): " << a.values[i] << " vs " << b.values[i];
    }
  }
  return ::testing::AssertionSuccess();
}

RunTable table_of(const SampleTable& s) {
  RunTable t;
  t.headers = s.headers();
  t.rows = s.rows();
  for (std::size_t r = 0; r < s.rows(); ++r) {
    t.values.insert(t.values.end(), s.row(r).begin(), s.row(r).end());
  }
  return t;
}

TEST(ColumnHeader, NameAndUnitComeFromTheHeader) {
  EXPECT_EQ(parse_column_header("x[m]").name, "x");
  EXPECT_EQ(parse_column_header("x[m]").unit, "m");
  EXPECT_EQ(parse_column_header("k_h[N*s/m]").unit, "N*s/m");
  EXPECT_EQ(parse_column_header("ti[kg^2/s^2]").unit, "kg^2/s^2");
  EXPECT_EQ(parse_column_header("valve_position[-]").unit, "-");
  EXPECT_EQ(parse_column_header("plain").name, "plain");
  EXPECT_EQ(parse_column_header("plain").unit, "");
}

// Every kind reads, validates and writes back outputs.format.
class OutputFormat : public ::testing::TestWithParam<const char*> {};

TEST_P(OutputFormat, IsValidatedWithFieldValueAndAllowedValues) {
  const std::string path = (kSource / GetParam()).string();
  try {
    make_experiment(path, {"outputs.format=parquet"});
    FAIL() << "outputs.format=parquet was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("outputs.format = \"parquet\": must be csv or hdf5"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(make_experiment(path, {})->output_format(), "csv");
  const auto e = make_experiment(path, {"outputs.format=hdf5"});
  EXPECT_EQ(e->output_format(), "hdf5");
  EXPECT_EQ(make_experiment_from_text(e->resolved_yaml(), "resolved", {})->output_format(), "hdf5");
}

INSTANTIATE_TEST_SUITE_P(Kinds, OutputFormat,
                         ::testing::Values("scenarios/sits/table1_scvg.yaml",
                                           "scenarios/rht/p4.yaml", "scenarios/fcu/polynomial.yaml",
                                           "scenarios/vrths/case1_sample.yaml"));

TEST(Hdf5Recorder, OnRowAllocatesNothing) {
  const fs::path dir = temp_dir("alloc");
  std::vector<std::string> columns;
  for (int c = 0; c < 30; ++c) {
    std::string name = "c";  // (gcc 12 warns falsely on "c" + std::to_string(c))
    name += std::to_string(c);
    name += "[m]";
    columns.push_back(name);
  }
  Hdf5Recorder recorder(dir / "run.h5", columns);
  std::vector<double> row(columns.size(), 0.0);
  std::size_t allocations = 0;
  {
    testing::AllocGuard guard;
    for (int k = 0; k < 20000; ++k) {
      row[0] = k;
      recorder.on_row(row);
    }
    allocations = guard.allocations();
  }
  EXPECT_EQ(allocations, 0U);
  write(dir / "summary.json", "{}\n");
  write(dir / "scenario.yaml", "name: x\n");
  recorder.finish(dir);
  EXPECT_EQ(recorder.rows_written(), 20000U);
  fs::remove_all(dir);
}

TEST(Hdf5Recorder, EveryRowComesBackBitForBitThroughTheRing) {
  const fs::path dir = temp_dir("bits");
  const std::vector<std::string> columns = {"time[s]", "x[m]", "odd[-]"};
  // More rows than the ring holds: the loop side waits for the writer, nothing is lost.
  const std::size_t rows = Hdf5Recorder::kRingRows * 3 + 17;
  RunTable expected;
  expected.headers = columns;
  expected.rows = rows;
  const double specials[] = {-0.0,
                             std::numeric_limits<double>::quiet_NaN(),
                             std::bit_cast<double>(std::uint64_t{0x7ff8000000000123}),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::denorm_min(),
                             0.1 + 0.2};
  {
    Hdf5Recorder recorder(dir / "run.h5", columns);
    for (std::size_t k = 0; k < rows; ++k) {
      const double row[3] = {static_cast<double>(k) * 1e-3, std::sin(static_cast<double>(k)),
                             specials[k % std::size(specials)]};
      expected.values.insert(expected.values.end(), row, row + 3);
      recorder.on_row(row);
    }
    write(dir / "summary.json", "{\"steps\": 1}\n");
    write(dir / "scenario.yaml", "name: bits\n");
    write(dir / "cycles.csv", "cycle[-],e_R[-]\n0,0.5\n1,0.25\n");
    recorder.finish(dir);
    EXPECT_EQ(recorder.rows_lost(), 0U);
    std::cout << "rows " << rows << ", flushes " << recorder.flushes() << ", writer "
              << recorder.writer_seconds() << " s, stalls " << recorder.stalls() << "\n";
  }
  EXPECT_TRUE(same_bits(read_hdf5_table(dir / "run.h5", "samples"), expected));
  const RunTable cycles = read_hdf5_table(dir / "run.h5", "cycles");
  EXPECT_TRUE(same_bits(cycles, read_run_table(dir / "cycles.csv")));
  fs::remove_all(dir);
}

TEST(Hdf5Recorder, ARowOfTheWrongLengthFailsFinishNamingTheFile) {
  const fs::path dir = temp_dir("length");
  Hdf5Recorder recorder(dir / "run.h5", {"a[m]", "b[m]"});
  recorder.on_row(std::vector<double>{1.0});
  write(dir / "summary.json", "{}\n");
  write(dir / "scenario.yaml", "name: x\n");
  try {
    recorder.finish(dir);
    FAIL() << "finish() accepted a lost row";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("run.h5: 1 rows were not written"), std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

// A run recorded with outputs.format: hdf5: run.h5 holds the rows of samples.csv bit for bit,
// the summary, the resolved scenario and cycles.csv; a killed recording is recovered from the
// journal with run.h5 rewritten.
TEST(Hdf5Recording, CompleteAndRecoveredRunsHoldTheRowsOfSamplesCsv) {
  const fs::path dir = temp_dir("run");
  const std::vector<std::string> overrides = {"outputs.format=hdf5", "timing.duration_s=6"};
  const std::string scenario = (kSource / "scenarios/sits/table1_scvg.yaml").string();
  {
    const auto e = make_experiment(scenario, overrides);
    RunRecording recording(dir / "complete", journal_header(*e, "id", "test", "in_process"), false);
    ASSERT_NE(recording.hdf5(), nullptr);
    e->set_row_observer(&recording.observer());
    e->run();
    e->set_row_observer(nullptr);
    recording.complete(*e);
    EXPECT_FALSE(is_incomplete(dir / "complete"));
    const RunTable h5 = read_hdf5_table(dir / "complete" / kRunHdf5File, "samples");
    EXPECT_EQ(h5.rows, static_cast<std::size_t>(e->cycle()));
    EXPECT_TRUE(same_bits(h5, table_of(e->samples())));
    EXPECT_TRUE(same_bits(h5, read_run_table(dir / "complete" / "samples.csv")));
    EXPECT_TRUE(same_bits(read_hdf5_table(dir / "complete" / kRunHdf5File, "cycles"),
                          read_run_table(dir / "complete" / "cycles.csv")));
  }
  {
    const auto e = make_experiment(scenario, overrides);
    {
      RunRecording recording(dir / "killed", journal_header(*e, "id", "test", "in_process"), false);
      e->set_row_observer(&recording.observer());
      for (int k = 0; k < 1000; ++k) ASSERT_TRUE(e->step());
      e->set_row_observer(nullptr);
      // Destroyed without complete(), as a killed recorder; run.h5 is then cut short, as a
      // file whose writer died mid-write may be.
    }
    fs::resize_file(dir / "killed" / kRunHdf5File, 1000);
    EXPECT_THROW(export_run(dir / "killed", ExportFormat::kHdf5, dir / "x.h5"), std::runtime_error);
    const RecoveryResult r = recover_run_directory(dir / "killed");
    EXPECT_EQ(r.cycles, 1000U);
    const RunTable h5 = read_hdf5_table(dir / "killed" / kRunHdf5File, "samples");
    EXPECT_EQ(h5.rows, 1000U);
    EXPECT_TRUE(same_bits(h5, read_run_table(dir / "killed" / "samples.csv")));
  }
  fs::remove_all(dir);
}

TEST(Export, AnIncompleteRunDirectoryIsRefusedWithTheRecoveryCommand) {
  const fs::path dir = temp_dir("incomplete");
  write(dir / kIncompleteMarker, "x\n");
  try {
    export_run(dir, ExportFormat::kMat, dir / "x.mat");
    FAIL() << "an incomplete run directory was exported";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("hyloop summary --recover"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "x.mat"));
  EXPECT_THROW(parse_export_format("csv"), std::invalid_argument);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hyloop::recording
