#include "hyloop/core/polynomial_predictor.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

std::string message_of(const PolynomialPredictorConfig& c) {
  try {
    PolynomialPredictor p(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(PolynomialPredictor, PaperCoefficientsOneTwoAnd177StepsAhead) {
  const auto w1 = PolynomialPredictor::compute_weights({2, 3, 1});
  ASSERT_EQ(w1.size(), 3u);
  EXPECT_NEAR(w1[0], 3.0, 1e-12);
  EXPECT_NEAR(w1[1], -3.0, 1e-12);
  EXPECT_NEAR(w1[2], 1.0, 1e-12);

  const auto w2 = PolynomialPredictor::compute_weights({2, 3, 2});
  EXPECT_NEAR(w2[0], 6.0, 1e-12);
  EXPECT_NEAR(w2[1], -8.0, 1e-12);
  EXPECT_NEAR(w2[2], 3.0, 1e-12);

  // FCU Eq. 26: 0.177 s at 1 ms.
  const auto w177 = PolynomialPredictor::compute_weights({2, 3, 177});
  EXPECT_NEAR(w177[0], 15931.0, 1e-8);
  EXPECT_NEAR(w177[1], -31683.0, 1e-8);
  EXPECT_NEAR(w177[2], 15753.0, 1e-8);
}

TEST(PolynomialPredictor, WeightsSumToOneAndMatchLagrangeForSquareFits) {
  // n = N + 1: the fit interpolates, ā_i are Lagrange basis values at t = P on nodes 0, −1, …
  for (int order = 0; order <= 5; ++order) {
    for (int p : {1, 3, 10}) {
      const auto w = PolynomialPredictor::compute_weights({order, order + 1, p});
      double sum = 0.0;
      for (int i = 0; i <= order; ++i) {
        double lagrange = 1.0;
        for (int j = 0; j <= order; ++j) {
          if (j != i) {
            lagrange *= (static_cast<double>(p) + j) / static_cast<double>(j - i);
          }
        }
        EXPECT_NEAR(w[static_cast<std::size_t>(i)], lagrange, 1e-9 * std::abs(lagrange) + 1e-9)
            << "order " << order << " P " << p << " i " << i;
        sum += w[static_cast<std::size_t>(i)];
      }
      EXPECT_NEAR(sum, 1.0, 1e-9);
    }
  }
}

TEST(PolynomialPredictor, PredictsPolynomialsOfDegreeUpToNExactly) {
  // n = 8 points, N = 3: least squares (not interpolation); a cubic must be reproduced.
  const PolynomialPredictorConfig config{3, 8, 25};
  for (int degree = 0; degree <= 3; ++degree) {
    PolynomialPredictor predictor(config);
    auto f = [degree](double k) { return 0.3 - 0.05 * k + 0.02 * std::pow(0.1 * k, degree); };
    double prediction = 0.0;
    int k = 0;
    for (; k < 20; ++k) {
      prediction = predictor.step(f(k));
    }
    EXPECT_NEAR(prediction, f(k - 1 + 25), 1e-9) << "degree " << degree;
  }
  // A quartic is not reproduced by a cubic fit (sanity of the test).
  PolynomialPredictor predictor(config);
  double prediction = 0.0;
  for (int k = 0; k < 20; ++k) {
    prediction = predictor.step(std::pow(0.1 * k, 4));
  }
  EXPECT_GT(std::abs(prediction - std::pow(0.1 * (19 + 25), 4)), 1e-3);
}

TEST(PolynomialPredictor, LeastSquaresLinearFitOfFivePoints) {
  // N = 1, n = 5, P = 1: closed form ā_i = 1/5 + (2 − i)·(P + 2)·… computed directly:
  // slope weights (t_i − t̄)/Σ(t − t̄)² with t_i = −i, t̄ = −2, Σ = 10; value at t = 1 is
  // mean + (1 − t̄)·slope → ā_i = 0.2 + 3·(2 − i)/10.
  const auto w = PolynomialPredictor::compute_weights({1, 5, 1});
  for (int i = 0; i < 5; ++i) {
    EXPECT_NEAR(w[static_cast<std::size_t>(i)], 0.2 + 0.3 * (2 - i), 1e-12);
  }
}

TEST(PolynomialPredictor, StartsFromTheInitialValueAndDoesNotAllocate) {
  PolynomialPredictor predictor({2, 3, 177}, 1.5);
  EXPECT_NEAR(predictor.prediction(), 1.5, 1e-9);
  predictor.reset(-2.0);
  hyloop::testing::AllocGuard guard;
  double y = 0.0;
  for (int k = 0; k < 1000; ++k) {
    y += predictor.step(-2.0);
  }
  EXPECT_EQ(guard.allocations(), 0u);
  EXPECT_NEAR(y, -2000.0, 1e-6);
}

TEST(PolynomialPredictor, RejectsBadConfigurationNamingTheField) {
  EXPECT_THAT(message_of({2, 3, 0}), ::testing::HasSubstr("steps_ahead = 0"));
  EXPECT_THAT(message_of({2, 2, 1}), ::testing::HasSubstr("points = 2"));
  EXPECT_THAT(message_of({3, 3, 1}), ::testing::HasSubstr("points = 3"));
  EXPECT_THAT(message_of({-1, 3, 1}), ::testing::HasSubstr("order = -1"));
  EXPECT_THROW(PolynomialPredictor({2, 3, -4}), std::invalid_argument);
}

}  // namespace
}  // namespace hyloop::core
