// The loop plane's security at the transport level: exact binds, ipc:// confined to a private
// run directory, CURVE with a ZAP allow-list on tcp:// (docs/security.md, "Loop plane").
#include "hyloop/transport/loop_plane.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "hyloop/transport/channel.hpp"
#include "hyloop/transport/curve.hpp"
#include "hyloop/transport/ipc_dir.hpp"

// (HYLOOP_SANITIZE: channel_test.cpp's __asan_default_options covers this test binary too; a
// second definition does not link.)

namespace hyloop::transport {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A fresh private directory for one test.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    path_ = fs::temp_directory_path() / ("hyloop-lp-" + tag + "-" + std::to_string(::getpid()) +
                                         "-" + std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::replace);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::string str() const { return path_.string(); }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

bool is_socket_file(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

int port_of(const std::string& endpoint) {
  return std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
}

// A raw TCP connect (what any process on the host can try): 0 or the errno.
int tcp_connect(const char* ip, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, ip, &a.sin_addr);
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  const int err = rc == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

// A Unix socket file left behind by a process that is gone (bound, then closed).
void make_stale_socket(const fs::path& p) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, p.c_str(), sizeof a.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0) << p;
  ::close(fd);
}

ChannelConfig plain(std::string endpoint, Pattern pattern, Role role) {
  ChannelConfig c;
  c.endpoint = std::move(endpoint);
  c.pattern = pattern;
  c.role = role;
  return c;
}

// ---- exact binds ----

TEST(BindAddress, KeepsTheHostGiven) {
  EXPECT_EQ(bind_address("tcp://127.0.0.1:5601"), "tcp://127.0.0.1:5601");
  EXPECT_EQ(bind_address("tcp://10.77.0.1:5601"), "tcp://10.77.0.1:5601");
  EXPECT_EQ(bind_address("tcp://*:5601"), "tcp://*:5601");  // only when written so
  EXPECT_EQ(bind_address("tcp://[::1]:5601"), "tcp://[::1]:5601");
  EXPECT_EQ(bind_address("ipc:///run/x/y"), "ipc:///run/x/y");
  EXPECT_EQ(bind_address("inproc://a"), "inproc://a");
}

TEST(BindAddress, ResolvesAHostNameToItsAddress) {
  // A minimal root (debootstrap minbase) has no /etc/hosts: nothing names localhost there.
  addrinfo* info = nullptr;
  if (getaddrinfo("localhost", nullptr, nullptr, &info) != 0) {
    GTEST_SKIP() << "this system's resolver does not know localhost (no /etc/hosts entry)";
  }
  freeaddrinfo(info);
  const std::string a = bind_address("tcp://localhost:5601");
  EXPECT_TRUE(a == "tcp://127.0.0.1:5601" || a == "tcp://[::1]:5601") << a;
  EXPECT_THROW((void)bind_address("tcp://no-such-host.invalid:5601"), std::invalid_argument);
}

TEST(Channel, TcpBoundToLoopbackIsNotReachableAtAnotherLocalAddress) {
  zmq::context_t ctx;
  ChannelConfig c = plain("tcp://127.0.0.1:*", Pattern::kPull, Role::kBind);
  c.security.allow_plain_tcp = true;
  Channel rx(ctx, c);
  const int port = port_of(rx.endpoint());
  EXPECT_EQ(tcp_connect("127.0.0.1", port), 0);
  // 127.0.0.2 is this host too (all of 127/8 is loopback): a wildcard bind would accept it.
  EXPECT_EQ(tcp_connect("127.0.0.2", port), ECONNREFUSED);
}

// ---- ipc ----

TEST(IpcDir, IsCreatedPrivateAndAnOpenOneIsRefused) {
  TempDir base("ipcdir");
  const std::string dir = base.str() + "/ipc";
  const std::string prepared = prepare_ipc_dir(dir);
  EXPECT_EQ(prepared, fs::canonical(dir).string());
  EXPECT_EQ(mode_of(dir), 0700U);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec,
                  fs::perm_options::replace);
  try {
    (void)prepare_ipc_dir(dir);
    FAIL() << "a group-readable ipc dir was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("0750"), std::string::npos) << e.what();
  }
  fs::create_directory_symlink(base.path() / "ipc", base.path() / "link");
  EXPECT_THROW((void)prepare_ipc_dir(base.str() + "/link"), std::invalid_argument);
  EXPECT_THROW((void)prepare_ipc_dir("relative/dir"), std::invalid_argument);
}

TEST(IpcDir, DefaultIsTheRuntimeDirOrAPerUserTmpDir) {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  const std::string expected = xdg != nullptr && xdg[0] == '/'
                                   ? std::string(xdg) + "/hyloop"
                                   : "/tmp/hyloop-" + std::to_string(::geteuid());
  EXPECT_EQ(default_ipc_dir(), expected);
}

TEST(IpcRunDir, IsPrivateAndRemovedWithItsSocketsAtTheEnd) {
  TempDir base("rundir");
  const std::string ipc = prepare_ipc_dir(base.str());
  std::string path;
  {
    IpcRunDir run(ipc);
    path = run.path();
    EXPECT_EQ(fs::path(path).parent_path().string(), ipc);
    EXPECT_EQ(mode_of(path), 0700U);
    EXPECT_EQ(run.endpoint("telemetry"), "ipc://" + path + "/telemetry");
    make_stale_socket(fs::path(path) / "telemetry");
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::is_empty(ipc));
}

TEST(IpcRunDir, StaleRunDirsOfDeadProcessesAreRemovedLiveOnesKept) {
  TempDir base("stale");
  const std::string ipc = prepare_ipc_dir(base.str());
  // pid 0x7ffffff0 does not exist (above pid_max); our own pid does.
  fs::create_directory(ipc + "/run-2147483632-abcdef");
  IpcRunDir mine(ipc);
  EXPECT_EQ(remove_stale_ipc_run_dirs(ipc), 1U);
  EXPECT_FALSE(fs::exists(ipc + "/run-2147483632-abcdef"));
  EXPECT_TRUE(fs::exists(mine.path()));
}

class IpcEndpoint : public ::testing::Test {
 protected:
  IpcEndpoint() : base_("ep"), ipc_(prepare_ipc_dir(base_.str())), run_(ipc_) {}
  [[nodiscard]] ChannelConfig bind(const std::string& endpoint) const {
    ChannelConfig c = plain(endpoint, Pattern::kPush, Role::kBind);
    c.security.ipc_dir = ipc_;
    return c;
  }
  TempDir base_;
  std::string ipc_;
  IpcRunDir run_;
  zmq::context_t ctx_;
};

// Finding 1 at the transport level: libzmq unlinks an ipc path before binding it.
TEST_F(IpcEndpoint, BindOutsideTheIpcDirIsRefusedAndTheFileKept) {
  TempDir other("victim");
  const fs::path victim = other.path() / "precious.txt";
  std::ofstream(victim) << "do not delete";
  try {
    Channel ch(ctx_, bind("ipc://" + victim.string()));
    FAIL() << "bound over a file outside the ipc dir";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ipc_dir"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(victim), "do not delete");
}

TEST_F(IpcEndpoint, BindRefusesAnythingButAStaleSocketOfOurs) {
  const fs::path file = fs::path(run_.path()) / "file";
  std::ofstream(file) << "data";
  EXPECT_THROW(Channel(ctx_, bind(run_.endpoint("file"))), std::invalid_argument);
  EXPECT_EQ(slurp(file), "data");
  fs::create_symlink(file, fs::path(run_.path()) / "link");
  EXPECT_THROW(Channel(ctx_, bind(run_.endpoint("link"))), std::invalid_argument);
  EXPECT_EQ(slurp(file), "data");
  fs::create_directory(fs::path(run_.path()) / "dir");
  EXPECT_THROW(Channel(ctx_, bind(run_.endpoint("dir"))), std::invalid_argument);
  make_stale_socket(fs::path(run_.path()) / "stale");
  EXPECT_NO_THROW(Channel(ctx_, bind(run_.endpoint("stale"))));
}

TEST_F(IpcEndpoint, PathTricksAreRefused) {
  const fs::path run(run_.path());
  fs::create_directory(fs::path(ipc_) / "open");
  fs::permissions(fs::path(ipc_) / "open", fs::perms::all, fs::perm_options::replace);
  fs::create_directory_symlink(run, fs::path(ipc_) / "alias");
  for (const std::string& ep : std::vector<std::string>{
           "ipc://" + ipc_ + "/x",                                             // not in a run dir
           "ipc://" + run.string() + "/../" + run.filename().string() + "/x",  // ..
           "ipc://" + run.string() + "/./x",                                   // .
           "ipc://" + run.string() + "//x",                                    // empty component
           "ipc://" + ipc_ + "/open/x",                                        // run dir mode 0777
           "ipc://" + ipc_ + "/alias/x",                          // run dir is a symlink
           "ipc://" + ipc_ + "/missing/x",                        // no such run dir
           "ipc://" + run.string() + "/.hidden",                  // hidden name
           "ipc://" + run.string() + "/a b",                      // unsafe name
           "ipc://" + run.string() + "/" + std::string(70, 'n'),  // name too long
           std::string("ipc://relative/run/x"),                   // relative
           std::string("ipc://@abstract"),                        // abstract namespace
           std::string("ipc://*"),                                // libzmq's temporary
       }) {
    SCOPED_TRACE(ep);
    EXPECT_THROW((void)check_ipc_endpoint(ep, ipc_, true), std::invalid_argument);
    EXPECT_THROW((void)check_ipc_endpoint(ep, ipc_, false), std::invalid_argument);
  }
  EXPECT_EQ(check_ipc_endpoint(run_.endpoint("rig_to_sensor"), ipc_, true),
            run.string() + "/rig_to_sensor");
}

TEST_F(IpcEndpoint, SocketFileIsRemovedWhenTheChannelCloses) {
  const fs::path sock = fs::path(run_.path()) / "sensor_to_dynamics";
  {
    Channel tx(ctx_, bind(run_.endpoint("sensor_to_dynamics")));
    EXPECT_TRUE(is_socket_file(sock));
    ChannelConfig rc = plain(run_.endpoint("sensor_to_dynamics"), Pattern::kPull, Role::kConnect);
    rc.security.ipc_dir = ipc_;
    Channel rx(ctx_, rc);
    std::array<std::byte, 4> msg{std::byte{1}};
    ASSERT_TRUE(tx.send(msg, 2000ms));
    std::array<std::byte, 8> buf{};
    EXPECT_TRUE(rx.receive(buf, 2000ms).has_value());
  }
  EXPECT_FALSE(fs::exists(sock));
}

TEST_F(IpcEndpoint, ConnectRefusesAFileThatIsNotASocket) {
  std::ofstream(fs::path(run_.path()) / "plain") << "x";
  ChannelConfig c = plain(run_.endpoint("plain"), Pattern::kPull, Role::kConnect);
  c.security.ipc_dir = ipc_;
  EXPECT_THROW(Channel(ctx_, c), std::invalid_argument);
  c.endpoint = run_.endpoint("later");  // the binder may come later
  EXPECT_NO_THROW(Channel(ctx_, c));
}

// ---- CURVE ----

class Curve : public ::testing::Test {
 protected:
  Curve() : dir_("curve") {
    for (const char* name :
         {"coordinator", "rig-emulator", "actuator", "dynamics", "sensor", "identification"}) {
      write_curve_key_pair(dir_.str(), name, make_curve_key_pair());
    }
  }
  [[nodiscard]] ChannelConfig end(const char* channel, const char* self, Role role,
                                  const std::string& endpoint, Pattern pattern) const {
    ChannelConfig c = plain(endpoint, pattern, role);
    c.security = loop_channel_security({.security_dir = dir_.str()}, channel, self, role, endpoint);
    c.reconnect_ivl_ms = 10;
    c.reconnect_ivl_max_ms = 50;
    return c;
  }
  TempDir dir_;
  zmq::context_t ctx_;
};

TEST_F(Curve, TheExpectedPeerReceivesEveryMessage) {
  Channel tx(ctx_, end("dynamics_to_actuator", "dynamics", Role::kBind, "tcp://127.0.0.1:*",
                       Pattern::kPush));
  Channel rx(
      ctx_, end("dynamics_to_actuator", "actuator", Role::kConnect, tx.endpoint(), Pattern::kPull));
  std::array<std::byte, 8> buf{};
  for (std::uint8_t i = 0; i < 100; ++i) {
    std::array<std::byte, 1> m{std::byte{i}};
    ASSERT_TRUE(tx.send(m, 3000ms)) << int(i);
    const auto r = rx.receive(buf, 3000ms);
    ASSERT_TRUE(r.has_value()) << int(i);
    EXPECT_EQ(r->bytes[0], std::byte{i});
  }
  EXPECT_EQ(tx.peers_accepted(), 1U);
  EXPECT_EQ(tx.peers_denied(), 0U);
}

// A rogue PULL on the dynamics' command port (finding 6): without an accepted key it never
// becomes a peer of the PUSH socket, so it takes no command from the actuator's stream.
TEST_F(Curve, PeersWithoutAnAcceptedKeyReceiveNothing) {
  Channel tx(ctx_, end("dynamics_to_actuator", "dynamics", Role::kBind, "tcp://127.0.0.1:*",
                       Pattern::kPush));
  zmq::context_t rogue_ctx;
  // 1: plain ZeroMQ, no CURVE. 2: CURVE with the right server key but its own key pair.
  // 3: another service's genuine key (the sensor's), not accepted on this channel.
  zmq::socket_t plain_pull(rogue_ctx, zmq::socket_type::pull);
  plain_pull.connect(tx.endpoint());
  zmq::socket_t stranger(rogue_ctx, zmq::socket_type::pull);
  const auto [pub, sec] = make_curve_key_pair();
  stranger.set(zmq::sockopt::curve_serverkey, load_curve_public_key(dir_.str(), "dynamics"));
  stranger.set(zmq::sockopt::curve_publickey, pub);
  stranger.set(zmq::sockopt::curve_secretkey, sec);
  stranger.connect(tx.endpoint());
  Channel wrong_service(
      ctx_, end("rig_to_sensor", "sensor", Role::kConnect, tx.endpoint(), Pattern::kPull));
  // Let the handshakes happen before the real peer arrives. The stranger reaches the ZAP
  // handler and is denied; the other two fail the CURVE handshake before it (no key, or the
  // wrong server key).
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (tx.peers_denied() < 1 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  std::this_thread::sleep_for(100ms);
  EXPECT_GE(tx.peers_denied(), 1U);
  std::array<std::byte, 1> m{std::byte{9}};
  EXPECT_FALSE(tx.try_send(m));  // no accepted peer: nothing queued for anyone
  Channel actuator(
      ctx_, end("dynamics_to_actuator", "actuator", Role::kConnect, tx.endpoint(), Pattern::kPull));
  constexpr int kSent = 200;
  std::array<std::byte, 8> buf{};
  int got = 0;
  for (int i = 0; i < kSent; ++i) {
    ASSERT_TRUE(tx.send(m, 3000ms));
    if (actuator.receive(buf, 3000ms)) ++got;
  }
  EXPECT_EQ(got, kSent);  // all of them went to the one accepted peer
  zmq::message_t msg;
  EXPECT_FALSE(plain_pull.recv(msg, zmq::recv_flags::dontwait).has_value());
  EXPECT_FALSE(stranger.recv(msg, zmq::recv_flags::dontwait).has_value());
  EXPECT_FALSE(wrong_service.receive(buf, 0ms).has_value());
  EXPECT_EQ(tx.peers_accepted(), 1U);
}

TEST_F(Curve, APeerWithoutAKeyCannotSendToABinder) {
  Channel rx(ctx_,
             end("telemetry", "coordinator", Role::kBind, "tcp://127.0.0.1:*", Pattern::kPull));
  zmq::context_t rogue_ctx;
  zmq::socket_t push(rogue_ctx, zmq::socket_type::push);
  push.set(zmq::sockopt::linger, 0);
  push.connect(rx.endpoint());
  for (int i = 0; i < 1000; ++i) {
    (void)push.send(zmq::str_buffer("garbage"), zmq::send_flags::dontwait);
  }
  std::array<std::byte, 16> buf{};
  EXPECT_FALSE(rx.receive(buf, 500ms).has_value());
  EXPECT_EQ(rx.received(), 0U);
  // A loop service's own key is accepted on the telemetry.
  Channel sensor(ctx_, end("telemetry", "sensor", Role::kConnect, rx.endpoint(), Pattern::kPush));
  std::array<std::byte, 2> m{};
  ASSERT_TRUE(sensor.send(m, 3000ms));
  EXPECT_TRUE(rx.receive(buf, 3000ms).has_value());
}

// A rogue that squats the command port first (binds it before the dynamics) cannot move the
// actuator: the actuator's CURVE client completes a handshake only with the dynamics' key.
TEST_F(Curve, ACommandPortSquatterWithoutTheBindersKeyDeliversNothing) {
  zmq::context_t rogue_ctx;
  zmq::socket_t plain_push(rogue_ctx, zmq::socket_type::push);
  plain_push.set(zmq::sockopt::linger, 0);
  plain_push.bind("tcp://127.0.0.1:*");
  const std::string plain_ep = plain_push.get(zmq::sockopt::last_endpoint);
  zmq::socket_t curve_push(rogue_ctx, zmq::socket_type::push);
  curve_push.set(zmq::sockopt::linger, 0);
  curve_push.set(zmq::sockopt::curve_server, 1);
  curve_push.set(zmq::sockopt::curve_secretkey, make_curve_key_pair().second);
  curve_push.bind("tcp://127.0.0.1:*");
  const std::string curve_ep = curve_push.get(zmq::sockopt::last_endpoint);
  Channel via_plain(
      ctx_, end("dynamics_to_actuator", "actuator", Role::kConnect, plain_ep, Pattern::kPull));
  Channel via_curve(
      ctx_, end("dynamics_to_actuator", "actuator", Role::kConnect, curve_ep, Pattern::kPull));
  for (int i = 0; i < 100; ++i) {
    (void)plain_push.send(zmq::str_buffer("move"), zmq::send_flags::dontwait);
    (void)curve_push.send(zmq::str_buffer("move"), zmq::send_flags::dontwait);
    std::this_thread::sleep_for(5ms);
  }
  std::array<std::byte, 16> buf{};
  EXPECT_FALSE(via_plain.receive(buf, 200ms).has_value());
  EXPECT_FALSE(via_curve.receive(buf, 200ms).has_value());
  EXPECT_EQ(via_plain.received() + via_curve.received(), 0U);
}

TEST(ChannelSecurity, PlainTcpIsRefusedUnlessAllowed) {
  zmq::context_t ctx;
  try {
    Channel ch(ctx, plain("tcp://127.0.0.1:*", Pattern::kPull, Role::kBind));
    FAIL() << "plain tcp accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CURVE"), std::string::npos) << e.what();
  }
  try {
    (void)loop_channel_security({}, "rig_to_sensor", "rig-emulator", Role::kBind,
                                "tcp://127.0.0.1:5601");
    FAIL() << "plain tcp accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("endpoints.rig_to_sensor"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--insecure"), std::string::npos) << e.what();
  }
  const ChannelSecurity sec = loop_channel_security(
      {.insecure = true}, "rig_to_sensor", "rig-emulator", Role::kBind, "tcp://127.0.0.1:5601");
  EXPECT_TRUE(sec.allow_plain_tcp);
  EXPECT_TRUE(sec.curve.empty());
}

TEST(LoopPlane, EachBinderAcceptsExactlyItsPeers) {
  EXPECT_EQ(loop_channel_binder("rig_to_sensor"), "rig-emulator");
  EXPECT_EQ(loop_channel_binder("sensor_to_dynamics"), "sensor");
  EXPECT_EQ(loop_channel_binder("dynamics_to_actuator"), "dynamics");
  EXPECT_EQ(loop_channel_binder("dynamics_to_actuator", "identification"), "identification");
  EXPECT_EQ(loop_channel_binder("actuator_to_rig"), "actuator");
  EXPECT_EQ(loop_channel_binder("telemetry"), "coordinator");
  EXPECT_THROW((void)loop_channel_binder("dynamics_to_actuator", "mallory"), std::invalid_argument);
  EXPECT_THROW((void)loop_channel_binder("nonsense"), std::invalid_argument);
  EXPECT_EQ(loop_channel_peers("rig_to_sensor"), std::vector<std::string>{"sensor"});
  EXPECT_EQ(loop_channel_peers("dynamics_to_actuator"), std::vector<std::string>{"actuator"});
  EXPECT_EQ(loop_channel_peers("telemetry").size(), 5U);
}

TEST(LoopPlane, KeysComeFromTheSecurityDirAndProblemsNameTheFile) {
  TempDir dir("keys");
  const auto dynamics = make_curve_key_pair();
  const auto actuator = make_curve_key_pair();
  write_curve_key_pair(dir.str(), "dynamics", dynamics);
  write_curve_key_pair(dir.str(), "actuator", actuator);
  EXPECT_EQ(mode_of(dir.path() / "curve" / "dynamics.secret"), 0600U);
  const ChannelSecurity server =
      loop_channel_security({.security_dir = dir.str()}, "dynamics_to_actuator", "dynamics",
                            Role::kBind, "tcp://127.0.0.1:5603");
  EXPECT_EQ(server.curve.secret_key, dynamics.second);
  EXPECT_EQ(server.curve.allowed_clients, std::vector<std::string>{actuator.first});
  const ChannelSecurity client =
      loop_channel_security({.security_dir = dir.str()}, "dynamics_to_actuator", "actuator",
                            Role::kConnect, "tcp://127.0.0.1:5603");
  EXPECT_EQ(client.curve.server_key, dynamics.first);
  EXPECT_EQ(client.curve.public_key, actuator.first);
  // The identification in the dynamics' slot: its key, which is missing here.
  try {
    (void)loop_channel_security({.security_dir = dir.str()}, "dynamics_to_actuator", "actuator",
                                Role::kConnect, "tcp://127.0.0.1:5603", "identification");
    FAIL() << "missing key accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("identification.public"), std::string::npos) << e.what();
  }
  // A secret key others may read is refused.
  fs::permissions(dir.path() / "curve" / "dynamics.secret", fs::perms::others_read,
                  fs::perm_options::add);
  EXPECT_THROW((void)loop_channel_security({.security_dir = dir.str()}, "dynamics_to_actuator",
                                           "dynamics", Role::kBind, "tcp://127.0.0.1:5603"),
               std::invalid_argument);
  // A service may only bind its own channels.
  EXPECT_THROW((void)loop_channel_security({.security_dir = dir.str()}, "dynamics_to_actuator",
                                           "actuator", Role::kBind, "tcp://127.0.0.1:5603"),
               std::invalid_argument);
}

}  // namespace
}  // namespace hyloop::transport
