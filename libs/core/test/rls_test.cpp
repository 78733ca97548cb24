#include "hyloop/core/rls.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <vector>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

// y(k) = a1 y(k−1) + a2 y(k−2) + b1 u(k−1) + b2 u(k−2) + e(k)
struct Arx {
  std::vector<RlsVector> phi;
  std::vector<double> y;
};

Arx simulate_arx(const Eigen::Vector4d& theta, int n, double noise_std, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> u_dist(0.0, 1.0);
  std::normal_distribution<double> e_dist(0.0, 1.0);
  Arx arx;
  double y1 = 0.0, y2 = 0.0, u1 = 0.0, u2 = 0.0;
  for (int k = 0; k < n; ++k) {
    RlsVector phi(4);
    phi << y1, y2, u1, u2;
    const double y = phi.dot(RlsVector(theta)) + noise_std * e_dist(rng);
    arx.phi.push_back(phi);
    arx.y.push_back(y);
    y2 = y1;
    y1 = y;
    u2 = u1;
    u1 = u_dist(rng);
  }
  return arx;
}

const Eigen::Vector4d kTheta{1.5, -0.7, 1.0, 0.5};

TEST(Rls, ConvergesToTheParametersOfASimulatedArxSystem) {
  const Arx arx = simulate_arx(kTheta, 400, 0.0, 1);
  RecursiveLeastSquares rls({.parameters = 4, .forgetting_factor = 1.0});
  for (std::size_t k = 0; k < arx.y.size(); ++k) {
    EXPECT_EQ(rls.update(arx.phi[k], arx.y[k]), RlsStatus::kAccepted);
  }
  const double err = (rls.parameters() - RlsVector(kTheta)).cwiseAbs().maxCoeff();
  std::printf("noise-free ARX(2,2): max |theta - true| = %.3e\n", err);
  EXPECT_LT(err, 1e-6);
  EXPECT_EQ(rls.count(RlsStatus::kAccepted), 400u);
  EXPECT_EQ(rls.rejected(), 0u);

  // With white equation noise (σ = 0.05) the estimate is unbiased: within a few σ/√N, in every
  // one of the noise seeds 1–20.
  double worst = 0.0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const Arx noisy = simulate_arx(kTheta, 5000, 0.05, seed);
    RecursiveLeastSquares rls2({.parameters = 4, .forgetting_factor = 1.0});
    for (std::size_t k = 0; k < noisy.y.size(); ++k) {
      rls2.update(noisy.phi[k], noisy.y[k]);
    }
    const double err2 = (rls2.parameters() - RlsVector(kTheta)).cwiseAbs().maxCoeff();
    EXPECT_LT(err2, 5e-3) << "seed " << seed;
    worst = std::max(worst, err2);
  }
  std::printf("noisy ARX(2,2), sigma 0.05, 5000 samples, seeds 1-20: max |theta - true| <= %.3e\n",
              worst);
}

TEST(Rls, WithUnitForgettingItEqualsTheBatchFitOfAllData) {
  // RLS started from the batch fit of the first L rows, then updated with the rest, gives the
  // batch least-squares solution of all rows (an exact identity of RLS with λ = 1).
  const Arx arx = simulate_arx(kTheta, 300, 0.1, 3);
  const int l = 40;
  Eigen::MatrixXd phi_all(300, 4);
  Eigen::VectorXd y_all(300);
  for (int k = 0; k < 300; ++k) {
    phi_all.row(k) = arx.phi[static_cast<std::size_t>(k)].transpose();
    y_all(k) = arx.y[static_cast<std::size_t>(k)];
  }
  RecursiveLeastSquares rls({.parameters = 4, .forgetting_factor = 1.0});
  rls.initialise_batch(phi_all.topRows(l), y_all.head(l));
  const Eigen::MatrixXd p0 = (phi_all.topRows(l).transpose() * phi_all.topRows(l)).inverse();
  EXPECT_LT((rls.covariance() - p0).cwiseAbs().maxCoeff(), 1e-12 * p0.cwiseAbs().maxCoeff());
  for (int k = l; k < 300; ++k) {
    rls.update(arx.phi[static_cast<std::size_t>(k)], arx.y[static_cast<std::size_t>(k)]);
  }
  const Eigen::VectorXd batch =
      (phi_all.transpose() * phi_all).ldlt().solve(phi_all.transpose() * y_all);
  EXPECT_LT((rls.parameters() - batch).cwiseAbs().maxCoeff(), 1e-10);
}

// Eigen's matrix product blocks a long sum by the cache sizes it detects on the CPU at run time.
// The batch fit must give the same bits on every machine: emulate CPUs with L1 caches of 16, 32,
// 48 and 64 KB (the last two as on recent Intel and Apple cores) and compare θ0 and P0 exactly.
TEST(Rls, BatchFitIsTheSameBitsWhateverTheCpuCacheSizes) {
  const int rows = 4000;
  const Arx arx = simulate_arx(kTheta, rows, 0.1, 5);
  Eigen::MatrixXd phi(rows, 4);
  Eigen::VectorXd y(rows);
  for (int k = 0; k < rows; ++k) {
    phi.row(k) = arx.phi[static_cast<std::size_t>(k)].transpose();
    y(k) = arx.y[static_cast<std::size_t>(k)];
  }
  const std::ptrdiff_t l1 = Eigen::l1CacheSize(), l2 = Eigen::l2CacheSize(),
                       l3 = Eigen::l3CacheSize();
  std::vector<RecursiveLeastSquares> fits;
  for (std::ptrdiff_t cache : {16384, 32768, 49152, 65536}) {
    Eigen::setCpuCacheSizes(cache, 1 << 20, 32 << 20);
    fits.emplace_back(RlsConfig{.parameters = 4, .forgetting_factor = 1.0});
    fits.back().initialise_batch(phi, y, 1e-9);
  }
  Eigen::setCpuCacheSizes(l1, l2, l3);
  for (std::size_t i = 1; i < fits.size(); ++i) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(fits[i].parameters()(j), fits[0].parameters()(j)) << "L1 case " << i << ", θ" << j;
      for (int m = 0; m < 4; ++m) EXPECT_EQ(fits[i].covariance()(j, m), fits[0].covariance()(j, m));
    }
  }
}

TEST(Rls, ForgettingTracksASlowlyChangingParameter) {
  // y(k) = a·y(k−1) + b(k)·u(k), a = 0.5, b(k) = 1 + 0.5 sin(2πk/2000).
  auto run = [](double lambda, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> u_dist(0.0, 1.0);
    RecursiveLeastSquares rls({.parameters = 2, .forgetting_factor = lambda});
    double y1 = 0.0;
    double worst = 0.0;
    for (int k = 0; k < 6000; ++k) {
      const double b = 1.0 + 0.5 * std::sin(2.0 * std::numbers::pi * k / 2000.0);
      const double u = u_dist(rng);
      const double y = 0.5 * y1 + b * u;
      RlsVector phi(2);
      phi << y1, u;
      rls.update(phi, y);
      y1 = y;
      if (k >= 2000) {
        worst = std::max(worst, std::abs(rls.parameters()(1) - b));
      }
    }
    return worst;
  };
  // Over the input seeds 1–20 (a random input is one draw).
  double tracked_max = 0.0, frozen_min = 1e9, ratio_min = 1e9;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const double tracked = run(0.95, seed);
    const double frozen = run(1.0, seed);
    // Lag of a window of 1/(1 − λ) = 20 samples on a slope of at most 1.6e-3 a sample: ≈ 0.03.
    EXPECT_LT(tracked, 0.06) << "seed " << seed;
    EXPECT_LT(10.0 * tracked, frozen) << "seed " << seed;
    EXPECT_GT(frozen, 0.3) << "seed " << seed;
    tracked_max = std::max(tracked_max, tracked);
    frozen_min = std::min(frozen_min, frozen);
    ratio_min = std::min(ratio_min, frozen / tracked);
  }
  std::printf(
      "slowly varying b, seeds 1-20: max tracking error lambda 0.95 <= %.3e, lambda 1 >= %.3e, "
      "ratio >= %.1f\n",
      tracked_max, frozen_min, ratio_min);
}

TEST(Rls, GuardKeepsTheModelOnNaN) {
  const Arx arx = simulate_arx(kTheta, 200, 0.0, 4);
  RecursiveLeastSquares rls({.parameters = 4, .forgetting_factor = 0.97});
  for (std::size_t k = 0; k < 100; ++k) {
    rls.update(arx.phi[k], arx.y[k]);
  }
  const RlsVector theta = rls.parameters();
  const RlsMatrix p = rls.covariance();
  EXPECT_EQ(rls.update(arx.phi[100], std::numeric_limits<double>::quiet_NaN()),
            RlsStatus::kNotFinite);
  RlsVector bad = arx.phi[101];
  bad(2) = std::numeric_limits<double>::infinity();
  EXPECT_EQ(rls.update(bad, arx.y[101]), RlsStatus::kNotFinite);
  EXPECT_EQ(rls.parameters(), theta);
  EXPECT_EQ(rls.covariance(), p);
  EXPECT_EQ(rls.count(RlsStatus::kNotFinite), 2u);
  EXPECT_EQ(rls.last_rejection(), RlsStatus::kNotFinite);
  EXPECT_EQ(to_string(rls.last_rejection()), "not_finite");
  // Good data is accepted again afterwards.
  EXPECT_EQ(rls.update(arx.phi[102], arx.y[102]), RlsStatus::kAccepted);
  EXPECT_EQ(rls.last_rejection(), RlsStatus::kNotFinite);
  EXPECT_EQ(rls.rejected(), 2u);
}

TEST(Rls, GuardStopsCovarianceWindupAndParameterJumps) {
  // No excitation with λ = 0.9: P grows by 1/λ a step until the trace limit holds it.
  RecursiveLeastSquares rls({.parameters = 2,
                             .forgetting_factor = 0.9,
                             .initial_covariance = 1.0,
                             .max_covariance_trace = 100.0});
  const RlsVector zero = RlsVector::Zero(2);
  int accepted = 0;
  for (int k = 0; k < 100; ++k) {
    accepted += rls.update(zero, 0.0) == RlsStatus::kAccepted ? 1 : 0;
  }
  // trace = 2·0.9^−k ≤ 100 ⇔ k ≤ ln 50/ln(1/0.9) = 37.1
  EXPECT_EQ(accepted, 37);
  EXPECT_EQ(rls.count(RlsStatus::kCovarianceLimit), 63u);
  EXPECT_LE(rls.covariance().trace(), 100.0);

  RecursiveLeastSquares jump(
      {.parameters = 1, .forgetting_factor = 1.0, .max_parameter_jump = 0.1});
  RlsVector theta(1);
  theta << 2.0;
  RlsMatrix p(1, 1);
  p << 0.01;
  jump.reset(theta, p);
  RlsVector phi(1);
  phi << 1.0;
  EXPECT_EQ(jump.update(phi, 2.05), RlsStatus::kAccepted);  // Δθ = 0.01·0.05/1.01
  EXPECT_EQ(jump.update(phi, 200.0), RlsStatus::kParameterJump);
  EXPECT_NEAR(jump.parameters()(0), 2.0 + 0.01 * 0.05 / 1.01, 1e-15);
  EXPECT_EQ(jump.count(RlsStatus::kParameterJump), 1u);
}

TEST(Rls, UpdateDoesNotAllocate) {
  const Arx arx = simulate_arx(kTheta, 100, 0.0, 5);
  RecursiveLeastSquares rls({.parameters = 4, .forgetting_factor = 0.97});
  RecursiveLeastSquares big({.parameters = 16, .forgetting_factor = 0.99});
  double raw[16] = {};
  hyloop::testing::AllocGuard guard;
  for (std::size_t k = 0; k < arx.y.size(); ++k) {
    rls.update(arx.phi[k], arx.y[k]);
    raw[k % 16] = arx.y[k];
    big.update(raw, arx.y[k]);
  }
  EXPECT_EQ(guard.allocations(), 0u);
}

std::string message_of(const RlsConfig& c) {
  try {
    RecursiveLeastSquares rls(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Rls, RejectsBadConfigurationAndData) {
  EXPECT_EQ(message_of({.parameters = 3, .forgetting_factor = -0.5}),
            "forgetting_factor = -0.5: must be in (0, 1]");
  EXPECT_THAT(message_of({.parameters = 3, .forgetting_factor = 1.2}),
              ::testing::HasSubstr("forgetting_factor = 1.2"));
  EXPECT_THAT(message_of({.parameters = 17}), ::testing::HasSubstr("parameters = 17"));
  EXPECT_THAT(message_of({.parameters = 0}), ::testing::HasSubstr("parameters = 0"));
  EXPECT_THAT(message_of({.parameters = 2, .initial_covariance = 0.0}),
              ::testing::HasSubstr("initial_covariance = 0"));

  RecursiveLeastSquares rls({.parameters = 3});
  Eigen::MatrixXd phi(10, 3);
  for (int i = 0; i < 10; ++i) {
    phi(i, 0) = i;
    phi(i, 1) = 2.0 * i;  // collinear with column 0
    phi(i, 2) = 1.0;
  }
  try {
    rls.initialise_batch(phi, Eigen::VectorXd::Ones(10));
    FAIL() << "singular data accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("rank 2"));
  }
  EXPECT_THROW(rls.initialise_batch(phi.topRows(2), Eigen::VectorXd::Ones(2)),
               std::invalid_argument);
  EXPECT_THAT([&] { rls.initialise_batch(phi, Eigen::VectorXd::Ones(10), -1.0); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("ridge = -1")));
  // A ridge makes the collinear data solvable: θ0 = (ΦᵀΦ + ρ·tr/n·I)⁻¹ΦᵀD.
  rls.initialise_batch(phi, Eigen::VectorXd::Ones(10), 1e-6);
  Eigen::MatrixXd gram = phi.transpose() * phi;
  gram.diagonal().array() += 1e-6 * gram.trace() / 3.0;
  const Eigen::VectorXd expected = gram.inverse() * phi.transpose() * Eigen::VectorXd::Ones(10);
  EXPECT_LT((rls.parameters() - expected).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_THROW(rls.initialise_batch(phi, Eigen::VectorXd::Ones(9)), std::invalid_argument);
}

}  // namespace
}  // namespace hyloop::core
