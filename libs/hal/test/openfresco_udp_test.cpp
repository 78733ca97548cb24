// The RemoteTest framing over UDP (OpenFresco's UDP_Socket: `expControl GenericTCP … -udp`,
// `startSimAppSiteServer … -udp`): the site (SiteServer, SiteTransport::kUdp) against a peer
// playing UDP_Socket, and hyloop's client (SiteClient) against the site and against a fake site.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <iostream>
#include <mutex>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/hal/openfresco_client.hpp"
#include "hyloop/hal/openfresco_servo_site.hpp"
#include "hyloop/hal/openfresco_site.hpp"
#include "hyloop/testing/openfresco_peer.hpp"

namespace hyloop::hal::openfresco {
namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<std::byte>;
using Clock = std::chrono::steady_clock;
using Peer = testing::OpenFrescoUdpPeer;

Bytes bytes(std::initializer_list<int> values) {
  Bytes out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

Bytes frame(std::initializer_list<Bytes> parts, std::size_t total) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  out.resize(total, std::byte{0});
  return out;
}

// float64 little-endian, written out: 3 = 4008…, 6 = 4018…, 99 = 4058C0…, 0.5 = 3FE0…,
// −1.5 = BFF8….
const Bytes kF3 = bytes({0, 0, 0, 0, 0, 0, 0x08, 0x40});
const Bytes kF6 = bytes({0, 0, 0, 0, 0, 0, 0x18, 0x40});
const Bytes kF99 = bytes({0, 0, 0, 0, 0, 0xC0, 0x58, 0x40});
const Bytes kF0_5 = bytes({0, 0, 0, 0, 0, 0, 0xE0, 0x3F});
const Bytes kFm1_5 = bytes({0, 0, 0, 0, 0, 0, 0xF8, 0xBF});
constexpr std::size_t kMsg = 256 * 8;
// GenericTCP -udp as in OpenFresco's OneBayFrame: 11 int32 LE 1 0 0 0 0 | 1 0 0 1 0 | 256.
const Bytes kSetupGenericTcp = bytes({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                      0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                      1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0});

// A rig that answers disp 0.5 and force −1.5 and keeps what it was sent (thread-safe: the
// server calls it from its thread).
class ScriptedRig : public SiteRig {
 public:
  void begin_session(const SetupId& /*setup*/) override {}
  hal::DriverStatus trial(const TrialView& trial) noexcept override {
    const std::lock_guard lock(mutex_);
    for (const double v : trial.of(Quantity::kDisp)) trials_.push_back(v);
    return hal::DriverStatus::kOk;
  }
  void measure(const DaqView& daq) noexcept override {
    for (double& v : daq.of(Quantity::kDisp)) v = 0.5;
    for (double& v : daq.of(Quantity::kForce)) v = -1.5;
  }
  void commit() noexcept override {}
  void end_session(const SessionReport& report) override {
    const std::lock_guard lock(mutex_);
    ends_.push_back(report);
    ended_.notify_all();
  }
  SessionReport wait_for_end(std::size_t n = 1) {
    std::unique_lock lock(mutex_);
    EXPECT_TRUE(ended_.wait_for(lock, 10s, [&] { return ends_.size() >= n; }));
    return ends_.size() >= n ? ends_[n - 1] : SessionReport{};
  }
  std::vector<double> trials() {
    const std::lock_guard lock(mutex_);
    return trials_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ended_;
  std::vector<double> trials_;
  std::vector<SessionReport> ends_;
};

SiteServerConfig udp_server(std::chrono::milliseconds timeout = 5s) {
  SiteServerConfig c;
  c.transport = SiteTransport::kUdp;
  c.address = "127.0.0.1";
  c.port = 0;
  c.poll_timeout = 20ms;
  c.udp_timeout = timeout;
  return c;
}

// A SiteServer over UDP with a ScriptedRig on its own thread.
struct ScriptedSite {
  explicit ScriptedSite(SiteServerConfig config = udp_server(),
                        RigSignalLayout layout = RigSignalLayout{})
      : server(std::move(config), layout, {}, rig), thread([this] { server.run(); }) {}
  ~ScriptedSite() {
    server.stop();
    thread.join();
  }
  ScriptedRig rig;
  SiteServer server;
  std::thread thread;
};

ServoRigConfig servo_config() {
  ServoRigConfig c;
  c.servo.step = 0.01;
  c.servo.specimen_stiffness = 2.0e5;
  c.servo.specimen_damping = 500.0;
  c.safety.step = 0.01;
  c.safety.limits = {.position_min = -0.05,
                     .position_max = 0.05,
                     .velocity_max = 0.5,
                     .acceleration_max = hal::kServoHydraulicAccelerationMax};
  c.safety.stop_deceleration = 5.0;
  return c;
}

double sine(int k) { return 0.01 * std::sin(2.0 * std::numbers::pi * 0.01 * k); }

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

TEST(OpenFrescoUdp, GoldenDatagramsOneMessageEach) {
  ScriptedSite site;
  Peer peer(site.server.port());
  ASSERT_TRUE(peer.send_datagram(kSetupGenericTcp));           // 44 bytes
  ASSERT_TRUE(peer.send_datagram(frame({kF3, kF0_5}, kMsg)));  // trial d = 0.5
  ASSERT_TRUE(peer.send_datagram(frame({kF6, kF0_5}, kMsg)));  // getDaq, stale trial
  Bytes reply(4 * kMsg);
  ASSERT_EQ(peer.receive_datagram(reply), static_cast<long>(kMsg));  // one datagram, 2048 bytes
  reply.resize(kMsg);
  EXPECT_EQ(reply, frame({kF0_5, kFm1_5}, kMsg));  // daq disp 0.5, daq force −1.5, zeros
  ASSERT_TRUE(peer.send_datagram(frame({kF99}, kMsg)));
  const SessionReport report = site.rig.wait_for_end();
  EXPECT_EQ(report.end, SessionEnd::kTerminated) << report.reason;
  EXPECT_EQ(report.trials, 1U);
  EXPECT_EQ(report.daq_replies, 1U);
  EXPECT_EQ(report.bytes_received, 44U + 3 * kMsg);
  EXPECT_EQ(site.rig.trials(), std::vector<double>{0.5});
  peer.set_receive_timeout(100ms);
  EXPECT_EQ(peer.receive_datagram(reply), -1);  // nothing answers terminate
}

TEST(OpenFrescoUdp, WrongSizeAndForeignDatagramsAreDroppedAndCounted) {
  ScriptedSite site;
  Peer peer(site.server.port());
  Peer stranger(site.server.port());
  ASSERT_TRUE(peer.send_datagram(kSetupGenericTcp));
  ASSERT_TRUE(peer.send_datagram(frame({kF3, kF0_5}, kMsg - 1)));   // one byte short
  ASSERT_TRUE(peer.send_datagram(bytes({'a'})));                    // not a message piece
  ASSERT_TRUE(peer.send_datagram(frame({kF3, kF0_5}, kMsg + 8)));   // one double too many
  ASSERT_TRUE(stranger.send_datagram(frame({kF3, kFm1_5}, kMsg)));  // a trial from elsewhere
  ASSERT_TRUE(stranger.send_datagram(frame({kF6}, kMsg)));          // asks for the daq
  std::vector<double> reply(256);
  stranger.set_receive_timeout(200ms);
  EXPECT_FALSE(stranger.recv_doubles(reply));  // the stranger gets nothing
  ASSERT_TRUE(peer.step(0.25, reply));         // the peer's own step goes on
  EXPECT_EQ(reply[0], 0.5);
  EXPECT_EQ(reply[1], -1.5);
  ASSERT_TRUE(peer.send_doubles(std::vector<double>(256, 99.0)));
  const SessionReport report = site.rig.wait_for_end();
  EXPECT_EQ(report.end, SessionEnd::kTerminated) << report.reason;
  EXPECT_EQ(report.wrong_size_datagrams, 3U);
  EXPECT_EQ(report.foreign_datagrams, 2U);
  EXPECT_EQ(report.trials, 1U);
  EXPECT_EQ(site.rig.trials(), std::vector<double>{0.25});  // neither 0.5 nor −1.5 came through
  EXPECT_EQ(site.server.dropped_datagrams(), 5U);
}

TEST(OpenFrescoUdp, WrongSizedSetupIsDroppedAndTheSiteWaitsForARealOne) {
  ScriptedSite site;
  Peer peer(site.server.port());
  ASSERT_TRUE(peer.send_datagram(Bytes(40)));  // 10 ints: not a set-up
  std::vector<double> reply(256);
  ASSERT_TRUE(peer.send_datagram(kSetupGenericTcp));
  ASSERT_TRUE(peer.step(0.1, reply));
  ASSERT_TRUE(peer.send_doubles(std::vector<double>(256, 99.0)));
  EXPECT_EQ(site.rig.wait_for_end().end, SessionEnd::kTerminated);
  EXPECT_EQ(site.server.dropped_datagrams(), 1U);
}

TEST(OpenFrescoUdp, MessagesAbove9126BytesGoAsSeveralDatagrams) {
  RigSignalLayout layout;
  layout.max_data_size = 2048;
  ScriptedSite site(udp_server(), layout);
  Peer peer(site.server.port());
  ASSERT_TRUE(peer.send_setup({{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 1200}));  // 9600-byte messages
  std::vector<double> msg(1200, 0.0);
  msg[0] = 3.0;
  msg[1] = 0.125;
  ASSERT_TRUE(peer.send_doubles(msg));  // 9126 + 474
  msg[0] = 6.0;
  ASSERT_TRUE(peer.send_doubles(msg));
  Bytes piece(16384);
  EXPECT_EQ(peer.receive_datagram(piece), 9126);
  EXPECT_EQ(peer.receive_datagram(piece), 474);
  msg[0] = 99.0;
  ASSERT_TRUE(peer.send_doubles(msg));
  const SessionReport report = site.rig.wait_for_end();
  EXPECT_EQ(report.end, SessionEnd::kTerminated) << report.reason;
  EXPECT_EQ(report.bytes_received, 44U + 3 * 9600);
  EXPECT_EQ(site.rig.trials(), std::vector<double>{0.125});
}

TEST(OpenFrescoUdp, ShadowSiteHandshakeIsAnswered) {
  ScriptedSite site;
  Peer peer(site.server.port());
  ASSERT_TRUE(peer.send_datagram(bytes({'a'})));
  Bytes answer(8);
  ASSERT_EQ(peer.receive_datagram(answer), 1);
  EXPECT_EQ(answer[0], std::byte{'b'});
  EXPECT_EQ(site.server.dropped_datagrams(), 0U);
}

TEST(OpenFrescoUdp, RefusedSetupGetsNoReply) {
  ScriptedSite site;
  Peer peer(site.server.port());
  ASSERT_TRUE(peer.send_setup({{2, 0, 0, 0, 0}, {2, 0, 0, 2, 0}, 256}));  // 2 DOFs on a 1-DOF rig
  const SessionReport report = site.rig.wait_for_end();
  EXPECT_EQ(report.end, SessionEnd::kRefused);
  EXPECT_EQ(report.reason,
            "set-up ID slot 0 (ctrl disp size) = 2: must be 0 or 1 (the rig's control DOFs)");
  std::vector<double> msg(256, 0.0);
  msg[0] = 6.0;
  ASSERT_TRUE(peer.send_doubles(msg));  // the site is back to waiting for a set-up
  peer.set_receive_timeout(200ms);
  EXPECT_FALSE(peer.recv_doubles(msg));
}

TEST(OpenFrescoUdp, ServerConfigIsValidated) {
  ScriptedRig rig;
  auto config = udp_server(0ms);
  try {
    SiteServer server(config, {}, {}, rig);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "udp_timeout = 0 ms: must be > 0 (UDP has no close: silence is the only end)");
  }
  EXPECT_EQ(site_transport_from("udp", "transport"), SiteTransport::kUdp);
  try {
    (void)site_transport_from("sctp", "site.transport");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "site.transport = 'sctp': must be tcp or udp");
  }
}

// ---- against the servo-hydraulic emulator ----

TEST(OpenFrescoUdp, OpenSeesPeerFullRunMatchesTheRecord) {
  ServoSite site(udp_server(), servo_config());
  constexpr int kSteps = 2000;
  const auto run = testing::run_generic_udp(site.port(), kSteps, sine);
  ASSERT_EQ(run.failed_step, 0);
  ASSERT_TRUE(site.rig().wait_for_sessions(1, 10s));
  const auto report = site.rig().reports().at(0);
  EXPECT_EQ(report.end, SessionEnd::kTerminated) << report.reason;
  EXPECT_EQ(report.trials, static_cast<std::uint64_t>(kSteps));
  EXPECT_EQ(report.commits, static_cast<std::uint64_t>(kSteps));
  EXPECT_EQ(report.wrong_size_datagrams + report.foreign_datagrams, 0U);
  const auto records = site.rig().records();
  ASSERT_EQ(records.size(), static_cast<std::size_t>(kSteps));
  for (std::size_t k = 0; k < records.size(); ++k) {
    ASSERT_EQ(records[k].command, sine(static_cast<int>(k) + 1)) << k;
    ASSERT_EQ(run.disp[k], records[k].measurement.displacement) << k;  // bit for bit
    ASSERT_EQ(run.force[k], records[k].measurement.force) << k;
  }
  EXPECT_TRUE(site.rig().at_rest());
  std::cout << "openfresco step round trip, udp loopback (trial + getDaq -> reply), N = " << kSteps
            << ": p50 " << percentile(run.step_us, 0.5) << " us, p99 "
            << percentile(run.step_us, 0.99) << " us, max " << percentile(run.step_us, 1.0)
            << " us\n";
}

// The peer goes silent mid-run (killed, unplugged): after udp_timeout the session is cut and the
// rig brought to rest; the next peer is served.
TEST(OpenFrescoUdp, SilentPeerIsCutAndTheRigRests) {
  ServoSite site(udp_server(300ms), servo_config());
  Clock::time_point silent;
  {
    Peer peer(site.port());
    ASSERT_TRUE(peer.send_setup({{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256}));
    std::vector<double> reply(256);
    for (int k = 1; k <= 50; ++k) ASSERT_TRUE(peer.step(sine(k), reply));
    silent = Clock::now();
  }
  ASSERT_TRUE(site.rig().wait_for_sessions(1, 10s));
  const double rest_ms = std::chrono::duration<double, std::milli>(Clock::now() - silent).count();
  const auto report = site.rig().reports().at(0);
  EXPECT_EQ(report.end, SessionEnd::kCut);
  EXPECT_EQ(report.reason, "no datagram from the peer for 300 ms");
  EXPECT_EQ(report.trials, 50U);
  EXPECT_TRUE(site.rig().at_rest());
  EXPECT_GE(rest_ms, 300.0);
  EXPECT_LT(rest_ms, 2000.0);
  std::cout << "udp peer silent -> session cut, rig at rest: " << rest_ms
            << " ms (udp_timeout 300 ms, poll 20 ms)\n";
  const auto run = testing::run_generic_udp(site.port(), 10, sine);
  EXPECT_EQ(run.failed_step, 0);
  ASSERT_TRUE(site.rig().wait_for_sessions(2, 10s));
  EXPECT_EQ(site.rig().reports().at(1).end, SessionEnd::kTerminated);
}

// A stranger flooding the site's port does not keep a silent peer's session alive.
TEST(OpenFrescoUdp, StrangersFloodDoesNotHoldASilentSession) {
  ServoSite site(udp_server(300ms), servo_config());
  Peer peer(site.port());
  ASSERT_TRUE(peer.send_setup({{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256}));
  std::vector<double> reply(256);
  ASSERT_TRUE(peer.step(0.001, reply));
  Peer stranger(site.port());
  const Bytes junk(kMsg);
  const auto start = Clock::now();
  while (!site.rig().wait_for_sessions(1, 0ms) && Clock::now() - start < 5s) {
    ASSERT_TRUE(stranger.send_datagram(junk));
    std::this_thread::sleep_for(2ms);
  }
  ASSERT_TRUE(site.rig().wait_for_sessions(1, 0ms));
  const auto report = site.rig().reports().at(0);
  EXPECT_EQ(report.end, SessionEnd::kCut);
  EXPECT_EQ(report.reason, "no datagram from the peer for 300 ms");
  EXPECT_GT(report.foreign_datagrams, 50U);
  EXPECT_LT(Clock::now() - start, 2s);
}

// ---- hyloop's client over UDP ----

SiteClientConfig udp_client(std::uint16_t port, std::chrono::milliseconds reply_timeout = 2s) {
  SiteClientConfig c;
  c.transport = SiteTransport::kUdp;
  c.address = "127.0.0.1";
  c.port = port;
  c.reply_timeout = reply_timeout;
  return c;
}

TEST(OpenFrescoUdpClient, DrivesTheSiteWithHandshake) {
  ServoSite site(udp_server(), servo_config());
  auto config = udp_client(site.port());
  config.udp_handshake = true;
  SiteClient client(config, servo_client_setup());
  std::array<double, 1> k{};
  ASSERT_EQ(client.get_matrix(Action::kGetInitialStiff, k), hal::DriverStatus::kOk);
  EXPECT_EQ(k[0], 2.0e5);
  SiteDriver driver(client);
  std::vector<double> disp;
  for (int i = 1; i <= 100; ++i) {
    ASSERT_NE(driver.command({sine(i), 0.0}), hal::DriverStatus::kFault) << client.error();
    disp.push_back(driver.state().position);
    ASSERT_EQ(driver.commit(), hal::DriverStatus::kOk);
  }
  client.terminate();
  ASSERT_TRUE(site.rig().wait_for_sessions(1, 10s));
  EXPECT_EQ(site.rig().reports().at(0).end, SessionEnd::kTerminated);
  EXPECT_EQ(site.rig().reports().at(0).commits, 100U);
  const auto records = site.rig().records();
  ASSERT_EQ(records.size(), 100U);
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(disp[i], records[i].measurement.displacement) << i;
  }
  EXPECT_EQ(client.dropped_datagrams(), 0U);
}

// A bound UDP socket on 127.0.0.1 standing for a site (or a stranger).
struct FakeSite {
  FakeSite() : fd(::socket(AF_INET, SOCK_DGRAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    (void)::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~FakeSite() { ::close(fd); }
  long receive() {
    socklen_t len = sizeof client;
    return static_cast<long>(::recvfrom(fd, buffer.data(), buffer.size(), MSG_TRUNC,
                                        reinterpret_cast<sockaddr*>(&client), &len));
  }
  void send_to(const sockaddr_in& to, const Bytes& b) const {
    (void)::sendto(fd, b.data(), b.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  }
  int fd;
  std::uint16_t port = 0;
  sockaddr_in client{};
  Bytes buffer = Bytes(65536);
};

TEST(OpenFrescoUdpClient, DropsWrongSizeAndForeignRepliesThenTimesOut) {
  FakeSite site;
  FakeSite stranger;
  SiteClient client(udp_client(site.port, 300ms), {{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256});
  ASSERT_EQ(site.receive(), 44);
  // Queued before the client asks: a short datagram from the site, a whole reply from a
  // stranger, then the site's real reply.
  site.send_to(site.client, frame({kF0_5}, 100));
  stranger.send_to(site.client, frame({kFm1_5, kFm1_5}, kMsg));
  site.send_to(site.client, frame({kF0_5, kFm1_5}, kMsg));
  std::array<double, 1> d{}, f{};
  DaqView daq;
  daq.block[0] = d;
  daq.block[3] = f;
  ASSERT_EQ(client.get_daq(daq), hal::DriverStatus::kOk) << client.error();
  EXPECT_EQ(d[0], 0.5);
  EXPECT_EQ(f[0], -1.5);
  EXPECT_EQ(client.dropped_datagrams(), 2U);
  ASSERT_EQ(site.receive(), static_cast<long>(kMsg));  // the getDaq [6]
  // No reply: after reply_timeout the link fails, naming why.
  const auto t0 = Clock::now();
  EXPECT_EQ(client.get_daq(daq), hal::DriverStatus::kFault);
  const double waited = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  EXPECT_EQ(client.error(), "no reply from the site within reply_timeout");
  EXPECT_GE(waited, 290.0);
  EXPECT_LT(waited, 1500.0);
  EXPECT_FALSE(client.open());
}

TEST(OpenFrescoUdpClient, StrangersFloodDoesNotHoldTheReplyTimeout) {
  FakeSite site;
  SiteClient client(udp_client(site.port, 300ms), {{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256});
  ASSERT_EQ(site.receive(), 44);
  std::atomic<bool> done{false};
  std::thread flood([&] {
    const FakeSite stranger;
    const Bytes junk(kMsg);
    while (!done.load()) {
      stranger.send_to(site.client, junk);
      std::this_thread::sleep_for(1ms);
    }
  });
  std::array<double, 1> d{}, f{};
  DaqView daq;
  daq.block[0] = d;
  daq.block[3] = f;
  const auto t0 = Clock::now();
  EXPECT_EQ(client.get_daq(daq), hal::DriverStatus::kFault);
  const double waited = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  done.store(true);
  flood.join();
  EXPECT_EQ(client.error(), "no reply from the site within reply_timeout");
  EXPECT_LT(waited, 1500.0);
  EXPECT_GT(client.dropped_datagrams(), 20U);
}

TEST(OpenFrescoUdpClient, HandshakeWithNoSiteNamesTheAddress) {
  FakeSite silent;  // bound, never answers
  auto config = udp_client(silent.port);
  config.udp_handshake = true;
  config.connect_timeout = 200ms;
  try {
    SiteClient client(config, servo_client_setup());
    FAIL() << "handshake answered";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("udp handshake with the site 127.0.0.1:" +
                                         std::to_string(silent.port)),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace hyloop::hal::openfresco
