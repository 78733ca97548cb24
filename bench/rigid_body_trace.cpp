// The torque-free tumble of core::RigidBody as CSV (issue 28, docs/sits6.md, "Figures"): a body
// of diagonal inertia I spun up to ω0 (body frame) and left alone, one row every `--every` steps:
//   t,wx,wy,wz,Lwx,Lwy,Lwz,E
// (s; body ω, rad/s; world angular momentum L_w = R·I·ω, N·m·s; kinetic energy, J), 17
// significant digits. tools/sits6_figures.py compares ω with Euler's analytic solution and
// plots the drift of |L_w| and E. Run (the defaults spelled out):
//   ./build/bin/rigid_body_trace --inertia 40 60 80 --omega 0.3 0.05 0.4 --step 0.002
//                                --duration 600 --every 1 --out -
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "hyloop/core/rigid_body.hpp"

namespace {

using Eigen::Vector3d;

void write_row(std::FILE* out, double t, const hyloop::core::RigidBody& body) {
  const Vector3d& w = body.state().angular_velocity;
  const Vector3d l = body.world_angular_momentum();
  std::fprintf(out, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", t, w.x(), w.y(), w.z(),
               l.x(), l.y(), l.z(), body.kinetic_energy());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Torque-free core::RigidBody as CSV: t,wx,wy,wz,Lwx,Lwy,Lwz,E"};
  std::vector<double> inertia{40.0, 60.0, 80.0};
  std::vector<double> omega{0.3, 0.05, 0.4};
  double step = 0.002;
  double duration = 600.0;
  long every = 1;
  std::string out = "-";
  app.add_option("--inertia", inertia, "principal moments I1 I2 I3, kg*m^2")->expected(3);
  app.add_option("--omega", omega, "initial body angular velocity, rad/s")->expected(3);
  app.add_option("--step", step, "time step T, s")->check(CLI::PositiveNumber);
  app.add_option("--duration", duration, "simulated time, s")->check(CLI::NonNegativeNumber);
  app.add_option("--every", every, "write one row every N steps")->check(CLI::PositiveNumber);
  app.add_option("--out", out, "CSV file ('-': stdout)");
  CLI11_PARSE(app, argc, argv);

  hyloop::core::RigidBodyState initial;
  initial.angular_velocity = Vector3d(omega[0], omega[1], omega[2]);
  hyloop::core::RigidBody body(
      {.mass = 1.0,
       .inertia = Vector3d(inertia[0], inertia[1], inertia[2]).asDiagonal(),
       .contact_offset = Vector3d::Zero(),
       .step = step},
      initial);
  std::FILE* file = out == "-" ? stdout : std::fopen(out.c_str(), "w");
  if (file == nullptr) {
    std::fprintf(stderr, "rigid_body_trace: cannot write %s\n", out.c_str());
    return 1;
  }
  std::fprintf(file, "t,wx,wy,wz,Lwx,Lwy,Lwz,E\n");
  write_row(file, 0.0, body);
  const long steps = std::lround(duration / step);
  for (long k = 1; k <= steps; ++k) {
    body.step(Vector3d::Zero(), Vector3d::Zero());
    if (k % every == 0) write_row(file, static_cast<double>(k) * step, body);
  }
  return (file == stdout ? std::fflush(file) : std::fclose(file)) == 0 ? 0 : 1;
}
