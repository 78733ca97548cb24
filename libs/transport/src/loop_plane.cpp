#include "hyloop/transport/loop_plane.hpp"

#include <stdexcept>

#include "hyloop/transport/ipc_dir.hpp"

namespace hyloop::transport {

std::string loop_channel_binder(std::string_view channel, std::string_view command_source) {
  if (channel == "rig_to_sensor") return "rig-emulator";
  if (channel == "sensor_to_dynamics") return "sensor";
  if (channel == "actuator_to_rig") return "actuator";
  if (channel == "telemetry") return "coordinator";
  if (channel == "dynamics_to_actuator") {
    if (command_source.empty() || command_source == "dynamics") return "dynamics";
    if (command_source == "identification") return "identification";
    throw std::invalid_argument("endpoints.command_source: '" +
                                std::string(command_source.substr(0, 200)) +
                                "' (allowed: dynamics, identification)");
  }
  throw std::invalid_argument("unknown loop channel '" + std::string(channel.substr(0, 200)) + "'");
}

std::vector<std::string> loop_channel_peers(std::string_view channel) {
  if (channel == "rig_to_sensor") return {"sensor"};
  if (channel == "sensor_to_dynamics") return {"dynamics", "identification"};
  if (channel == "dynamics_to_actuator") return {"actuator"};
  if (channel == "actuator_to_rig") return {"rig-emulator"};
  if (channel == "telemetry") {
    return {"rig-emulator", "actuator", "dynamics", "sensor", "identification"};
  }
  throw std::invalid_argument("unknown loop channel '" + std::string(channel.substr(0, 200)) + "'");
}

ChannelSecurity loop_channel_security(const LoopPlaneOptions& options, std::string_view channel,
                                      std::string_view self, Role role, const std::string& endpoint,
                                      std::string_view command_source) {
  const std::string field = "endpoints." + std::string(channel);
  ChannelSecurity sec;
  try {
    if (endpoint.rfind("inproc://", 0) == 0) return sec;
    if (is_ipc(endpoint)) {
      sec.ipc_dir = prepare_ipc_dir(options.ipc_dir);
      (void)check_ipc_endpoint(endpoint, sec.ipc_dir, role == Role::kBind);
      return sec;
    }
    if (!is_tcp(endpoint)) {
      throw std::invalid_argument("'" + endpoint.substr(0, 200) +
                                  "': unsupported transport (inproc://, ipc:// or tcp://)");
    }
    if (options.security_dir.empty()) {
      if (!options.insecure) {
        throw std::invalid_argument(
            "'" + endpoint.substr(0, 200) +
            "': tcp:// needs CURVE keys: start the service with --security-dir DIR (made by "
            "`hyloop certs`), or --insecure for development");
      }
      sec.allow_plain_tcp = true;
      return sec;
    }
    const std::string binder = loop_channel_binder(channel, command_source);
    auto [pub, secret] = load_curve_key_pair(options.security_dir, std::string(self));
    sec.curve.public_key = std::move(pub);
    sec.curve.secret_key = std::move(secret);
    if (role == Role::kBind) {
      if (binder != self) {
        throw std::invalid_argument(std::string(self) + " does not bind this channel (" + binder +
                                    " does)");
      }
      for (const std::string& peer : loop_channel_peers(channel)) {
        sec.curve.allowed_clients.push_back(load_curve_public_key(options.security_dir, peer));
      }
    } else {
      sec.curve.server_key = load_curve_public_key(options.security_dir, binder);
    }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(field + ": " + e.what());
  }
  return sec;
}

}  // namespace hyloop::transport
