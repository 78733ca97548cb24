#include "hyloop/hal/openfresco.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <mutex>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/hal/openfresco_servo_site.hpp"
#include "hyloop/hal/openfresco_site.hpp"
#include "hyloop/testing/alloc_guard.hpp"
#include "hyloop/testing/openfresco_peer.hpp"

namespace hyloop::hal::openfresco {
namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<std::byte>;

// ---- hand-built frames (public layout: docs/opensees.md, openfresco.hpp) ----

Bytes bytes(std::initializer_list<int> values) {
  Bytes out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

// `prefix` then zeros up to `total` bytes.
Bytes frame(Bytes prefix, std::size_t total) {
  prefix.resize(total, std::byte{0});
  return prefix;
}

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// float64 little-endian, written out: 0.5 = 3FE0…, −0.25 = BFD0…, 1.5 = 3FF8…, −1.5 = BFF8…,
// 1 = 3FF0…, 2 = 4000…, 3 = 4008…, 4 = 4010…, 5 = 4014…, 6 = 4018…, 99 = 4058C0…
const Bytes kF0_5 = bytes({0, 0, 0, 0, 0, 0, 0xE0, 0x3F});
const Bytes kFm0_25 = bytes({0, 0, 0, 0, 0, 0, 0xD0, 0xBF});
const Bytes kF1_5 = bytes({0, 0, 0, 0, 0, 0, 0xF8, 0x3F});
const Bytes kFm1_5 = bytes({0, 0, 0, 0, 0, 0, 0xF8, 0xBF});
const Bytes kF1 = bytes({0, 0, 0, 0, 0, 0, 0xF0, 0x3F});
const Bytes kF2 = bytes({0, 0, 0, 0, 0, 0, 0x00, 0x40});
const Bytes kF3 = bytes({0, 0, 0, 0, 0, 0, 0x08, 0x40});
const Bytes kF4 = bytes({0, 0, 0, 0, 0, 0, 0x10, 0x40});
const Bytes kF5 = bytes({0, 0, 0, 0, 0, 0, 0x14, 0x40});
const Bytes kF6 = bytes({0, 0, 0, 0, 0, 0, 0x18, 0x40});
const Bytes kF13 = bytes({0, 0, 0, 0, 0, 0, 0x2A, 0x40});
const Bytes kF42 = bytes({0, 0, 0, 0, 0, 0, 0x45, 0x40});
const Bytes kF99 = bytes({0, 0, 0, 0, 0, 0xC0, 0x58, 0x40});
constexpr std::size_t kMsg = 256 * 8;  // dataSize 256 → 2048 bytes

// ECGenericTCP as in OpenFresco's OneBayFrame example: -ctrlModes 1 0 0 0 0 -daqModes 1 0 0 1 0.
// 11 int32 LE: 1 0 0 0 0 | 1 0 0 1 0 | 256.
const Bytes kSetupGenericTcp = bytes({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                      0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                      1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0});
// OpenSees genericClient with 2 basic DOFs: ctrl disp/vel/accel = 2, time = 1; daq force = 2;
// dataSize = max(256, 1 + 3·2 + 1, 2²) = 256.
const Bytes kSetupGenericClient2 = bytes({2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,  //
                                          1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                          2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0});

// ---- a recording fake rig ----

class FakeRig : public SiteRig {
 public:
  FakeRig() { trial_values.reserve(100000); }
  void begin_session(const SetupId& setup) override {
    ++begins;
    last_setup = setup;
  }
  hal::DriverStatus trial(const TrialView& trial) noexcept override {
    for (const auto& block : trial.block) {
      for (double v : block) {
        if (trial_values.size() < trial_values.capacity()) trial_values.push_back(v);
      }
    }
    ++trials;
    return status;
  }
  void measure(const DaqView& daq) noexcept override {
    for (std::size_t q = 0; q < kQuantityCount; ++q) {
      for (std::size_t i = 0; i < daq.block[q].size(); ++i) {
        daq.block[q][i] = daq_value[q] + static_cast<double>(i);
      }
    }
    ++measures;
  }
  void commit() noexcept override { ++commits; }
  void end_session(const SessionReport& report) override { ends.push_back(report); }

  std::array<double, kQuantityCount> daq_value{0.5, 0.0, 0.0, -1.5, 0.0};
  hal::DriverStatus status = hal::DriverStatus::kOk;
  int begins = 0;
  int trials = 0;
  int measures = 0;
  int commits = 0;
  SetupId last_setup;
  std::vector<double> trial_values;
  std::vector<SessionReport> ends;
};

RigSignalLayout generic_tcp_layout() {
  RigSignalLayout layout;  // 1 DOF, ctrl disp, daq disp + force
  return layout;
}

RigSignalLayout two_dof_layout() {
  RigSignalLayout layout;
  layout.dofs = 2;
  layout.ctrl = {true, true, true, false, true};
  layout.daq = {false, false, false, true, false};
  return layout;
}

// Feeds all of `input` as one peer would send it; returns the concatenated replies.
Bytes run(SiteSession& session, std::span<const std::byte> input) {
  Bytes replies;
  while (!input.empty() && !session.ended()) {
    const auto r = session.feed(input);
    replies.insert(replies.end(), r.reply.begin(), r.reply.end());
    input = input.subspan(r.consumed);
    if (r.consumed == 0) break;
  }
  return replies;
}

// ---- the protocol library ----

TEST(OpenFresco, SetupIdGoldenFrames) {
  const SetupId tcp{{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256};
  EXPECT_EQ(decode_setup(std::span<const std::byte, kSetupBytes>(kSetupGenericTcp.data(), 44)),
            tcp);
  std::array<std::byte, kSetupBytes> out{};
  encode_setup(tcp, out);
  EXPECT_TRUE(std::equal(out.begin(), out.end(), kSetupGenericTcp.begin()));

  const SetupId client{{2, 2, 2, 0, 1}, {0, 0, 0, 2, 0}, 256};
  EXPECT_EQ(decode_setup(std::span<const std::byte, kSetupBytes>(kSetupGenericClient2.data(), 44)),
            client);
  const auto ctrl = ctrl_layout(client);
  EXPECT_EQ(ctrl.offset, (std::array<std::size_t, 5>{1, 3, 5, 7, 7}));
  EXPECT_EQ(daq_layout(client).offset, (std::array<std::size_t, 5>{0, 0, 0, 0, 2}));
  EXPECT_EQ(slot_name(0), "ctrl disp size");
  EXPECT_EQ(slot_name(8), "daq force size");
  EXPECT_EQ(slot_name(10), "dataSize");
}

TEST(OpenFresco, ActionCodes) {
  EXPECT_EQ(action_from_code(3.0), Action::kSetTrialResponse);
  EXPECT_EQ(action_from_code(15.0), Action::kGetMass);
  EXPECT_EQ(action_from_code(99.0), Action::kTerminate);
  for (double bad :
       {0.0, 16.0, 42.0, 98.0, 4.1, -3.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    EXPECT_FALSE(action_from_code(bad)) << bad;
  }
}

TEST(OpenFresco, ColumnMajorMatrix) {
  const std::vector<double> rows{1, 2, 3, 4, 5, 6, 7, 8, 9};  // entry (i, j) = rows[3i + j]
  std::vector<double> out(9);
  write_column_major(rows, 3, out);
  EXPECT_EQ(out, (std::vector<double>{1, 4, 7, 2, 5, 8, 3, 6, 9}));
}

TEST(OpenFresco, StreamReaderSameMessagesAtEverySplit) {
  Bytes stream;
  for (int m = 0; m < 3; ++m) {
    for (int i = 0; i < 24; ++i) stream.push_back(static_cast<std::byte>(m * 24 + i));
  }
  for (std::size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    StreamReader reader(64);
    ASSERT_TRUE(reader.set_message_bytes(24));
    std::vector<Bytes> got;
    for (std::size_t at = 0; at < stream.size(); at += chunk) {
      auto input = std::span(stream).subspan(at, std::min(chunk, stream.size() - at));
      while (!input.empty()) {
        input = input.subspan(reader.consume(input));
        if (reader.complete()) {
          got.emplace_back(reader.message().begin(), reader.message().end());
          reader.next();
        }
      }
    }
    ASSERT_EQ(got.size(), 3U) << "chunk " << chunk;
    for (std::size_t m = 0; m < 3; ++m) {
      EXPECT_TRUE(std::equal(got[m].begin(), got[m].end(), stream.begin() + 24 * m));
    }
  }
}

TEST(OpenFresco, StreamReaderHardLimit) {
  StreamReader reader(2048);
  EXPECT_FALSE(reader.set_message_bytes(2049));
  EXPECT_FALSE(reader.set_message_bytes(0));
  EXPECT_TRUE(reader.set_message_bytes(2048));
  EXPECT_THROW(StreamReader(0), std::invalid_argument);
}

// ---- the session engine ----

TEST(OpenFrescoSession, TrialGoldenFrame) {
  // genericClient, 1 DOF: ctrl d/v/a = 1, time = 1, daq force = 1; [3, 0.5, −0.25, 2, 1.5].
  const Bytes setup = bytes({1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0,
                             0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0});
  const Bytes trial = frame(cat({kF3, kF0_5, kFm0_25, kF2, kF1_5}), kMsg);
  FakeRig rig;
  RigSignalLayout layout = servo_rig_layout();
  SiteSession session(layout, {}, rig);
  const auto replies = run(session, cat({setup, trial}));
  EXPECT_TRUE(replies.empty());
  EXPECT_EQ(rig.begins, 1);
  EXPECT_EQ(rig.trials, 1);
  EXPECT_EQ(rig.trial_values, (std::vector<double>{0.5, -0.25, 2.0, 1.5}));
  EXPECT_FALSE(session.ended());
}

TEST(OpenFrescoSession, GetDaqReplyGoldenFrame) {
  // ECGenericTCP: trial [3, 0.5], getDaq [6, 0.5 (stale)] → reply [disp 0.5, force −1.5, 0…].
  const Bytes trial = frame(cat({kF3, kF0_5}), kMsg);
  const Bytes get_daq = frame(cat({kF6, kF0_5}), kMsg);
  const Bytes expected = frame(cat({kF0_5, kFm1_5}), kMsg);
  FakeRig rig;
  SiteSession session(generic_tcp_layout(), {}, rig);
  const auto replies = run(session, cat({kSetupGenericTcp, trial, get_daq}));
  EXPECT_EQ(replies, expected);
  EXPECT_EQ(session.report().daq_replies, 1U);
}

TEST(OpenFrescoSession, MatrixReplyGoldenFrame) {
  // K = [[1, 2], [3, 4]] → wire (column-major) 1, 3, 2, 4.
  const Bytes get_tangent = frame(kF13, kMsg);
  const Bytes expected = frame(cat({kF1, kF3, kF2, kF4}), kMsg);
  FakeRig rig;
  SiteMatrices m;
  m.tangent_stiffness = {{1.0, 2.0}, {3.0, 4.0}};
  SiteSession session(two_dof_layout(), m, rig);
  const auto replies = run(session, cat({kSetupGenericClient2, get_tangent}));
  EXPECT_EQ(replies, expected);
  EXPECT_EQ(session.report().matrix_replies, 1U);
}

// A genericClient-style run: set-up, then 3 × (trial, getForce, getTangentStiff, getDaq,
// commit), then terminate.
Bytes full_stream() {
  Bytes s = kSetupGenericClient2;
  const std::array<Bytes, 3> disp{kF0_5, kF1_5, kF2};
  for (const auto& d : disp) {
    s = cat({s, frame(cat({kF3, d, kFm0_25, kF1, kF2, kF3, kF4, kF5}), kMsg)});
    s = cat({s, frame(bytes({0, 0, 0, 0, 0, 0, 0x24, 0x40}), kMsg)});  // 10 getForce
    s = cat({s, frame(kF13, kMsg)});
    s = cat({s, frame(kF6, kMsg)});
    s = cat({s, frame(kF5, kMsg)});
  }
  return cat({s, frame(kF99, kMsg)});
}

struct Outcome {
  Bytes replies;
  std::vector<double> trial_values;
  int commits = 0;
  std::vector<SessionEnd> ends;
  bool operator==(const Outcome&) const = default;
};

Outcome run_split(const Bytes& stream, std::size_t split) {
  FakeRig rig;
  SiteMatrices m;
  m.tangent_stiffness = {{1.0, 2.0}, {3.0, 4.0}};
  SiteSession session(two_dof_layout(), m, rig);
  Outcome out;
  const auto a = run(session, std::span(stream).first(split));
  const auto b = run(session, std::span(stream).subspan(split));
  out.replies = cat({a, b});
  out.trial_values = rig.trial_values;
  out.commits = rig.commits;
  for (const auto& e : rig.ends) out.ends.push_back(e.end);
  return out;
}

TEST(OpenFrescoSession, SameExchangeAtEveryByteSplit) {
  const Bytes stream = full_stream();
  const Outcome whole = run_split(stream, stream.size());
  ASSERT_EQ(whole.replies.size(), 9 * kMsg);  // 3 × (getForce, getTangent, getDaq)
  EXPECT_EQ(whole.trial_values.size(), 3U * 7U);
  EXPECT_EQ(whole.commits, 3);
  EXPECT_EQ(whole.ends, std::vector<SessionEnd>{SessionEnd::kTerminated});
  for (std::size_t split = 0; split < stream.size(); ++split) {
    ASSERT_EQ(run_split(stream, split), whole) << "split at byte " << split;
  }
  // And one byte at a time.
  FakeRig rig;
  SiteMatrices m;
  m.tangent_stiffness = {{1.0, 2.0}, {3.0, 4.0}};
  SiteSession session(two_dof_layout(), m, rig);
  Bytes replies;
  for (std::size_t i = 0; i < stream.size() && !session.ended(); ++i) {
    const auto r = session.feed(std::span(stream).subspan(i, 1));
    ASSERT_EQ(r.consumed, 1U);
    replies.insert(replies.end(), r.reply.begin(), r.reply.end());
  }
  EXPECT_EQ(replies, whole.replies);
}

struct Mismatch {
  SetupId setup;
  const char* expected;  // a fragment of the reason
};

class OpenFrescoSetupMismatch : public ::testing::TestWithParam<Mismatch> {};

TEST_P(OpenFrescoSetupMismatch, RefusedBeforeTheFirstTrial) {
  std::array<std::byte, kSetupBytes> setup{};
  encode_setup(GetParam().setup, setup);
  const Bytes trial = frame(cat({kF3, kF0_5}), kMsg);
  FakeRig rig;
  SiteSession session(servo_rig_layout(), {}, rig);
  const auto replies = run(session, cat({Bytes(setup.begin(), setup.end()), trial}));
  EXPECT_TRUE(replies.empty());  // the peer gets no protocol error
  EXPECT_EQ(rig.begins, 0);
  EXPECT_EQ(rig.trials, 0);
  ASSERT_EQ(rig.ends.size(), 1U);
  EXPECT_EQ(rig.ends[0].end, SessionEnd::kRefused);
  EXPECT_NE(rig.ends[0].reason.find(GetParam().expected), std::string::npos) << rig.ends[0].reason;
  EXPECT_EQ(session.report().bytes_received, kSetupBytes);  // the trial was never read
}

INSTANTIATE_TEST_SUITE_P(
    Cases, OpenFrescoSetupMismatch,
    ::testing::Values(
        Mismatch{{{2, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256},
                 "slot 0 (ctrl disp size) = 2: must be 0 or 1 (the rig's control DOFs)"},
        Mismatch{{{1, 0, 0, 1, 0}, {1, 0, 0, 1, 0}, 256},
                 "slot 3 (ctrl force size) = 1: must be 0 (the rig accepts disp, vel, accel, "
                 "time)"},
        Mismatch{{{1, 0, 0, 0, 0}, {1, 0, 1, 1, 0}, 256},
                 "slot 7 (daq accel size) = 1: must be 0 (the rig measures disp, vel, force, "
                 "time)"},
        Mismatch{{{1, 0, 0, 0, 2}, {1, 0, 0, 1, 0}, 256},
                 "slot 4 (ctrl time size) = 2: must be 0 or 1 (one time value)"},
        Mismatch{{{0, 1, 0, 0, 0}, {1, 0, 0, 1, 0}, 256},
                 "slot 0 (ctrl disp size) = 0: must be 1 (the rig is driven by disp)"},
        Mismatch{{{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 1 << 20},
                 "slot 10 (dataSize) = 1048576: must be in [2, 4096]"},
        Mismatch{{{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 1}, "slot 10 (dataSize) = 1: must be in"},
        Mismatch{{{-1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256},
                 "slot 0 (ctrl disp size) = -1: must be in [0, 4096]"},
        Mismatch{{{1, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, 256}, "daq sizes) are all 0"}));

TEST(OpenFrescoSession, TerminateHasNoReply) {
  const Bytes trial = frame(cat({kF3, kF0_5}), kMsg);
  const Bytes terminate = frame(cat({kF99, kF0_5}), kMsg);  // stale trial values, as sent
  FakeRig rig;
  SiteSession session(generic_tcp_layout(), {}, rig);
  const Bytes stream = cat({kSetupGenericTcp, trial, terminate, trial});
  const auto replies = run(session, stream);
  EXPECT_TRUE(replies.empty());
  EXPECT_TRUE(session.ended());
  EXPECT_EQ(session.report().end, SessionEnd::kTerminated);
  EXPECT_EQ(rig.trials, 1);  // nothing after 99 is read
  EXPECT_EQ(session.report().bytes_received, kSetupBytes + 2 * kMsg);
  ASSERT_EQ(rig.ends.size(), 1U);
  EXPECT_EQ(session.feed(trial).consumed, 0U);
}

TEST(OpenFrescoSession, UnknownCodeEndsTheSession) {
  for (const auto& code :
       {kF42, bytes({0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x10, 0x40}) /*4.1*/, kF4 /*execute*/}) {
    FakeRig rig;
    SiteSession session(generic_tcp_layout(), {}, rig);
    const auto replies = run(session, cat({kSetupGenericTcp, frame(code, kMsg), frame(kF6, kMsg)}));
    EXPECT_TRUE(replies.empty());  // neither the unknown code nor the getDaq after it
    EXPECT_EQ(session.report().end, SessionEnd::kProtocolError);
    ASSERT_EQ(rig.ends.size(), 1U);
    EXPECT_NE(rig.ends[0].reason.find("message 1: action code "), std::string::npos)
        << rig.ends[0].reason;
  }
  FakeRig rig;
  SiteSession session(generic_tcp_layout(), {}, rig);
  run(session, cat({kSetupGenericTcp, frame(kF42, kMsg)}));
  EXPECT_NE(session.report().reason.find("action code 42 is not one the site serves"),
            std::string::npos);
}

TEST(OpenFrescoSession, OpenAndSetupCodesAreIgnored) {
  FakeRig rig;
  SiteSession session(generic_tcp_layout(), {}, rig);
  const auto replies =
      run(session, cat({kSetupGenericTcp, frame(kF1, kMsg), frame(kF2, kMsg), frame(kF6, kMsg)}));
  EXPECT_EQ(replies.size(), kMsg);
  EXPECT_FALSE(session.ended());
}

TEST(OpenFrescoSession, PeerClosingMidMessageIsCut) {
  const Bytes trial = frame(cat({kF3, kF0_5}), kMsg);
  FakeRig rig;
  SiteSession session(generic_tcp_layout(), {}, rig);
  run(session, cat({kSetupGenericTcp, trial, Bytes(trial.begin(), trial.begin() + 1000)}));
  session.peer_closed();
  EXPECT_EQ(session.report().end, SessionEnd::kCut);
  EXPECT_EQ(session.report().reason, "the peer closed mid-message, after 1000 of 2048 bytes");
  EXPECT_EQ(rig.trials, 1);
  ASSERT_EQ(rig.ends.size(), 1U);
  session.peer_closed();  // once only
  session.abort("again");
  EXPECT_EQ(rig.ends.size(), 1U);
}

TEST(OpenFrescoSession, RigFaultEndsTheSession) {
  FakeRig rig;
  rig.status = hal::DriverStatus::kFault;
  SiteSession session(generic_tcp_layout(), {}, rig);
  run(session, cat({kSetupGenericTcp, frame(cat({kF3, kF0_5}), kMsg), frame(kF6, kMsg)}));
  EXPECT_EQ(session.report().end, SessionEnd::kRigFault);
  EXPECT_EQ(rig.measures, 0);
}

TEST(OpenFrescoSession, NoAllocationPerMessage) {
  const Bytes step = cat({frame(cat({kF3, kF0_5, kFm0_25, kF1, kF2, kF3, kF4, kF5}), kMsg),
                          frame(kF13, kMsg), frame(kF6, kMsg), frame(kF5, kMsg)});
  FakeRig rig;
  SiteMatrices m;
  m.tangent_stiffness = {{1.0, 2.0}, {3.0, 4.0}};
  SiteSession session(two_dof_layout(), m, rig);
  run(session, kSetupGenericClient2);
  ASSERT_TRUE(session.set_up());
  std::size_t replies = 0;
  {
    testing::AllocGuard guard;
    for (int k = 0; k < 200; ++k) {
      auto input = std::span<const std::byte>(step);
      while (!input.empty()) {
        const auto r = session.feed(input);
        replies += r.reply.size();
        input = input.subspan(r.consumed);
      }
    }
    EXPECT_EQ(guard.allocations(), 0U);
  }
  EXPECT_EQ(replies, 200 * 2 * kMsg);
}

TEST(OpenFrescoSession, LayoutAndMatrixValidationNameTheField) {
  FakeRig rig;
  RigSignalLayout layout;
  layout.dofs = 0;
  try {
    SiteSession s(layout, {}, rig);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "dofs = 0: must be in [1, 64]");
  }
  layout = {};
  layout.drive = Quantity::kForce;
  EXPECT_THROW(SiteSession(layout, {}, rig), std::invalid_argument);
  layout = {};
  layout.max_data_size = 100;
  EXPECT_THROW(SiteSession(layout, {}, rig), std::invalid_argument);
  SiteMatrices m;
  m.mass = {{1.0, 2.0}};
  try {
    SiteSession s(two_dof_layout(), m, rig);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "mass has 1 rows: must be 2 (the rig's DOFs)");
  }
}

// ---- over TCP, against the servo-hydraulic emulator ----

ServoRigConfig servo_config() {
  ServoRigConfig c;
  c.servo.step = 0.01;
  c.servo.specimen_stiffness = 2.0e5;  // N/m
  c.servo.specimen_damping = 500.0;    // N·s/m
  c.safety.step = 0.01;
  c.safety.limits = {.position_min = -0.05,
                     .position_max = 0.05,
                     .velocity_max = 0.5,
                     .acceleration_max = hal::kServoHydraulicAccelerationMax};
  c.safety.watchdog_cycles = 10;
  c.safety.stop_deceleration = 5.0;
  return c;
}

SiteServerConfig server_config(bool quick_ack = true) {
  SiteServerConfig c;
  c.address = "127.0.0.1";
  c.port = 0;
  c.poll_timeout = 50ms;
  c.quick_ack = quick_ack;
  return c;
}

using Peer = testing::OpenFrescoPeer;

double sine(int k) { return 0.01 * std::sin(2.0 * std::numbers::pi * 1.0 * 0.01 * k); }

using PeerRun = testing::GenericTcpRun;

// ECGenericTCP's exchange with a 10 mm, 1 Hz sine (openfresco_peer.hpp); every reply came and
// the site closed after terminate.
PeerRun run_generic_tcp(std::uint16_t port, int steps) {
  PeerRun out = testing::run_generic_tcp(port, steps, sine);
  EXPECT_EQ(out.failed_step, 0) << "no daq reply at step " << out.failed_step;
  EXPECT_TRUE(out.closed);
  return out;
}

TEST(OpenFrescoTcp, OpenSeesPeerFullRunMatchesTheRecord) {
  ServoSite site(server_config(), servo_config());
  constexpr int kSteps = 300;
  const PeerRun run = run_generic_tcp(site.port(), kSteps);
  ASSERT_TRUE(site.rig().wait_for_sessions(1, 10s));
  const auto reports = site.rig().reports();
  ASSERT_EQ(reports.size(), 1U);
  EXPECT_EQ(reports[0].end, SessionEnd::kTerminated) << reports[0].reason;
  EXPECT_EQ(reports[0].trials, static_cast<std::uint64_t>(kSteps));
  EXPECT_EQ(reports[0].commits, static_cast<std::uint64_t>(kSteps));
  EXPECT_EQ(reports[0].daq_replies, static_cast<std::uint64_t>(kSteps));
  const auto records = site.rig().records();
  ASSERT_EQ(records.size(), static_cast<std::size_t>(kSteps));
  ASSERT_EQ(run.disp.size(), records.size());
  double peak = 0.0;
  for (std::size_t k = 0; k < records.size(); ++k) {
    EXPECT_EQ(records[k].command, sine(static_cast<int>(k) + 1));
    EXPECT_EQ(records[k].output, records[k].command);                  // within the safety window
    EXPECT_EQ(run.disp[k], records[k].measurement.displacement) << k;  // bit for bit
    EXPECT_EQ(run.force[k], records[k].measurement.force) << k;
    peak = std::max(peak, std::abs(run.disp[k]));
  }
  EXPECT_GT(peak, 0.005);  // the servo moved (lagging the 10 mm sine)
  EXPECT_TRUE(site.rig().at_rest());
}

TEST(OpenFrescoTcp, GenericClientPeerGetsForceAndStiffness) {
  ServoSite site(server_config(), servo_config());
  Peer peer(site.port());
  ASSERT_TRUE(peer.connected());
  // genericClient, 1 basic DOF: ctrl d/v/a = 1, time = 1; daq force = 1; dataSize 256.
  peer.send_setup({{1, 1, 1, 0, 1}, {0, 0, 0, 1, 0}, 256});
  std::vector<double> msg(256, 0.0);
  std::vector<double> reply(256, 0.0);
  msg[0] = 12.0;
  peer.send_doubles(msg);
  ASSERT_TRUE(peer.recv_doubles(reply));
  EXPECT_EQ(reply[0], 2.0e5);
  for (int k = 1; k <= 20; ++k) {
    msg = std::vector<double>(256, 0.0);
    msg[0] = 3.0;
    msg[1] = sine(k);
    msg[2] = 0.01 * 2.0 * std::numbers::pi * std::cos(2.0 * std::numbers::pi * 0.01 * k);
    msg[4] = 0.01 * k;
    peer.send_doubles(msg);
    msg[0] = 10.0;
    peer.send_doubles(msg);
    ASSERT_TRUE(peer.recv_doubles(reply));
    const auto records = site.rig().records();
    ASSERT_EQ(records.size(), static_cast<std::size_t>(k));
    EXPECT_EQ(reply[0], records.back().measurement.force);
    EXPECT_EQ(records.back().command_velocity, msg[2]);
    msg[0] = 14.0;
    peer.send_doubles(msg);
    ASSERT_TRUE(peer.recv_doubles(reply));
    EXPECT_EQ(reply[0], 500.0);
    msg[0] = 5.0;
    peer.send_doubles(msg);
  }
  msg[0] = 99.0;
  peer.send_doubles(msg);
  EXPECT_TRUE(peer.sees_eof());
  ASSERT_TRUE(site.rig().wait_for_sessions(1, 10s));
  EXPECT_EQ(site.rig().reports()[0].end, SessionEnd::kTerminated);
  EXPECT_EQ(site.rig().commits(), 20U);
}

double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

TEST(OpenFrescoTcp, PeerDyingMidMessageIsCutAndTheSiteServesTheNext) {
  std::vector<std::string> log;
  std::mutex log_mutex;
  auto config = server_config();
  config.log = [&](std::string_view line) {
    const std::lock_guard lock(log_mutex);
    log.emplace_back(line);
  };
  ServoSite site(config, servo_config());
  {
    Peer peer(site.port());
    ASSERT_TRUE(peer.connected());
    peer.send_setup({{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256});
    std::vector<double> msg(256, 0.0);
    msg[0] = 3.0;
    msg[1] = 0.004;
    peer.send_doubles(msg);
    Bytes half(1000);
    peer.send(half);
  }  // closed mid-message
  ASSERT_TRUE(site.rig().wait_for_sessions(1, 10s));
  auto reports = site.rig().reports();
  EXPECT_EQ(reports[0].end, SessionEnd::kCut);
  EXPECT_EQ(reports[0].reason, "the peer closed mid-message, after 1000 of 2048 bytes");
  EXPECT_TRUE(site.rig().at_rest());
  // Unlike a recv() loop that ignores EOF, the site does not spin while it waits.
  const double cpu0 = process_cpu_seconds();
  std::this_thread::sleep_for(300ms);
  EXPECT_LT(process_cpu_seconds() - cpu0, 0.15);

  const PeerRun next = run_generic_tcp(site.port(), 10);
  EXPECT_EQ(next.disp.size(), 10U);
  ASSERT_TRUE(site.rig().wait_for_sessions(2, 10s));
  reports = site.rig().reports();
  EXPECT_EQ(reports[1].end, SessionEnd::kTerminated);
  const auto records = site.rig().records();
  ASSERT_EQ(records.size(), 11U);
  EXPECT_EQ(records[0].session, 0U);
  EXPECT_EQ(records[1].session, 1U);
  const std::lock_guard lock(log_mutex);
  EXPECT_TRUE(std::any_of(log.begin(), log.end(), [](const std::string& l) {
    return l.find("cut: the peer closed mid-message") != std::string::npos;
  }));
}

TEST(OpenFrescoTcp, SilentPeerIsCutAfterTheIdleTimeout) {
  auto config = server_config();
  config.idle_timeout = 200ms;
  ServoSite site(config, servo_config());
  Peer peer(site.port());
  ASSERT_TRUE(peer.connected());
  peer.send_setup({{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256});
  EXPECT_TRUE(peer.sees_eof());
  ASSERT_TRUE(site.rig().wait_for_sessions(1, 10s));
  const auto report = site.rig().reports()[0];
  EXPECT_EQ(report.end, SessionEnd::kCut);
  EXPECT_EQ(report.reason, "no bytes from the peer for 200 ms");
  EXPECT_TRUE(site.rig().at_rest());
}

TEST(OpenFrescoTcp, SizeMismatchClosesWithoutAReply) {
  ServoSite site(server_config(), servo_config());
  Peer peer(site.port());
  ASSERT_TRUE(peer.connected());
  peer.send_setup({{2, 0, 0, 0, 0}, {2, 0, 0, 2, 0}, 256});
  std::vector<double> msg(256, 0.0);
  msg[0] = 3.0;
  peer.send_doubles(msg);
  EXPECT_TRUE(peer.sees_eof());
  ASSERT_TRUE(site.rig().wait_for_sessions(1, 10s));
  EXPECT_EQ(site.rig().reports()[0].end, SessionEnd::kRefused);
  EXPECT_TRUE(site.rig().records().empty());
}

TEST(OpenFrescoTcp, BindsOnlyTheConfiguredAddress) {
  auto config = server_config();
  config.address = "localhost";
  EXPECT_THROW({ ServoSite refused(config, servo_config()); }, std::invalid_argument);
  config.address = "127.0.0.2";
  ServoSite site(config, servo_config());
  Peer peer(site.port());  // 127.0.0.1: nobody listens there on this port
  EXPECT_FALSE(peer.connected());
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

// Measured, not asserted (DESIGN.md §9): the step round trip trial + getDaq → reply on
// loopback, with the peer's Nagle on as OpenFresco leaves it.
TEST(OpenFrescoTcp, StepRoundTripWithNagleOnThePeer) {
  for (const bool quick_ack : {true, false}) {
    ServoSite site(server_config(quick_ack), servo_config());
    const int steps = quick_ack ? 2000 : 100;
    const PeerRun run = run_generic_tcp(site.port(), steps);
    ASSERT_EQ(run.step_us.size(), static_cast<std::size_t>(steps));
    std::cout << "openfresco step round trip, loopback, peer Nagle on, site TCP_NODELAY"
              << (quick_ack ? " + TCP_QUICKACK" : " only") << ", N = " << steps << ": p50 "
              << percentile(run.step_us, 0.5) << " us, p99 " << percentile(run.step_us, 0.99)
              << " us, max " << percentile(run.step_us, 1.0) << " us\n";
  }
}

}  // namespace
}  // namespace hyloop::hal::openfresco
