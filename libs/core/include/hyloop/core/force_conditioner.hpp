#pragma once
// Conditioning of a force measurement before the loop uses it (the sensor acquisition step):
// tare (zero at the first sample, the load at arming) and a first-order anti-aliasing low-pass
//   y[k] = y[k−1] + a·(u[k] − y[k−1]),  a = T/(τ_f + T),  y[0] = u[0]
// whose low-frequency delay ≈ τ_f adds to the measured force delay. With tare off and τ_f = 0
// the output equals the input exactly. RT-safe.

namespace hyloop::core {

class ForceConditioner {
 public:
  ForceConditioner(bool tare, double time_constant_s, double step_s) noexcept
      : tare_(tare),
        a_(time_constant_s > 0.0 ? step_s / (time_constant_s + step_s) : 1.0),
        filter_(time_constant_s > 0.0) {}

  /// The conditioned force of one raw sample (N).
  double update(double raw) noexcept {
    if (tare_ && !tared_) {
      offset_ = raw;
      tared_ = true;
    }
    const double u = raw - offset_;
    if (!filter_) {
      return u;
    }
    y_ = started_ ? y_ + a_ * (u - y_) : u;
    started_ = true;
    return y_;
  }

  [[nodiscard]] double offset() const noexcept { return offset_; }

 private:
  bool tare_;
  double a_;
  bool filter_;
  bool tared_ = false;
  bool started_ = false;
  double offset_ = 0.0;
  double y_ = 0.0;
};

}  // namespace hyloop::core
