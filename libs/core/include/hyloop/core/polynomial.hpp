#pragma once
// Real polynomial in one variable (s or z), coefficients in ASCENDING powers:
//
//   p(s) = c0 + c1·s + c2·s² + … + cn·sⁿ,        coeffs()[i] = ci
//
// Used to build characteristic polynomials by products (SITS Eq. 34–35), to convert between
// transfer-function, zero/pole and state-space forms (Eq. 32) and by the Routh analysis
// (Eq. 36–39). Trailing zero coefficients are trimmed on every construction, so degree() is
// the true degree; the zero polynomial has no coefficients and degree −1.
//
// Transfer functions (lti.hpp) store coefficients in DESCENDING powers (MATLAB order): use
// from_descending() / descending() to cross over.
//
// Nothing here is real-time safe: every operation that returns a Polynomial allocates.

#include <complex>
#include <span>
#include <string>
#include <vector>

namespace hyloop::core {

class Polynomial {
 public:
  /// The zero polynomial.
  Polynomial() = default;

  /// @param ascending ci multiplies sⁱ; every coefficient finite.
  /// @throws std::invalid_argument naming `ascending` and the index of a non-finite coefficient.
  explicit Polynomial(std::vector<double> ascending);

  /// The constant c (the zero polynomial if c == 0).
  static Polynomial constant(double c);

  /// coefficient·s^power, power ≥ 0.
  static Polynomial monomial(int power, double coefficient = 1.0);

  /// From coefficients in descending powers: descending[0] multiplies s^(n), the last s⁰.
  static Polynomial from_descending(std::span<const double> descending);

  /// leading·Π(s − r) over `roots`. Complex roots must come in conjugate pairs (matched within a
  /// relative 1e-6); each pair becomes the real quadratic s² − 2·Re(r)·s + |r|². A root whose
  /// imaginary part is below 1e-12·max(1, |r|) and that has no partner counts as real.
  /// @throws std::invalid_argument naming `roots` if a complex root has no conjugate partner or a
  ///         root is not finite.
  static Polynomial from_roots(std::span<const std::complex<double>> roots, double leading = 1.0);

  /// Ascending coefficients, trailing zeros trimmed (empty for the zero polynomial).
  [[nodiscard]] const std::vector<double>& coeffs() const noexcept { return coeffs_; }
  /// ci, or 0 for i < 0 or i > degree().
  [[nodiscard]] double coeff(int power) const noexcept;
  /// Coefficients in descending powers ({0} for the zero polynomial).
  [[nodiscard]] std::vector<double> descending() const;

  /// The degree; −1 for the zero polynomial.
  [[nodiscard]] int degree() const noexcept { return static_cast<int>(coeffs_.size()) - 1; }
  [[nodiscard]] bool is_zero() const noexcept { return coeffs_.empty(); }
  /// cn, or 0 for the zero polynomial.
  [[nodiscard]] double leading() const noexcept { return coeffs_.empty() ? 0.0 : coeffs_.back(); }

  /// p(s) by Horner's scheme. RT-safe (no allocation, no exception).
  [[nodiscard]] std::complex<double> evaluate(std::complex<double> s) const noexcept;
  [[nodiscard]] double evaluate(double s) const noexcept;

  /// dp/ds.
  [[nodiscard]] Polynomial derivative() const;

  /// All n roots (with multiplicity), as the eigenvalues of the balanced companion matrix
  /// (Eigen::EigenSolver), each refined by Newton steps that are kept only if they reduce |p|.
  /// Exact zero roots (c0 = c1 = … = 0) are returned exactly. Complex roots come in exact
  /// conjugate pairs; real roots have a zero imaginary part. Empty for a constant.
  /// @throws std::invalid_argument for the zero polynomial (every s is a root), or when a
  /// coefficient over the leading one is not finite (overflow).
  [[nodiscard]] std::vector<std::complex<double>> roots() const;

  /// JSON array of the ascending coefficients, shortest round-trip decimal form, e.g.
  /// "[1,3,2]" for 2s² + 3s + 1 ("[]" for the zero polynomial).
  [[nodiscard]] std::string to_string() const;
  /// Human-readable form for logs, e.g. "2*s^2 + 3*s + 1".
  [[nodiscard]] std::string to_expression(char variable = 's') const;

  Polynomial& operator+=(const Polynomial& other);
  Polynomial& operator-=(const Polynomial& other);
  Polynomial& operator*=(const Polynomial& other);  // convolution of the coefficients
  Polynomial& operator*=(double scale);
  Polynomial& operator/=(double scale);

  friend Polynomial operator+(Polynomial lhs, const Polynomial& rhs) { return lhs += rhs; }
  friend Polynomial operator-(Polynomial lhs, const Polynomial& rhs) { return lhs -= rhs; }
  friend Polynomial operator*(const Polynomial& lhs, const Polynomial& rhs);
  friend Polynomial operator*(Polynomial lhs, double scale) { return lhs *= scale; }
  friend Polynomial operator*(double scale, Polynomial rhs) { return rhs *= scale; }
  friend Polynomial operator/(Polynomial lhs, double scale) { return lhs /= scale; }
  friend Polynomial operator-(Polynomial p) { return p *= -1.0; }

  /// Exact coefficient-wise equality.
  friend bool operator==(const Polynomial& lhs, const Polynomial& rhs) = default;

 private:
  void trim() noexcept;

  std::vector<double> coeffs_;
};

}  // namespace hyloop::core
