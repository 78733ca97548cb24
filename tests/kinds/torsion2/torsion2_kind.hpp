#pragma once
// A test-only fourth kind (issue 12): a two-inertia torsional target, to show that a kind is one
// folder and one registration line. Nothing in services/, apps/ or the coordinator names it.
//
// Numerical substructure: inertia J1 on a torsional spring k1 (damper c1) to ground, driven by
// M(t) = M0·sin(2π·f·t), coupled at the interface to the rig:
//   J1·θ1'' = M(t) − k1·θ1 − c1·θ1' + τ_meas                      (semi-implicit Euler, step T)
// Physical substructure (its rig part): the actuator imposes the interface angle θ_a (the held
// command); inertia J2 hangs on it through a shaft of stiffness k2 (damper c2):
//   J2·φ'' = −k2·(φ − θ_a) − c2·φ',   τ = k2·(φ − θ_a) + noise      (the torque on the interface)
// Signals (its own names and units): measurement θ_a [rad], φ [rad], τ [N*m]; command θ_cmd
// [rad] and its rate [rad/s], limited to ±limits.angle_rad and limits.rate_rad_per_s.
// In process it runs on LoopExperiment (loop_experiment.hpp), the chain the services run.

#include <memory>

#include "hyloop/experiment/kind.hpp"

namespace hyloop::testing {

/// The torsion2 kind, for experiment::register_kind.
std::unique_ptr<experiment::Kind> make_torsion2_kind();

}  // namespace hyloop::testing
