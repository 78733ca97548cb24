#pragma once
// The loop plane's topology and its security policy, in one place (docs/security.md, "Loop
// plane"): which service binds each loop channel, which services may connect to it, and the
// ChannelSecurity an end of a channel gets from a service's --ipc-dir, --security-dir and
// --insecure.
//
//   channel               binder (CURVE server)           accepted peers (CURVE clients)
//   rig_to_sensor         rig-emulator                    sensor
//   sensor_to_dynamics    sensor                          dynamics, identification
//   dynamics_to_actuator  the command source: dynamics    actuator
//                         or identification
//   actuator_to_rig       actuator                        rig-emulator
//   telemetry             coordinator                     rig-emulator, actuator, dynamics,
//                                                         sensor, identification
//
// Key names are these service names (DIR/curve/<name>.public, .secret). Configure time only.

#include <string>
#include <string_view>
#include <vector>

#include "hyloop/transport/channel.hpp"

namespace hyloop::transport {

/// A service's loop-plane settings (its --ipc-dir, --security-dir, --insecure).
struct LoopPlaneOptions {
  /// Canonical or not; "" = default_ipc_dir(). Created 0700 and checked when first needed.
  std::string ipc_dir{};
  /// The directory `hyloop certs` made (keys in curve/); "" = none (tcp refused unless insecure).
  std::string security_dir{};
  /// Allow plain tcp:// without CURVE (development only).
  bool insecure = false;
};

/// The service that binds `channel`; for dynamics_to_actuator, `command_source` ("" means
/// "dynamics"). Throws std::invalid_argument for an unknown channel or command source.
[[nodiscard]] std::string loop_channel_binder(std::string_view channel,
                                              std::string_view command_source = {});
/// The services that may connect to `channel` (the binder's ZAP allow-list).
[[nodiscard]] std::vector<std::string> loop_channel_peers(std::string_view channel);

/// The security of `self`'s end of `channel` at `endpoint` (`role`: bind or connect): the ipc
/// directory for ipc://, the CURVE keys for tcp:// (server: own secret key and the peers' public
/// keys; client: own key pair and the binder's public key), plain tcp only when insecure and no
/// security directory is given. Throws std::invalid_argument (missing keys, tcp without keys
/// and not insecure, a bad ipc endpoint); the message names the channel as `endpoints.<channel>`.
[[nodiscard]] ChannelSecurity loop_channel_security(const LoopPlaneOptions& options,
                                                    std::string_view channel, std::string_view self,
                                                    Role role, const std::string& endpoint,
                                                    std::string_view command_source = {});

}  // namespace hyloop::transport
