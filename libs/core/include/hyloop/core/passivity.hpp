#pragma once
// Time-domain passivity (TDPA): a passivity observer (PO) that integrates the energy flowing into a
// port, and a passivity controller (PC), a variable damper that dissipates whatever energy the
// port has produced (Hannaford & Ryu 2002; Ryu, Kwon & Hannaford 2004). For a delayed
// communication channel, the two-port form of Artigas et al. 2011 / Ryu, Artigas & Preusche 2010:
// each side may release no more energy than the other side has put in, d steps earlier.
//
// Ports and signs. A port exchanges a flow (velocity v, m/s) and an effort (force f, N); the power
// P = f·v (W) is positive when energy flows INTO the port. A port is passive when the energy it
// has taken in never falls below zero: E(n) ≥ 0 for all n. Causality says which of the two the
// port receives and which it returns:
//   impedance   v in, f out    the PC adds a series damper   f′ = f + α·v     α in N·s/m
//   admittance  f in, v out    the PC adds a parallel damper v′ = v + β·f     β in m/(N·s)
// The code calls them input (v or f) and output (f or v); P = input·output, and the damping g
// (α or β) always acts as output′ = output + g·input, which takes g·input²·ΔT ≥ 0 out of the
// port's energy each step: the law is the same for both, the causality names the units of g.
// Energies are in J, time in s.
//
// One-port observer (cycle n = 1, 2, …, sampled every ΔT):
//   E_obs(n) = E_0 + ΔT·Σ_{k≤n} f(k)·v(k)
//            = E_0 + E_in(n) − E_out(n),   E_in sums the steps with P > 0, E_out the others (≥ 0)
// with E_0 ≥ 0 the energy stored in the port at the start (0 for an initially relaxed port).
//
// One-port controller (HoldConvention::kSameSample, the law of Hannaford & Ryu):
//   W(n)  = E_obs(n) + E_pc(n−1)                      energy of the port as modified so far
//   g(n)  = min(−W(n) / (ΔT·input(n)²), g_max)   if W(n) < 0 and input(n) ≠ 0, else 0
//   output′(n) = output(n) + g(n)·input(n)
//   E_pc(n) = E_pc(n−1) + ΔT·g(n)·input(n)²           energy dissipated by the PC (≥ 0)
// so the modified port's energy E_obs(n) + E_pc(n) = 0 after an active step and ≥ 0 at every step
// while g stays below its bound g_max (input → 0 would demand g → ∞; clipped steps are counted,
// and E_obs + E_pc may then go negative by what could not be dissipated).
//
// HoldConvention::kHeldOutput is the same controller for a port whose output is held (zero-order
// hold) over the next period while the input is the backward difference over the last one, e.g.
// v(n) = (x(n) − x(n−1))/ΔT. The energy that really crossed the port over [n−1, n] is then
// ΔT·input(n)·output′(n−1), exactly, and the law becomes
//   E_obs(n)   = E_0 + ΔT·Σ_{k≤n} input(k)·output(k−1)
//   E_pc(n−1)  = ΔT·Σ_{k≤n} g(k−1)·input(k−1)·input(k)             (both realised up to n)
//   W(n)       = E_obs(n) + E_pc(n−1) + ΔT·input(n)·output(n)     (the next period, predicted
//                                                                  with input(n+1) ≈ input(n))
// and g(n), output′(n) as above; the prediction's error is observed, and corrected, a step later.
// The kSameSample observer pairs the force with the velocity of the period before it, which hides
// one period of the loop's delay from the PO: on a haptic wall rendered with a 1–5 ms delay (the
// test) kSameSample still lets the energy grow ×167–335 in 10 s; kHeldOutput keeps it bounded.
//
// The bound g_max. Besides v → 0, the damper is itself a sampled controller: for an impedance
// port on a device of mass m, α far above m/ΔT can make the PC's own force chatter on velocity
// noise and inject energy (seen, not asserted: the test's undelayed wall, 1 kg at 1 ms, α_max =
// 1e4 N·s/m, peaks ×3 to ×27 in some noise seeds over 15 s). The tests use m/(2ΔT).
//
// Two-port (a communication channel with a delay of d ≥ 1 steps each way, Artigas). Each side
// splits its own port's power by sign into E_in and E_out, sends E_in to the other side with the
// data, and receives the other side's E_in(n−d). Side s is passive towards the channel when
//   E_out,s(n) − E_pc,s(n) ≤ E_in,other(n−d) + E_0,s
// and its PC (either causality) dissipates the excess:
//   W_s(n) = E_0,s + E_in,other(n−d) − E_out,s(n) + E_pc,s(n−1),   g(n) as above.
// E_in and E_out are of the unmodified port; the PC only ever reduces the energy leaving a side
// (an active step takes exactly −W_s out), so E_out − E_pc is the energy the modified side has
// released. The received remote energy is the largest value seen so far (E_in never decreases, so
// a stale or reordered message cannot loosen the bound); a non-finite one is ignored.
//
// Non-finite samples: a step whose input or output is not finite changes no state, returns the
// output unchanged and is counted (rejected_samples()).
//
// RT-safety: constructors validate (std::invalid_argument "FIELD = VALUE: allowed range") and
// allocate (TwoPortPassivity's delay rings); every other method is RT-safe: noexcept, no
// allocation, no lock, O(1).
//
// References: B. Hannaford, J.-H. Ryu, "Time-domain passivity control of haptic interfaces", IEEE
// Trans. Robotics and Automation 18(1), 2002. J.-H. Ryu, D.-S. Kwon, B. Hannaford, "Stable
// teleoperation with time-domain passivity control", IEEE TRA 20(2), 2004. J. Artigas, J.-H. Ryu,
// C. Preusche, G. Hirzinger, "Network representation and passivity of delayed teleoperation
// systems", IEEE/RSJ IROS 2011. J.-H. Ryu, J. Artigas, C. Preusche, "A passive bilateral control
// scheme for a teleoperator with time-varying communication delay", Mechatronics 20, 2010.

#include <cstdint>
#include <vector>

namespace hyloop::core {

enum class PortCausality {
  kImpedance,   ///< input v (m/s), output f (N); f′ = f + α·v
  kAdmittance,  ///< input f (N), output v (m/s); v′ = v + β·f
};

enum class HoldConvention {
  kSameSample,  ///< P(n) = input(n)·output(n) (Hannaford & Ryu 2002)
  kHeldOutput,  ///< P(n) = input(n)·output′(n−1): output held over the next period (ZOH)
};

struct PassivityObserverConfig {
  double step = 1e-3;           ///< ΔT, s; finite, > 0
  double initial_energy = 0.0;  ///< E_0, J; finite, ≥ 0
};

/// One-port passivity observer: E_obs(n) = E_0 + ΔT·Σ f(k)·v(k), split into E_in and E_out.
class PassivityObserver {
 public:
  /// @throws std::invalid_argument naming the field (FIELD = VALUE: allowed).
  explicit PassivityObserver(const PassivityObserverConfig& config);

  /// Adds ΔT·effort·flow (J) and returns E_obs(n). A non-finite pair is ignored. RT-safe.
  double observe(double effort, double flow) noexcept;

  /// E_obs(n) = E_0 + E_in − E_out, J.
  [[nodiscard]] double energy() const noexcept {
    return config_.initial_energy + input_energy_ - output_energy_;
  }
  /// ΔT·Σ P over the steps with P > 0, J (≥ 0).
  [[nodiscard]] double input_energy() const noexcept { return input_energy_; }
  /// −ΔT·Σ P over the steps with P ≤ 0, J (≥ 0).
  [[nodiscard]] double output_energy() const noexcept { return output_energy_; }
  [[nodiscard]] bool passive() const noexcept { return energy() >= 0.0; }
  [[nodiscard]] std::uint64_t rejected_samples() const noexcept { return rejected_; }
  [[nodiscard]] const PassivityObserverConfig& config() const noexcept { return config_; }
  void reset() noexcept;

 private:
  PassivityObserverConfig config_;
  double input_energy_ = 0.0;
  double output_energy_ = 0.0;
  std::uint64_t rejected_ = 0;
};

struct PassivityControllerConfig {
  double step = 1e-3;  ///< ΔT, s; finite, > 0
  PortCausality causality = PortCausality::kImpedance;
  HoldConvention hold = HoldConvention::kSameSample;
  /// g_max: α_max in N·s/m (impedance) or β_max in m/(N·s) (admittance); finite, > 0. The
  /// default suits neither causality in general: set it (see "The bound g_max" above).
  double max_damping = 1e4;
  /// E_0, J; finite, ≥ 0. For a TwoPortSide: an energy credit added to the received E_in.
  double initial_energy = 0.0;
};

/// One-port passivity observer and controller (either causality, either hold convention).
class PassivityController {
 public:
  /// @throws std::invalid_argument naming the field (FIELD = VALUE: allowed).
  explicit PassivityController(const PassivityControllerConfig& config);

  /// Observes cycle n and returns output′ = output + g(n)·input. Impedance: input v (m/s), output
  /// f (N), returns f′. Admittance: input f (N), output v (m/s), returns v′. RT-safe.
  double step(double input, double output) noexcept;

  /// g(n): α (N·s/m) or β (m/(N·s)) of the last step; 0 ≤ g ≤ max_damping.
  [[nodiscard]] double damping() const noexcept { return damping_; }
  /// E_obs(n) of the unmodified port, J (includes E_0).
  [[nodiscard]] double observed_energy() const noexcept {
    return config_.initial_energy + observed_;
  }
  /// E_pc(n), J: the energy the PC has taken out of the port.
  [[nodiscard]] double dissipated_energy() const noexcept { return dissipated_; }
  /// E_obs + E_pc: the energy of the port as modified, J; ≥ 0 unless the bound clipped.
  [[nodiscard]] double port_energy() const noexcept {
    return observed_energy() + dissipated_energy();
  }
  /// Steps whose damping was clipped at max_damping.
  [[nodiscard]] std::uint64_t saturated_steps() const noexcept { return saturated_; }
  [[nodiscard]] std::uint64_t rejected_samples() const noexcept { return rejected_; }
  [[nodiscard]] const PassivityControllerConfig& config() const noexcept { return config_; }
  void reset() noexcept;

 private:
  PassivityControllerConfig config_;
  double observed_ = 0.0;    // ΔT·Σ input·output (kHeldOutput: with the held output)
  double dissipated_ = 0.0;  // E_pc
  double damping_ = 0.0;
  double last_input_ = 0.0, last_output_ = 0.0;  // kHeldOutput: the period being held
  std::uint64_t saturated_ = 0, rejected_ = 0;
};

/// One side of a delayed two-port channel (Artigas): its port's E_in / E_out, and a PC that keeps
/// the energy it releases within the other side's input energy received d steps late.
class TwoPortSide {
 public:
  /// Uses step, causality, max_damping and initial_energy (a credit); the hold must be
  /// kSameSample. @throws std::invalid_argument naming the field.
  explicit TwoPortSide(const PassivityControllerConfig& config);

  /// Cycle n with the remote side's E_in as received now (J); returns output′. RT-safe.
  double step(double input, double output, double remote_input_energy) noexcept;

  /// E_in of this side's port, J: what it sends to the other side.
  [[nodiscard]] double input_energy() const noexcept { return input_energy_; }
  /// E_out of the unmodified port, J.
  [[nodiscard]] double output_energy() const noexcept { return output_energy_; }
  [[nodiscard]] double dissipated_energy() const noexcept { return dissipated_; }
  /// E_out − E_pc: the energy the side has released as modified, J.
  [[nodiscard]] double net_output_energy() const noexcept { return output_energy_ - dissipated_; }
  /// The largest remote E_in received so far, J.
  [[nodiscard]] double remote_input_energy() const noexcept { return remote_; }
  [[nodiscard]] double damping() const noexcept { return damping_; }
  [[nodiscard]] std::uint64_t saturated_steps() const noexcept { return saturated_; }
  /// Steps ignored for a non-finite input or output (a non-finite remote energy is only skipped).
  [[nodiscard]] std::uint64_t rejected_samples() const noexcept { return rejected_; }
  [[nodiscard]] const PassivityControllerConfig& config() const noexcept { return config_; }
  void reset() noexcept;

 private:
  PassivityControllerConfig config_;
  double input_energy_ = 0.0, output_energy_ = 0.0, dissipated_ = 0.0;
  double remote_ = 0.0;
  double damping_ = 0.0;
  std::uint64_t saturated_ = 0, rejected_ = 0;
};

struct TwoPortPassivityConfig {
  static constexpr int kMaxDelaySteps = 1'000'000;
  double step = 1e-3;   ///< ΔT, s; finite, > 0
  int delay_steps = 1;  ///< d: each side receives the other's E_in(n−d); 1 … kMaxDelaySteps
  PortCausality left_causality = PortCausality::kImpedance;    ///< e.g. the master: v in, f out
  PortCausality right_causality = PortCausality::kAdmittance;  ///< e.g. the slave: f in, v out
  double left_max_damping = 1e4;   ///< g_max of the left PC; finite, > 0
  double right_max_damping = 1e4;  ///< g_max of the right PC; finite, > 0
};

/// Both sides of a channel with the energy messages delayed by d steps in each direction, for a
/// channel simulated in one process (a distributed loop uses a TwoPortSide at each end and sends
/// E_in with its data). Cycle n: step_left and step_right in any order, then advance().
class TwoPortPassivity {
 public:
  /// @throws std::invalid_argument naming the field. Allocates the two rings of d values.
  explicit TwoPortPassivity(const TwoPortPassivityConfig& config);

  /// Left side with E_in,right(n−d). RT-safe.
  double step_left(double input, double output) noexcept;
  /// Right side with E_in,left(n−d). RT-safe.
  double step_right(double input, double output) noexcept;
  /// Ends cycle n: E_in,left(n) and E_in,right(n) enter the channel. RT-safe.
  void advance() noexcept;

  [[nodiscard]] const TwoPortSide& left() const noexcept { return left_; }
  [[nodiscard]] const TwoPortSide& right() const noexcept { return right_; }
  [[nodiscard]] const TwoPortPassivityConfig& config() const noexcept { return config_; }
  void reset() noexcept;

 private:
  TwoPortPassivityConfig config_;
  TwoPortSide left_, right_;
  std::vector<double> to_left_, to_right_;  // in transit, oldest at head_ (sized d once)
  std::size_t head_ = 0;
};

}  // namespace hyloop::core
