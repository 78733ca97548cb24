#pragma once
// The common part of every loop-plane component (rig emulator, sensor, dynamics, actuator):
// the run's identity and clock mode from Configure, one loop thread started by Activate and
// joined by Deactivate, the telemetry stream to the coordinator, and the stop flag. A subclass
// opens its channels in configure_loop() and runs its cycles in run_loop(), which returns when
// the run is over or stop_requested() turns true.
//
// Metrics (docs/metrics.md), all labelled service = name(): hyloop_cycles_total,
// hyloop_deadline_misses_total, hyloop_lateness_seconds, hyloop_message_age_seconds,
// hyloop_rejected_messages_total{reason} (every reason, from the inputs' verdict counters, read by
// the exporter thread, never by the cycle), and per loop input hyloop_queue_depth{channel} and
// hyloop_loop_latency_seconds{hop}. The subclass declares its inputs in its constructor
// (declare_input), hands their verdict counters over in configure_loop (watch_input) and records
// on the loop with the RT-safe helpers below (no lock, no allocation).
//
// Input deadlines (issue 27, finding 8; input_deadline.hpp): in real time an input given its
// period (expect_period) counts its upstream as lost once it is silent for
// input_deadline_periods() periods (at least input_deadline_floor_ms) after its first message
// (input_lost(): counted once per silence in hyloop_input_deadline_expired_total{service,
// channel}). What a loss does is the subclass's (the actuator trips its watchdog). Lockstep: never
// (virtual time).
//
// Loop plane security (docs/security.md): every channel a subclass opens through channel() gets
// the service's ipc directory check and CURVE keys (transport/loop_plane.hpp), from the
// service's --ipc-dir, --security-dir and --insecure unless set_loop_plane() says otherwise.
// The channels are closed, and the ipc socket files this service bound removed, when the run
// ends (deactivate), on cleanup, on shutdown and when configure fails (a service in ERROR holds
// no port); the next run is configured again.

#include <hyloop/v2/loop.pb.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hyloop/runtime/component.hpp"
#include "hyloop/runtime/input_deadline.hpp"
#include "hyloop/runtime/peer_watch.hpp"
#include "hyloop/runtime/rt_setup.hpp"
#include "hyloop/transport/channel.hpp"
#include "hyloop/transport/codec.hpp"
#include "hyloop/transport/endpoint.hpp"
#include "hyloop/transport/loop_plane.hpp"

namespace hyloop::runtime {

/// How long a lockstep receive waits before looking at the stop flag again.
inline constexpr std::chrono::milliseconds kLockstepPoll{100};
/// How long a lossless (lockstep) send waits for room before the message counts as dropped.
inline constexpr std::chrono::milliseconds kLosslessSendTimeout{2000};
/// Supervision of the coordinator on the telemetry connection (ZMTP heartbeats): a PING every
/// kSupervisionHeartbeat; a coordinator silent for kSupervisionTimeout (stopped) counts as lost.
/// A dead one is seen at once (its sockets close). Generous: a false alarm latches an e-stop.
inline constexpr std::chrono::milliseconds kSupervisionHeartbeat{200};
inline constexpr std::chrono::milliseconds kSupervisionTimeout{1000};

class LoopComponent : public Component {
 public:
  /// Declares the loop metrics with service = `name`.
  explicit LoopComponent(std::string name);
  ~LoopComponent() override;
  LoopComponent(const LoopComponent&) = delete;
  LoopComponent& operator=(const LoopComponent&) = delete;

  void on_configure(const v1::ConfigureRequest& request) final;
  void on_activate() final;
  void on_deactivate() final;
  void on_shutdown() final;
  /// Closes every channel (the ports this service bound are free again).
  void on_cleanup() noexcept final;

  [[nodiscard]] bool lockstep() const noexcept { return mode_ == v1::CLOCK_MODE_LOCKSTEP; }
  [[nodiscard]] const std::string& run_id() const noexcept { return run_id_; }
  /// Loop messages this component rejected so far (all kinds).
  [[nodiscard]] std::uint64_t rejected_messages() const noexcept { return rejected_.load(); }
  /// True once the loop thread has returned.
  [[nodiscard]] bool loop_done() const noexcept { return done_.load(); }
  /// The loop plane settings for in-process hosts and tests, instead of the service binary's
  /// options (runtime::service_config()). Before configure.
  void set_loop_plane(transport::LoopPlaneOptions options) { loop_plane_ = std::move(options); }
  /// The input deadline in periods for in-process hosts and tests, instead of the service's
  /// --config input_deadline_periods. Before configure. Throws std::invalid_argument outside
  /// [kMinInputDeadlinePeriods, kMaxInputDeadlinePeriods].
  void set_input_deadline_periods(int periods);
  /// The periods of the inputs' deadlines in force (from the last configure).
  [[nodiscard]] int input_deadline_periods() const noexcept { return deadline_periods_; }
  /// The deadlines' floor, ms, instead of the service's --config input_deadline_floor_ms (0:
  /// none, the periods alone). Before configure. Throws std::invalid_argument outside [0,
  /// kMaxInputDeadlineFloorMs].
  void set_input_deadline_floor_ms(int floor_ms);
  /// The deadlines' floor in force, ms (from the last configure).
  [[nodiscard]] int input_deadline_floor_ms() const noexcept { return deadline_floor_ms_; }
  /// The loop thread's real-time set-up for in-process hosts, instead of the service's --config
  /// rt (apply_rt_setup when the thread starts). Before activate.
  void set_rt_options(const RtOptions& rt) { rt_override_ = rt; }

 protected:
  /// Parses the scenario and opens the channels; throws std::exception naming the bad field.
  virtual void configure_loop(const v1::ConfigureRequest& request) = 0;
  /// Runs the cycles until the run is over or stop_requested(). Must not throw.
  virtual void run_loop() noexcept = 0;
  /// Closes the channels (called on shutdown and before a reconfiguration).
  virtual void release_loop() noexcept = 0;

  [[nodiscard]] bool stop_requested() const noexcept {
    return stop_.load(std::memory_order_relaxed);
  }

  /// `frame_length`: the input's layout size (a Frame of another length is rejected); 0: any.
  transport::ValidatorConfig validator_config(std::size_t frame_length = 0) const;
  transport::EncoderConfig encoder_config() const;
  /// A channel config for loop channel `field` (rig_to_sensor, ..., telemetry) at `endpoint`,
  /// with its security (this service's end: ipc directory, CURVE keys). Throws
  /// std::invalid_argument naming `endpoints.<field>` when the endpoint is missing or refused.
  transport::ChannelConfig channel(const std::string& endpoint, const char* field,
                                   transport::Pattern pattern, transport::Role role,
                                   int hwm = 1000);

  /// Sends one telemetry message to the coordinator (names only on the first one). Lossless in
  /// lockstep, drop-if-full in real time (the loop never waits for the recorder).
  void send_telemetry(std::uint64_t cycle, double virtual_time_s, std::span<const double> values,
                      v2::LoopEvent event = v2::LOOP_EVENT_NONE,
                      std::string_view detail = {}) noexcept;
  /// The names sent with the first telemetry message.
  void set_telemetry_names(std::vector<std::string> names) { telemetry_names_ = std::move(names); }
  // ---- metrics ----
  /// Constructor: declares loop input `channel` (a loop channel's name, the label of
  /// hyloop_queue_depth) and, if `hop` is not empty, its hyloop_loop_latency_seconds series.
  /// Returns the input's index for the calls below.
  std::size_t declare_input(const std::string& channel, const std::string& hop = {});
  /// The hyloop_loop_latency_seconds series of `hop` (e.g. sample_to_command).
  HistogramSlot declare_hop(const std::string& hop);
  /// configure_loop(): the exporter reads `counters` (the input's verdicts) into
  /// hyloop_rejected_messages_total until the next configure or the shutdown.
  void watch_input(std::size_t index, const transport::VerdictCounters& counters);
  /// RT: message `header` of input `index` was accepted; the loop began to read at
  /// `read_start_ns`. Observes the message's age and hop latency (now − send time) and its
  /// backlog: a message sent before the read began was waiting in the queue, and a run of n such
  /// messages read one after another means n were queued (hyloop_queue_depth, the peak).
  void note_received(std::size_t index, const v2::Header& header,
                     std::int64_t read_start_ns) noexcept;
  /// RT: waits up to `timeout` for the next accepted message of input `index` and records it
  /// (note_received); keeps rejected_ in step with the input's verdicts. nullptr on timeout.
  template <transport::LoopMessage M>
  const M* receive_input(transport::LoopInput<M>& input, std::size_t index,
                         std::chrono::milliseconds timeout) noexcept {
    const std::int64_t read_start = transport::monotonic_now_ns();
    const M* m = input.receive(timeout);
    rejected_.store(input.counters().rejected(), std::memory_order_relaxed);
    if (m != nullptr) {
      note_received(index, m->header(), read_start);
    }
    return m;
  }
  /// configure_loop(), after the run's mode is known: input `index` expects a message every
  /// `period`; real time only (lockstep: no deadline). Unarmed until its first message.
  void expect_period(std::size_t index, std::chrono::nanoseconds period) noexcept;
  /// RT: the deadline of input `index`.
  [[nodiscard]] const InputDeadline& input_deadline(std::size_t index) const noexcept {
    return inputs_[index].deadline;
  }
  /// RT: true when input `index` is past its deadline at `now_ns` (its upstream is lost). The
  /// first true of a silence is counted in hyloop_input_deadline_expired_total.
  bool input_lost(std::size_t index, std::int64_t now_ns) noexcept;
  /// RT: hop latency of input `index`: `now_ns` − `send_time_ns` (s, negative counts as 0).
  void observe_hop(std::size_t index, std::int64_t send_time_ns, std::int64_t now_ns) noexcept;
  /// RT: age of the input used in a cycle that started at `cycle_start_ns`.
  void observe_message_age(std::int64_t send_time_ns, std::int64_t cycle_start_ns) noexcept;
  /// RT: `messages` were waiting in input `index`'s queue (raises the peak).
  void note_queue_depth(std::size_t index, std::uint64_t messages) noexcept;
  /// RT: one cycle done.
  void count_cycle() noexcept { cycles_total_.add(); }
  /// RT: a missed deadline (also counted in deadline_misses_ for telemetry).
  void count_deadline_miss() noexcept;
  /// RT: the periodic timer woke `lateness_ns` after the cycle's deadline.
  void observe_lateness(std::int64_t lateness_ns) noexcept;

  /// Counters reported in every telemetry message.
  std::atomic<std::uint64_t> deadline_misses_{0};
  std::atomic<std::int64_t> lateness_ns_{0};
  std::atomic<std::uint64_t> rejected_{0};

  std::string run_id_;
  v1::ClockMode mode_ = v1::CLOCK_MODE_LOCKSTEP;
  std::uint32_t sender_id_ = 0;
  v1::LoopEndpoints endpoints_;
  std::string scenario_yaml_;

 private:
  struct InputMetrics {
    HistogramSlot hop;
    GaugeSlot depth;
    CounterSlot expired;        // hyloop_input_deadline_expired_total
    std::uint64_t backlog = 0;  // loop thread
    InputDeadline deadline;     // loop thread (configured in configure_loop)
    bool lost = false;          // loop thread: this silence was counted
    // Exporter side, changed under metrics().exclusive().
    const transport::VerdictCounters* counters = nullptr;
    std::array<std::uint64_t, transport::kVerdictCount> seen{};
  };
  /// Exporter: adds the verdict counts since the last look to hyloop_rejected_messages_total.
  void collect_inputs() noexcept;
  /// Stops reading the inputs' counters (after a last look); before they are destroyed.
  void unwatch_inputs();

  CounterSlot cycles_total_;
  CounterSlot misses_total_;
  HistogramSlot lateness_;
  HistogramSlot message_age_;
  std::array<CounterSlot, transport::kVerdictCount> rejected_total_;
  std::vector<InputMetrics> inputs_;
  MetricsRegistry::CollectorId collector_ = 0;

  /// A failed handshake on loop channel `field` (a monitor thread): counted in
  /// hyloop_curve_handshake_failures_total{service, channel} and logged. This service's end
  /// failing to reach its binder (kConnect: the keys do not match) fails the run (report_fault);
  /// a binder only counts and logs (anyone may knock on its port: that must not stop a run).
  void handshake_failed(const std::string& field, transport::Role role, const std::string& what);
  /// A fault found off the loop thread, kept once: before Activate the component moves to
  /// ERROR (Activate is refused naming it); while the loop runs, the loop stops as on a
  /// Deactivate (the actuator ramps to rest), its next telemetry message goes out as
  /// LOOP_EVENT_FAULT with it, and the component moves to ERROR when the loop has ended.
  void report_fault(std::string message);

  /// Closes the telemetry and the subclass's channels (their ipc socket files go with them).
  void close_channels() noexcept;
  /// on_configure after the checks: the run's identity, telemetry, configure_loop().
  void open_channels(const v1::ConfigureRequest& request);

  std::optional<transport::LoopPlaneOptions> loop_plane_;
  std::optional<int> deadline_periods_override_;
  int deadline_periods_ = kDefaultInputDeadlinePeriods;
  std::optional<int> deadline_floor_override_;
  std::optional<RtOptions> rt_override_;
  std::atomic<std::uint32_t> rt_flags_{0};  ///< realtime_flags of the loop thread's set-up
  int deadline_floor_ms_ = kDefaultInputDeadlineFloorMs;
  bool channels_open_ = false;
  std::unique_ptr<transport::LoopOutput> telemetry_;
  /// Supervision: the coordinator's end of the telemetry stream. Losing it while the loop runs
  /// latches an emergency stop ("coordinator lost: ..."): the actuator ramps the rig to rest.
  std::unique_ptr<PeerWatch> coordinator_watch_;
  std::atomic<bool> running_{false};  // between activate and deactivate
  // report_fault: the message is written once, before fault_ is set (release); the loop thread
  // reads it after seeing fault_ (acquire) and sends it once (fault_sent_, loop thread).
  std::mutex fault_mutex_;
  std::string fault_message_;
  std::atomic<bool> fault_{false};
  bool fault_sent_ = false;
  std::uint64_t last_cycle_ = 0;  // of the last telemetry message (loop thread)
  double last_time_s_ = 0.0;
  std::atomic<std::uint64_t> binder_refusals_{0};  // handshakes refused at this service's binds
  v2::Telemetry telemetry_msg_;
  std::vector<std::string> telemetry_names_;
  bool names_sent_ = false;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
};

}  // namespace hyloop::runtime
