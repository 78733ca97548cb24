#include "hyloop/transport/curve.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <zmq_addon.hpp>

namespace hyloop::transport {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
constexpr std::size_t kZ85KeyLength = 40;

std::string key_path(const std::string& dir, const std::string& name, const char* ext) {
  return dir + "/curve/" + name + ext;
}

// The 32-byte binary form of a Z85 key; throws naming `what` when it is not one.
std::string decode_key(const std::string& z85, const std::string& what) {
  std::array<std::uint8_t, 32> bin{};
  if (z85.size() != kZ85KeyLength || zmq_z85_decode(bin.data(), z85.c_str()) == nullptr) {
    throw std::invalid_argument(what + ": not a CURVE key (40 characters of Z85)");
  }
  return {reinterpret_cast<const char*>(bin.data()), bin.size()};
}

std::string read_key(const std::string& path) {
  std::ifstream f(path);
  if (!f)
    throw std::invalid_argument(path + ": cannot read the CURVE key: " + std::strerror(errno));
  std::string key;
  std::getline(f, key, '\0');
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) {
    key.pop_back();
  }
  (void)decode_key(key, path);
  return key;
}

void write_file(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode);
  if (fd < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  const std::string line = text + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                  ::fchmod(fd, mode) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error(path + ": cannot write");
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<void*, std::weak_ptr<ZapAuthenticator>>& registry() {
  static std::map<void*, std::weak_ptr<ZapAuthenticator>> r;
  return r;
}

}  // namespace

std::pair<std::string, std::string> make_curve_key_pair() {
  std::array<char, 41> pub{};
  std::array<char, 41> sec{};
  if (zmq_curve_keypair(pub.data(), sec.data()) != 0) {
    throw std::runtime_error("zmq_curve_keypair: " + std::string(zmq_strerror(zmq_errno())) +
                             " (libzmq built without CURVE?)");
  }
  return {pub.data(), sec.data()};
}

void write_curve_key_pair(const std::string& security_dir, const std::string& name,
                          const std::pair<std::string, std::string>& keys) {
  const std::string dir = security_dir + "/curve";
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw std::runtime_error(dir + ": " + std::strerror(errno));
  }
  write_file(key_path(security_dir, name, ".public"), keys.first, 0644);
  write_file(key_path(security_dir, name, ".secret"), keys.second, 0600);
}

std::string load_curve_public_key(const std::string& security_dir, const std::string& name) {
  return read_key(key_path(security_dir, name, ".public"));
}

std::pair<std::string, std::string> load_curve_key_pair(const std::string& security_dir,
                                                        const std::string& name) {
  const std::string secret = key_path(security_dir, name, ".secret");
  struct stat st {};
  if (::stat(secret.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    throw std::invalid_argument(secret + ": group or others may read this secret key (chmod 600)");
  }
  return {load_curve_public_key(security_dir, name), read_key(secret)};
}

std::shared_ptr<ZapAuthenticator> ZapAuthenticator::acquire(zmq::context_t& context) {
  const std::lock_guard<std::mutex> lock(registry_mutex());
  std::weak_ptr<ZapAuthenticator>& slot = registry()[context.handle()];
  if (auto existing = slot.lock()) return existing;
  auto created = std::make_shared<ZapAuthenticator>(context, 0);
  slot = created;
  return created;
}

ZapAuthenticator::ZapAuthenticator(zmq::context_t& context, int /*private*/)
    : socket_(context, zmq::socket_type::rep) {
  socket_.set(zmq::sockopt::linger, 0);
  // The previous authenticator of this context may still be letting go of the address.
  for (int attempt = 0;; ++attempt) {
    try {
      socket_.bind(kZapEndpoint);
      break;
    } catch (const zmq::error_t& e) {
      if (e.num() != EADDRINUSE || attempt >= 100) {
        throw std::runtime_error(std::string("ZAP handler: cannot bind ") + kZapEndpoint + ": " +
                                 e.what());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  thread_ = std::thread([this] { serve(); });
}

ZapAuthenticator::~ZapAuthenticator() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  socket_.close();
}

std::string ZapAuthenticator::add_domain(const std::vector<std::string>& z85_keys) {
  Domain d;
  for (const std::string& k : z85_keys) d.keys.insert(decode_key(k, "allowed client key"));
  const std::lock_guard<std::mutex> lock(mutex_);
  std::string name = "hyloop-" + std::to_string(next_domain_++);
  domains_.emplace(name, std::move(d));
  return name;
}

void ZapAuthenticator::remove_domain(const std::string& domain) {
  const std::lock_guard<std::mutex> lock(mutex_);
  domains_.erase(domain);
}

std::uint64_t ZapAuthenticator::accepted(const std::string& domain) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = domains_.find(domain);
  return it == domains_.end() ? 0 : it->second.accepted;
}

std::uint64_t ZapAuthenticator::denied(const std::string& domain) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = domains_.find(domain);
  return it == domains_.end() ? 0 : it->second.denied;
}

void ZapAuthenticator::serve() noexcept {
  // RFC 27 request: version, request id, domain, address, identity, mechanism, credentials...
  while (!stop_.load()) {
    try {
      zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, std::chrono::milliseconds(20)) <= 0) continue;
      std::vector<zmq::message_t> frames;
      if (!zmq::recv_multipart(socket_, std::back_inserter(frames), zmq::recv_flags::dontwait)) {
        continue;
      }
      const auto text = [&frames](std::size_t i) {
        return i < frames.size() ? frames[i].to_string() : std::string();
      };
      const std::string request_id = text(1);
      bool ok = false;
      std::string why = "unknown domain";
      if (frames.size() >= 6 && text(0) == "1.0") {
        const std::string domain = text(2);
        const std::string mechanism = text(5);
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto it = domains_.find(domain);
        if (it == domains_.end()) {
          // Only our CURVE servers set a domain; a plain socket of the context that asks (libzmq
          // does for NULL with an empty domain in some versions) is not ours to judge.
          ok = domain.empty() && mechanism == "NULL";
        } else if (mechanism == "CURVE" && frames.size() >= 7 && frames[6].size() == 32) {
          ok = it->second.keys.count(text(6)) > 0;
          why = ok ? "" : "public key not accepted on this channel";
          ++(ok ? it->second.accepted : it->second.denied);
        } else {
          why = "mechanism " + mechanism + " refused";
          ++it->second.denied;
        }
      } else {
        why = "malformed ZAP request";
      }
      std::array<zmq::const_buffer, 6> reply{
          zmq::str_buffer("1.0"),
          zmq::buffer(request_id),
          ok ? zmq::str_buffer("200") : zmq::str_buffer("400"),
          zmq::buffer(ok ? std::string_view("OK") : std::string_view(why)),
          zmq::str_buffer(""),
          zmq::str_buffer("")};
      (void)zmq::send_multipart(socket_, reply);
    } catch (...) {
      // Keep answering: a failure here must not leave a server without its handler.
    }
  }
}

}  // namespace hyloop::transport
