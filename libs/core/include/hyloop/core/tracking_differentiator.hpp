#pragma once
// Discrete optimal tracking differentiator (Han), SITS paper Eq. 49–50. Estimates the
// derivative of a sampled position X(k) without the noise of finite differencing.
//
//   d = r·h,  d0 = d·h,  y = x1 − X + h·x2,  a0 = √(d² + 8r|y|)
//   a = x2 + (a0 − d)/2·sign(y)   if |y| > d0,   a = x2 + y/h  otherwise
//   u = −r·sign(a)                if |a| > d,    u = −r·a/d    otherwise
//   x1(k+1) = x1(k) + T·x2(k),    x2(k+1) = x2(k) + T·u
//
// r (1/s² scale, "velocity factor") sets the tracking speed; h (s, "filtering factor", h ≥ T)
// the smoothing. The paper uses r = 10 000, h = 0.0034 at T = 0.002 s. Units: X in m gives x1
// in m and x2 in m/s.

namespace hyloop::core {

struct TrackingDifferentiatorConfig {
  double r = 10000.0;   ///< velocity factor, > 0
  double h = 0.0034;    ///< filtering factor in s, ≥ step
  double step = 0.002;  ///< sampling time T in s, > 0
};

class TrackingDifferentiator {
 public:
  /// @throws std::invalid_argument naming the field (r, h or step) that is out of range.
  explicit TrackingDifferentiator(const TrackingDifferentiatorConfig& config);

  /// Starts the tracker at position x and rate v. RT-safe.
  void reset(double x, double v = 0.0) noexcept;

  /// Takes X(k), advances to k+1 and returns the rate estimate x2(k+1). RT-safe.
  double update(double measured) noexcept;

  [[nodiscard]] double position() const noexcept { return x1_; }
  [[nodiscard]] double rate() const noexcept { return x2_; }

  /// The synthesis function f_td of Eq. 50 (exposed for tests).
  [[nodiscard]] double fhan(double measured) const noexcept;

 private:
  TrackingDifferentiatorConfig config_;
  double x1_ = 0.0;
  double x2_ = 0.0;
};

}  // namespace hyloop::core
