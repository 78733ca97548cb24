#pragma once
// hyloop as the client of an OpenFresco-style site (issue 25 §2): a numerical substructure here
// drives a physical one at another lab, or at hyloop's own site (openfresco_site.hpp), through
// the RemoteTest framing (openfresco.hpp), playing the part of OpenFresco's `expControl
// GenericTCP`:
//   set-up ID once, then per step: trial (3) → getDaq (6) → reply; commit (5) when the step has
//   converged; terminate (99) at the end (no reply to 3, 5, 99).
//
// SiteLink is what a step talks to: SiteClient over TCP or UDP, or LocalSiteLink straight to a
// SiteRig in this process (the same rig with no wire between: the reference of the lockstep test).
// SiteDriver turns a link into hal's actuator and force-sensor drivers (1 DOF, disp and vel in,
// disp, vel and force back).
//
// RT-safety: after construction, set_trial/get_daq/commit allocate nothing and throw nothing;
// SiteClient's block on the socket for at most reply_timeout (the site paces the step, as in
// OpenFresco). A failed exchange returns kFault and latches the error (error()); the link is
// then dead (every later call kFault) and the caller stops the loop.
//
// Over UDP (OpenFresco's UDP_Socket, openfresco.hpp) every message goes as datagrams to the
// site's address; a reply is taken only from that address and port and only in pieces of the
// size it must have: any other datagram is dropped and counted (dropped_datagrams()). A lost
// datagram is not resent (a trial is not idempotent): the reply never comes, and after
// reply_timeout the link fails as it would over TCP.

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/hal/drivers.hpp"
#include "hyloop/hal/openfresco.hpp"
#include "hyloop/hal/openfresco_site.hpp"

namespace hyloop::hal::openfresco {

class SiteLink {
 public:
  virtual ~SiteLink() = default;
  /// The set-up this link was opened with.
  [[nodiscard]] virtual const SetupId& setup() const noexcept = 0;
  /// Code 3: every block as long as the set-up says (empty when its size is 0).
  virtual hal::DriverStatus set_trial(const TrialView& trial) noexcept = 0;
  /// Codes 6..11 (`action`): fills every block the set-up sized.
  virtual hal::DriverStatus get_daq(const DaqView& daq,
                                    Action action = Action::kGetDaqResponse) noexcept = 0;
  /// Code 5.
  virtual hal::DriverStatus commit() noexcept = 0;
  /// Code 99; the link is closed after it. Idempotent. Not RT.
  virtual void terminate() = 0;
};

struct SiteClientConfig {
  SiteTransport transport = SiteTransport::kTcp;
  std::string address = "127.0.0.1";  ///< the site's numeric IPv4 or IPv6 address
  std::uint16_t port = 44000;
  /// UDP: ShadowSite's handshake ('a' → 'b', within connect_timeout) before the set-up.
  bool udp_handshake = false;
  std::chrono::milliseconds connect_timeout{2000};  ///< > 0
  std::chrono::milliseconds reply_timeout{2000};    ///< > 0, per reply and per send
  /// TCP: TCP_NODELAY on this side (OpenFresco leaves Nagle on: false plays it exactly).
  bool no_delay = true;
};

class SiteClient final : public SiteLink {
 public:
  /// Connects and sends the set-up ID. @throws std::invalid_argument naming a bad field or a
  /// set-up that cannot frame messages (check_setup_shape); std::system_error when the site
  /// cannot be reached within connect_timeout.
  SiteClient(const SiteClientConfig& config, const SetupId& setup);
  /// Closes without terminate (the site records the session as cut).
  ~SiteClient() override;
  SiteClient(const SiteClient&) = delete;
  SiteClient& operator=(const SiteClient&) = delete;

  [[nodiscard]] const SetupId& setup() const noexcept override { return setup_; }
  hal::DriverStatus set_trial(const TrialView& trial) noexcept override;
  hal::DriverStatus get_daq(const DaqView& daq,
                            Action action = Action::kGetDaqResponse) noexcept override;
  hal::DriverStatus commit() noexcept override;
  void terminate() override;
  /// Codes 12..15: the n×n reply, written row by row into `row_major` (n² values).
  hal::DriverStatus get_matrix(Action action, std::span<double> row_major) noexcept;

  /// Why the link failed ("" while it works).
  [[nodiscard]] std::string_view error() const noexcept { return error_.data(); }
  [[nodiscard]] bool open() const noexcept { return fd_ >= 0 && error_[0] == '\0'; }
  /// UDP: datagrams dropped while waiting for replies (wrong size or another source).
  [[nodiscard]] std::uint64_t dropped_datagrams() const noexcept { return dropped_datagrams_; }

 private:
  hal::DriverStatus send_message() noexcept;
  hal::DriverStatus receive_reply() noexcept;
  hal::DriverStatus receive_udp_reply() noexcept;
  hal::DriverStatus fail(const char* what, int error_number) noexcept;
  hal::DriverStatus request(Action action) noexcept;

  SiteClientConfig config_;
  SetupId setup_;
  BlockLayout ctrl_;
  BlockLayout daq_;
  std::size_t data_size_ = 0;
  std::vector<double> out_;  ///< the message being sent (stale slots kept, as OpenFresco)
  std::vector<double> in_;   ///< the last reply
  std::vector<std::byte> bytes_;
  int fd_ = -1;
  sockaddr_storage site_{};  ///< UDP: where datagrams go and the only source taken
  std::uint64_t dropped_datagrams_ = 0;
  std::array<char, 160> error_{};
};

/// A SiteRig in this process behind the SiteLink calls: begin_session at construction,
/// trial/measure/commit per call, end_session at terminate() (or destruction, as a cut).
class LocalSiteLink final : public SiteLink {
 public:
  /// @throws std::invalid_argument when `setup` does not fit `layout` (setup_mismatch's reason).
  LocalSiteLink(SiteRig& rig, const RigSignalLayout& layout, const SetupId& setup);
  ~LocalSiteLink() override;
  LocalSiteLink(const LocalSiteLink&) = delete;
  LocalSiteLink& operator=(const LocalSiteLink&) = delete;

  [[nodiscard]] const SetupId& setup() const noexcept override { return setup_; }
  hal::DriverStatus set_trial(const TrialView& trial) noexcept override;
  hal::DriverStatus get_daq(const DaqView& daq,
                            Action action = Action::kGetDaqResponse) noexcept override;
  hal::DriverStatus commit() noexcept override;
  void terminate() override;

 private:
  void end(SessionEnd end, std::string reason);

  SiteRig& rig_;
  SetupId setup_;
  SessionReport report_;
  bool open_ = true;
};

/// The set-up hyloop's client sends: 1 DOF, ctrl disp and vel, daq disp, vel and force,
/// dataSize 256 (what the servo-hydraulic site accepts).
[[nodiscard]] SetupId servo_client_setup();

/// A 1-DOF link as hal drivers: command() sends the trial (position, velocity) and fetches the
/// measurement (getDaq) in the same call; state() and read() return that measurement; commit()
/// ends the step. Needs a set-up with ctrl disp = 1 and daq disp and force = 1 (vel optional
/// both ways). A command that is not finite or outside `limits` (check_command) is not sent:
/// the last good one goes as this step's trial instead (the site expects one per step), the
/// call returns kRejected and counts it. RT-safe as the link.
class SiteDriver final : public hal::ActuatorDriver, public hal::ForceSensorDriver {
 public:
  /// @throws std::invalid_argument naming the set-up slot that does not fit.
  explicit SiteDriver(SiteLink& link, const hal::ActuatorLimits& limits = {});
  /// Commands not sent for being out of limits or not finite.
  [[nodiscard]] std::uint64_t rejected_commands() const noexcept { return rejected_; }

  hal::DriverStatus command(const hal::ActuatorCommand& command) noexcept override;
  [[nodiscard]] hal::ActuatorState state() const noexcept override { return state_; }
  [[nodiscard]] bool emergency_stop_input() const noexcept override { return faulted_; }
  hal::DriverStatus read(hal::ForceSample& sample) noexcept override;
  /// Takes the force measured now as the zero of later reads. Not RT.
  void tare() override;
  hal::DriverStatus commit() noexcept;
  /// The rig's time of the last measurement (s; 0 when the set-up has no daq time).
  [[nodiscard]] double rig_time() const noexcept { return time_[0]; }

 private:
  hal::DriverStatus measure() noexcept;

  SiteLink& link_;
  hal::ActuatorLimits limits_;
  hal::ActuatorCommand last_good_{};
  std::uint64_t rejected_ = 0;
  std::array<double, 1> disp_{}, vel_{}, force_{}, time_{};
  hal::ActuatorState state_;
  double force_zero_ = 0.0;
  std::int64_t cycle_ = 0;
  bool faulted_ = false;
};

}  // namespace hyloop::hal::openfresco
