#include "hyloop/hal/udp_target_driver.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "hyloop/testing/alloc_guard.hpp"
#include "udp_test_layouts.hpp"

namespace hyloop::hal {
namespace {

using Bytes = std::vector<std::uint8_t>;
using test::eventually;

/// A fake target on the wire: a bound socket the test drives datagram by datagram.
class FakeTarget {
 public:
  FakeTarget() : socket_("fake target", {"127.0.0.1", 0}) {}
  UdpTargetConfig driver_config() const {
    UdpTargetConfig c;
    c.peer = {"127.0.0.1", socket_.port()};
    c.command = test::command_layout();
    c.measurement = test::measurement_layout();
    c.signals = test::signal_map();
    c.period = 0.004;
    c.timeout = 0.05;
    c.limits.position_min = -0.1;
    c.limits.position_max = 0.1;
    c.limits.velocity_max = 1.0;
    return c;
  }
  void connect(std::uint16_t driver_port) {
    driver_ = to_sockaddr("driver", {"127.0.0.1", driver_port});
  }
  void send(const Bytes& datagram) const { ASSERT_TRUE(socket_.send_to(datagram, driver_)); }
  /// The next datagram the driver sent (empty after 1 s without one).
  Bytes receive() const {
    Bytes buffer(2048);
    sockaddr_in from{};
    long n = -1;
    eventually([&] { return (n = socket_.receive(buffer, from)) >= 0; }, 1.0);
    buffer.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
    return buffer;
  }

 private:
  UdpSocket socket_;
  sockaddr_in driver_{};
};

/// A measurement frame (measurement_layout): sequence, position in mm, force in N, echo, status.
Bytes measurement(std::uint16_t seq, double position_mm, double force, std::uint32_t echo,
                  std::uint8_t status = 0) {
  const PacketCodec codec("measurement", test::measurement_layout());
  Bytes frame(codec.size());
  const std::vector<double> v{0.0, position_mm * 1e-3, force, static_cast<double>(echo),
                              static_cast<double>(status)};
  EXPECT_EQ(codec.encode(v, seq, frame), codec.size());
  return frame;
}

struct Rig {
  FakeTarget target;
  UdpTargetDriver driver{target.driver_config()};
  Rig() { target.connect(driver.local_port()); }
};

TEST(UdpTargetDriver, SendsTheGoldenCommandFrameAndReadsTheMeasurement) {
  Rig rig;
  ASSERT_EQ(rig.driver.command({0.0125, 0.002}), DriverStatus::kOk);
  EXPECT_EQ(rig.target.receive(), (Bytes{0x00, 0x00, 0x00, 0x01, 0x40, 0x29, 0x00, 0x00, 0x00, 0x00,
                                         0x00, 0x00, 0xd0, 0x07, 0x00, 0x00}));
  rig.target.send(
      {0x07, 0x00, 0x00, 0x00, 0x48, 0x41, 0xff, 0xff, 0xf6, 0x3c, 0x01, 0x00, 0x00, 0x00, 0x00});
  ASSERT_TRUE(eventually([&] { return rig.driver.metrics().received == 1; }));
  EXPECT_DOUBLE_EQ(rig.driver.state().position, 0.0125);
  ForceSample f;
  EXPECT_EQ(rig.driver.force_sensor().read(f), DriverStatus::kOk);
  EXPECT_DOUBLE_EQ(f.force, -250.0);
  EXPECT_EQ(f.cycle, 7);
  const UdpTargetMetrics m = rig.driver.metrics();
  EXPECT_EQ(m.sent, 1U);
  EXPECT_EQ(m.round_trips, 1U);
  EXPECT_GT(m.round_trip_last, 0.0);
  EXPECT_LT(m.round_trip_last, 1.0);
  rig.driver.force_sensor().tare();
  EXPECT_EQ(rig.driver.force_sensor().read(f), DriverStatus::kOk);
  EXPECT_DOUBLE_EQ(f.force, 0.0);
}

TEST(UdpTargetDriver, CountsLossAndDropsDuplicatesAndReorderedPackets) {
  Rig rig;
  rig.target.send(measurement(100, 1.0, 0.0, 0));
  rig.target.send(measurement(100, 9.0, 0.0, 0));  // duplicate
  rig.target.send(measurement(99, 9.0, 0.0, 0));   // older
  rig.target.send(measurement(103, 3.0, 0.0, 0));  // 101, 102 lost
  rig.target.send(measurement(102, 9.0, 0.0, 0));  // late: older than 103
  ASSERT_TRUE(eventually([&] {
    const auto m = rig.driver.metrics();
    return m.received + m.duplicate + m.reordered == 5;
  }));
  const UdpTargetMetrics m = rig.driver.metrics();
  EXPECT_EQ(m.received, 2U);
  EXPECT_EQ(m.duplicate, 1U);
  EXPECT_EQ(m.reordered, 2U);
  EXPECT_EQ(m.lost, 2U);
  EXPECT_DOUBLE_EQ(rig.driver.state().position, 0.003);
  // Forward steps under half the u16 range are gaps; the field wraps 65535 → 0.
  for (int seq : {30103, 60103, 65535, 1}) {
    rig.target.send(measurement(static_cast<std::uint16_t>(seq), 5.0, 0.0, 0));
  }
  ASSERT_TRUE(eventually([&] { return rig.driver.metrics().received == 6; }));
  EXPECT_EQ(rig.driver.metrics().lost, 2U + 29999U + 29999U + 5431U + 1U);
  EXPECT_DOUBLE_EQ(rig.driver.state().position, 0.005);
}

TEST(UdpTargetDriver, DropsForeignSourcesAndMalformedPacketsBeforeTheActuator) {
  Rig rig;
  rig.target.send(measurement(1, 2.0, 0.0, 0));
  ASSERT_TRUE(eventually([&] { return rig.driver.metrics().received == 1; }));
  const sockaddr_in driver = to_sockaddr("driver", {"127.0.0.1", rig.driver.local_port()});
  const UdpSocket intruder("intruder", {"127.0.0.1", 0});  // same host, another port
  ASSERT_TRUE(intruder.send_to(measurement(2, 50.0, 0.0, 0), driver));
  Bytes nan_frame = measurement(3, 1.0, 0.0, 0);
  nan_frame[4] = 0xc0;
  nan_frame[5] = 0x7f;  // position f32 → NaN
  rig.target.send(nan_frame);
  rig.target.send(Bytes(14, 0));    // short
  rig.target.send(Bytes(16, 0));    // one byte long
  rig.target.send(Bytes(4000, 0));  // larger than any packet
  ASSERT_TRUE(eventually([&] {
    const auto m = rig.driver.metrics();
    return m.rejected_foreign == 1 && m.rejected_malformed == 4;
  }));
  EXPECT_EQ(rig.driver.metrics().received, 1U);
  EXPECT_DOUBLE_EQ(rig.driver.state().position, 0.002);
  EXPECT_EQ(rig.driver.latest().sequence, 1U);
}

TEST(UdpTargetDriver, RejectsCommandsOutsideItsLimitsOrItsWireTypes) {
  Rig rig;
  EXPECT_EQ(rig.driver.command({0.2, 0.0}), DriverStatus::kRejected);
  EXPECT_EQ(rig.driver.command({std::numeric_limits<double>::quiet_NaN(), 0.0}),
            DriverStatus::kRejected);
  EXPECT_EQ(rig.driver.command({0.0, 2.0}), DriverStatus::kRejected);
  UdpTargetConfig narrow = rig.target.driver_config();
  narrow.limits = {};  // no limits: the i32 µm/s velocity field still bounds |v| to 2147 m/s
  UdpTargetDriver unbounded(narrow);
  EXPECT_EQ(unbounded.command({0.0, 3000.0}), DriverStatus::kRejected);
  EXPECT_EQ(rig.driver.metrics().rejected_commands, 3U);
  EXPECT_EQ(rig.driver.metrics().sent, 0U);
}

TEST(UdpTargetDriver, ASilentPeerLatchesAFaultWithinItsTimeout) {
  Rig rig;
  ASSERT_EQ(rig.driver.command({0.0, 0.0}), DriverStatus::kOk);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_FALSE(rig.target.receive().empty());
  rig.target.send(measurement(1, 0.0, 0.0, 1));
  ASSERT_TRUE(eventually([&] { return rig.driver.metrics().received == 1; }));
  DriverStatus status = DriverStatus::kOk;
  while ((status = rig.driver.command({0.0, 0.0})) == DriverStatus::kOk) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(status, DriverStatus::kFault);
  EXPECT_GE(took, 0.05);
  EXPECT_LT(took, 0.05 + 0.02);
  rig.target.send(measurement(2, 0.0, 0.0, 2));  // the peer is back: the fault stays latched
  ASSERT_TRUE(eventually([&] { return rig.driver.metrics().received == 2; }));
  EXPECT_EQ(rig.driver.command({0.0, 0.0}), DriverStatus::kFault);
  ForceSample f;
  EXPECT_EQ(rig.driver.force_sensor().read(f), DriverStatus::kFault);
}

TEST(UdpTargetDriver, ATargetFaultStatusIsAnEmergencyStopInput) {
  Rig rig;
  ASSERT_EQ(rig.driver.command({0.0, 0.0}), DriverStatus::kOk);
  EXPECT_FALSE(rig.driver.emergency_stop_input());
  rig.target.send(measurement(1, 0.0, 0.0, 1, 2));
  ASSERT_TRUE(eventually([&] { return rig.driver.emergency_stop_input(); }));
  EXPECT_EQ(rig.driver.command({0.0, 0.0}), DriverStatus::kFault);
}

TEST(UdpTargetDriver, RefusesAnInvalidConfigurationNamingTheField) {
  FakeTarget target;
  UdpTargetConfig c = target.driver_config();
  c.signals.measured_force = "load";
  EXPECT_THROW(
      {
        try {
          UdpTargetDriver d(c);
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "signals.measured_force = 'load': no such field in the layout");
          throw;
        }
      },
      std::invalid_argument);
  c = target.driver_config();
  c.peer.address = "robot.local";
  EXPECT_THROW(UdpTargetDriver{c}, std::invalid_argument);
  c = target.driver_config();
  c.timeout = 0.001;
  EXPECT_THROW(UdpTargetDriver{c}, std::invalid_argument);
  c = target.driver_config();
  c.local = {"10.255.255.1", 0};  // not an address of this host: bind fails
  EXPECT_THROW(UdpTargetDriver{c}, std::system_error);
}

TEST(UdpTargetDriver, CycleMethodsAllocateNothing) {
  Rig rig;
  rig.target.send(measurement(1, 1.0, 5.0, 0));
  ASSERT_TRUE(eventually([&] { return rig.driver.metrics().received == 1; }));
  ForceSensorDriver& sensor = rig.driver.force_sensor();
  ActuatorDriver& actuator = rig.driver;
  ForceSample f;
  double sum = 0.0;
  testing::AllocGuard guard;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(actuator.command({1e-5 * i, 0.0}), DriverStatus::kOk);
    sum += actuator.state().position + (actuator.emergency_stop_input() ? 1.0 : 0.0);
    EXPECT_EQ(sensor.read(f), DriverStatus::kOk);
    sum += f.force + rig.driver.metrics().round_trip_mean;
  }
  EXPECT_EQ(guard.allocations(), 0U);
  EXPECT_GT(sum, 0.0);
}

}  // namespace
}  // namespace hyloop::hal
