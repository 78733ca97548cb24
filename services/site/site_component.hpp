#pragma once
// The OpenSees/OpenFresco site service (issue 25, docs/opensees.md): serves one
// `expControl GenericTCP` or `element genericClient` client at a time over TCP on the configured
// address (transport/openfresco_site.hpp), the servo-hydraulic emulator behind the actuator
// safety layer as its rig (openfresco_servo_site.hpp), every accepted session recorded as a run
// directory (site_recorder.hpp).
//
// Lifecycle (component.hpp): Configure builds the rig and binds the site's port (the
// ConfigureRequest's run id and scenario are not used: the site is configured by its options);
// Activate serves clients on a thread; Deactivate cuts the session under way (recorded as cut,
// the rig brought to rest) and stops listening; Cleanup and Shutdown release the port. An
// emergency stop latches the safety layer's e-stop and cuts the session: the rig ramps to rest,
// the run is recorded as stopped by the e-stop, and later clients fault at their first trial
// until the service is configured again (after the latch is reset).
//
// Metrics: hyloop_site_sessions_total{end} (terminated, refused, protocol_error, cut,
// rig_fault), hyloop_site_trials_total and hyloop_site_dropped_datagrams_total (UDP).
//
// Over UDP (server.transport) the site serves the peer whose set-up datagram came first; a peer
// silent for server.udp_timeout is cut (recorded as cut, the rig brought to rest).

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "hyloop/hal/openfresco_servo_site.hpp"
#include "hyloop/runtime/component.hpp"
#include "site/site_recorder.hpp"

namespace hyloop::services {

struct SiteOptions {
  /// transport (tcp or udp), address (default 127.0.0.1), port (default 44000), idle and UDP
  /// timeouts, allowed peers.
  hal::openfresco::SiteServerConfig server;
  hal::openfresco::ServoRigConfig rig;
  std::filesystem::path runs_dir = ".";  ///< run directories go here
  std::string name = "opensees-site";    ///< the runs' name (summary "scenario", run ids)
  std::size_t max_rows = 100000;         ///< samples.csv rows kept per session (≥ 1)
};

/// The servo-hydraulic rig of the RHT paper (ω = 50 rad/s, ζ = 0.8, Δt = 0.01 s) with a
/// specimen of k = 2·10⁵ N/m, c = 500 N·s/m; safety window ±0.1 m, 1 m/s, 5 m/s² stop ramp.
[[nodiscard]] SiteOptions default_site_options();
/// @throws std::invalid_argument naming the field, its value and the allowed range.
void validate(const SiteOptions& options);
/// The configuration as the run directories' scenario.yaml.
[[nodiscard]] std::string site_yaml(const SiteOptions& options);

class SiteComponent final : public runtime::Component {
 public:
  explicit SiteComponent(SiteOptions options);
  ~SiteComponent() override;

  void on_configure(const v1::ConfigureRequest& request) override;
  void on_activate() override;
  void on_deactivate() override;
  void on_shutdown() override;
  void on_cleanup() noexcept override;
  void on_emergency_stop(std::string_view reason) noexcept override;

  /// The bound port (0 before configure).
  [[nodiscard]] std::uint16_t port() const noexcept;
  /// The recorder of the current configuration (nullptr before configure).
  [[nodiscard]] const SiteRecorder* recorder() const noexcept { return recorder_.get(); }
  [[nodiscard]] const SiteOptions& options() const noexcept { return options_; }

 private:
  void stop_serving() noexcept;
  void release() noexcept;
  void count_session(const SiteRunRecord& run);

  SiteOptions options_;
  /// Guards the three objects against an e-stop (any thread) while they are made or released.
  std::mutex objects_mutex_;
  std::unique_ptr<hal::openfresco::ServoRig> rig_;
  std::unique_ptr<SiteRecorder> recorder_;
  std::unique_ptr<hal::openfresco::SiteServer> server_;
  std::thread thread_;
  std::array<runtime::CounterSlot, 6> sessions_;  ///< by SessionEnd
  runtime::CounterSlot trials_;
  runtime::CounterSlot dropped_;
};

}  // namespace hyloop::services
