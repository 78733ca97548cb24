#include "hyloop/core/polynomial.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <vector>

namespace hyloop::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Complex = std::complex<double>;

// Sorts roots by real part, then imaginary part, for comparison.
std::vector<Complex> sorted(std::vector<Complex> r) {
  std::sort(r.begin(), r.end(), [](Complex a, Complex b) {
    return a.real() != b.real() ? a.real() < b.real() : a.imag() < b.imag();
  });
  return r;
}

TEST(PolynomialTest, TrimsTrailingZerosAndReportsDegree) {
  const Polynomial p({1.0, 2.0, 0.0, 0.0});
  EXPECT_EQ(p.degree(), 1);
  EXPECT_THAT(p.coeffs(), ElementsAre(1.0, 2.0));
  EXPECT_EQ(p.coeff(5), 0.0);
  EXPECT_EQ(p.coeff(-1), 0.0);
  const Polynomial zero({0.0, 0.0});
  EXPECT_TRUE(zero.is_zero());
  EXPECT_EQ(zero.degree(), -1);
  EXPECT_EQ(Polynomial().degree(), -1);
  EXPECT_EQ(Polynomial::constant(3.0).degree(), 0);
  EXPECT_EQ(Polynomial::monomial(3, 2.0), Polynomial({0.0, 0.0, 0.0, 2.0}));
}

TEST(PolynomialTest, DescendingRoundTrip) {
  const std::vector<double> d{2.0, 3.0, 1.0};  // 2s² + 3s + 1
  const Polynomial p = Polynomial::from_descending(d);
  EXPECT_THAT(p.coeffs(), ElementsAre(1.0, 3.0, 2.0));
  EXPECT_EQ(p.descending(), d);
  EXPECT_THAT(Polynomial().descending(), ElementsAre(0.0));
}

TEST(PolynomialTest, RejectsNonFiniteCoefficientNamingIt) {
  try {
    const Polynomial p({1.0, std::nan("")});
    FAIL() << "expected std::invalid_argument, got " << p.to_string();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("ascending[1]"));
  }
  EXPECT_THROW(Polynomial::monomial(-1), std::invalid_argument);
}

TEST(PolynomialTest, ArithmeticByConvolution) {
  const Polynomial a({1.0, 1.0});  // s + 1
  const Polynomial b({2.0, 1.0});  // s + 2
  EXPECT_EQ(a * b, Polynomial({2.0, 3.0, 1.0}));
  EXPECT_EQ(a + b, Polynomial({3.0, 2.0}));
  EXPECT_EQ(a - b, Polynomial::constant(-1.0));
  EXPECT_EQ(a * 2.0, Polynomial({2.0, 2.0}));
  EXPECT_EQ(2.0 * a, Polynomial({2.0, 2.0}));
  EXPECT_EQ(a / 2.0, Polynomial({0.5, 0.5}));
  EXPECT_EQ(-a, Polynomial({-1.0, -1.0}));
  EXPECT_TRUE((a - a).is_zero());
  EXPECT_TRUE((a * Polynomial()).is_zero());
  // Leading terms cancel: the degree drops.
  const Polynomial c = Polynomial({1.0, 0.0, 1.0}) - Polynomial({0.0, 1.0, 1.0});
  EXPECT_EQ(c.degree(), 1);
  Polynomial d = a;
  d *= b;
  d += a;
  d -= b;
  EXPECT_EQ(d, Polynomial({1.0, 3.0, 1.0}));
}

TEST(PolynomialTest, FromRootsMultipliesConjugatePairsIntoRealQuadratics) {
  // (s + 3)(s² + 2s + 5) = s³ + 5s² + 11s + 15
  const std::vector<Complex> roots{{-1.0, 2.0}, {-3.0, 0.0}, {-1.0, -2.0}};
  const Polynomial p = Polynomial::from_roots(roots, 2.0);
  EXPECT_THAT(p.coeffs(), ElementsAre(30.0, 22.0, 10.0, 2.0));
  const std::vector<Complex> unpaired{{-1.0, 2.0}, {-3.0, 0.0}};
  try {
    Polynomial::from_roots(unpaired);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("roots[0]"));
    EXPECT_THAT(e.what(), HasSubstr("conjugate"));
  }
  EXPECT_EQ(Polynomial::from_roots({}, 4.0), Polynomial::constant(4.0));
}

TEST(PolynomialTest, EvaluatesAtComplexAndRealPoints) {
  const Polynomial p({1.0, 0.0, 1.0});  // s² + 1
  EXPECT_EQ(p.evaluate(Complex(0.0, 1.0)), Complex(0.0, 0.0));
  EXPECT_EQ(p.evaluate(Complex(1.0, 1.0)), Complex(1.0, 2.0));  // (1 + j)² + 1
  EXPECT_EQ(p.evaluate(3.0), 10.0);
  EXPECT_EQ(Polynomial().evaluate(2.0), 0.0);
}

TEST(PolynomialTest, Derivative) {
  const Polynomial p({5.0, 3.0, 0.0, 2.0});  // 2s³ + 3s + 5
  EXPECT_EQ(p.derivative(), Polynomial({3.0, 0.0, 6.0}));
  EXPECT_TRUE(Polynomial::constant(7.0).derivative().is_zero());
}

TEST(PolynomialTest, RootsOfIntegerRootPolynomialDegreeEight) {
  std::vector<Complex> expected;
  for (int k = 1; k <= 8; ++k) {
    expected.emplace_back(-static_cast<double>(k), 0.0);
  }
  const Polynomial p = Polynomial::from_roots(expected);
  const std::vector<Complex> r = sorted(p.roots());
  ASSERT_EQ(r.size(), 8U);
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_NEAR(r[i].real(), -8.0 + static_cast<double>(i), 1e-9);
    EXPECT_EQ(r[i].imag(), 0.0);
  }
}

TEST(PolynomialTest, RootsComeInExactConjugatePairs) {
  const Polynomial p({5.0, 2.0, 1.0});  // s² + 2s + 5: −1 ± 2j
  const std::vector<Complex> r = sorted(p.roots());
  ASSERT_EQ(r.size(), 2U);
  EXPECT_NEAR(r[0].real(), -1.0, 1e-14);
  EXPECT_NEAR(r[0].imag(), -2.0, 1e-14);
  EXPECT_EQ(r[1], std::conj(r[0]));
}

TEST(PolynomialTest, RootsAtTheOriginAreExact) {
  const Polynomial p({0.0, 0.0, 2.0, 1.0});  // s²(s + 2)
  const std::vector<Complex> r = sorted(p.roots());
  ASSERT_EQ(r.size(), 3U);
  EXPECT_NEAR(r[0].real(), -2.0, 1e-15);
  EXPECT_EQ(r[1], Complex(0.0, 0.0));
  EXPECT_EQ(r[2], Complex(0.0, 0.0));
  EXPECT_TRUE(Polynomial::constant(3.0).roots().empty());
  EXPECT_THROW((void)Polynomial().roots(), std::invalid_argument);
}

TEST(PolynomialTest, RootsOfBadlyScaledPolynomial) {
  // Roots spread over six decades, like a SITS characteristic polynomial.
  const std::vector<Complex> expected{{-150.0, 200.0}, {-150.0, -200.0}, {-0.5, 0.0}, {-3.0e4, 0.0},
                                      {-500.0, 0.0},   {2.0, 1.0},       {2.0, -1.0}};
  const Polynomial p = Polynomial::from_roots(expected, 4.0e-3);
  const std::vector<Complex> r = sorted(p.roots());
  const std::vector<Complex> e = sorted(expected);
  ASSERT_EQ(r.size(), e.size());
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_LT(std::abs(r[i] - e[i]) / std::abs(e[i]), 1e-10) << i;
  }
}

TEST(PolynomialTest, ToStringIsJsonArrayAndExpressionIsReadable) {
  const Polynomial p({1.0, 3.0, 2.0});
  EXPECT_EQ(p.to_string(), "[1,3,2]");
  EXPECT_EQ(Polynomial({0.1, -1.0}).to_string(), "[0.1,-1]");
  EXPECT_EQ(Polynomial().to_string(), "[]");
  EXPECT_EQ(p.to_expression(), "2*s^2 + 3*s + 1");
  EXPECT_EQ(Polynomial({-0.5, 0.0, -1.0}).to_expression('z'), "-z^2 - 0.5");
  EXPECT_EQ(Polynomial().to_expression(), "0");
}

}  // namespace
}  // namespace hyloop::core
