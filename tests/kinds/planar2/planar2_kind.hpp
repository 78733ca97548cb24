#pragma once
// A test-only kind of two commanded axes (issue 28's multi-axis loop contract): a point mass in
// the plane (the numerical substructure) whose x and y are commanded to a rig of two lagged
// actuators pressing a coupled spring (K = [[k, k_c], [k_c, k]]), which measures both forces.
// Each axis has its own safety window; the loop carries x_cmd, x_cmd_rate, y_cmd, y_cmd_rate.
#include <memory>

#include "hyloop/experiment/kind.hpp"

namespace hyloop::testing {

/// The planar2 kind, for experiment::register_kind.
std::unique_ptr<experiment::Kind> make_planar2_kind();

}  // namespace hyloop::testing
