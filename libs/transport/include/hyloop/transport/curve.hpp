#pragma once
// ZeroMQ CURVE on tcp:// loop channels (docs/security.md, "Loop plane"; libzmq's zmq_curve(7)
// and ZAP, RFC 27).
//
// Keys are Z85 text (40 characters) in the security directory made by `hyloop certs`:
// DIR/curve/<name>.public and DIR/curve/<name>.secret (mode 0600), one pair per service name.
// The binding side of a channel is the CURVE server (its own secret key); every connection is
// then checked by the ZAP handler of the socket's ZeroMQ context, which accepts only the public
// keys registered for that socket's ZAP domain (the expected peers of that channel). The
// connecting side is a CURVE client with its own key pair and the server's public key. A peer
// without an accepted key gets no connection: it receives nothing and sends nothing.
//
// Threading: ZapAuthenticator runs one thread per ZeroMQ context answering on
// inproc://zeromq.zap.01; domains are added and removed at configure time under a mutex (never
// on a loop cycle). CURVE itself costs per message (encryption); measured in
// docs/performance.md.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

namespace hyloop::transport {

/// CURVE settings of one channel end. All keys Z85 (40 characters).
struct CurveKeys {
  std::string public_key{};  ///< this end's public key
  std::string secret_key{};  ///< this end's secret key
  /// Connecting side: the binder's public key.
  std::string server_key{};
  /// Binding side: the public keys the ZAP handler accepts (the channel's expected peers).
  std::vector<std::string> allowed_clients{};
  [[nodiscard]] bool empty() const noexcept { return secret_key.empty(); }
};

/// A fresh key pair (zmq_curve_keypair): {public, secret}. Throws if libzmq has no CURVE.
[[nodiscard]] std::pair<std::string, std::string> make_curve_key_pair();

/// Writes DIR/curve/<name>.public and .secret (0600; DIR/curve made 0700). For tests and
/// `hyloop certs`.
void write_curve_key_pair(const std::string& security_dir, const std::string& name,
                          const std::pair<std::string, std::string>& keys);

/// Reads DIR/curve/<name>.public. Throws std::invalid_argument naming the file when it is
/// missing or not a 40-character Z85 key.
[[nodiscard]] std::string load_curve_public_key(const std::string& security_dir,
                                                const std::string& name);
/// Reads DIR/curve/<name>.secret (refused if group or others may read it) and .public.
/// {public, secret}.
[[nodiscard]] std::pair<std::string, std::string> load_curve_key_pair(
    const std::string& security_dir, const std::string& name);

/// The ZAP handler of one ZeroMQ context (ZeroMQ allows one per context). Shared by the server
/// sockets of that context; it unbinds when the last one lets go, so the context can terminate.
class ZapAuthenticator {
 public:
  /// The context's authenticator, started (bound to inproc://zeromq.zap.01) if need be.
  static std::shared_ptr<ZapAuthenticator> acquire(zmq::context_t& context);

  ZapAuthenticator(zmq::context_t& context, int /*private*/);
  ~ZapAuthenticator();
  ZapAuthenticator(const ZapAuthenticator&) = delete;
  ZapAuthenticator& operator=(const ZapAuthenticator&) = delete;

  /// Registers a ZAP domain accepting exactly these CURVE public keys (Z85); returns the domain
  /// to set on the server socket (ZMQ_ZAP_DOMAIN). Throws std::invalid_argument on a bad key.
  std::string add_domain(const std::vector<std::string>& z85_keys);
  void remove_domain(const std::string& domain);
  /// Handshakes accepted / denied so far on `domain`.
  [[nodiscard]] std::uint64_t accepted(const std::string& domain) const;
  [[nodiscard]] std::uint64_t denied(const std::string& domain) const;

 private:
  struct Domain {
    std::set<std::string> keys;  // 32-byte binary
    std::uint64_t accepted = 0;
    std::uint64_t denied = 0;
  };
  void serve() noexcept;

  zmq::socket_t socket_;
  mutable std::mutex mutex_;
  std::map<std::string, Domain> domains_;
  std::uint64_t next_domain_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace hyloop::transport
