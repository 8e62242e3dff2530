// `placeto profile`: an imported model with every op timed on the local device
// (profiler/op_timer.h), beside the analytic cost that `placeto import` gives it.
// The header does not include torch; profile_model() needs a LibTorch build.
#pragma once

#include <string>
#include <vector>

#include "profiler/op_timer.h"
#include "sim/graph.h"
#include "sim/onnx/onnx_import.h"

namespace placeto {

struct ProfileOptions {
  // How the model is imported: training (time the grad and update ops too), dynamic_dim (the
  // batch: the value of the model's dynamic axes), profile (the analytic costs compared with).
  ImportOptions import;
  TimingOptions timing;
  bool progress = true;  // a progress line on stderr
};

struct OpMeasurement {
  std::string kernel;      // what was timed (op_timer.h), or why nothing was
  bool measured = false;   // false for inputs, views (no kernel) and ops of unknown shape
  double measured_us = 0;  // the op's cost in the measured graph
  double analytic_us = 0;  // the imported graph's cost (ImportOptions::profile)
};

struct ProfileResult {
  ImportResult imported;           // the graph with analytic costs, and its ops
  std::vector<OpMeasurement> ops;  // one per graph op, in node order
  Graph measured;                  // the same graph with measured costs
  double seconds = 0;              // time spent timing
};

// Imports `path`, times its ops and returns both graphs.  Ops not measured keep cost 0 when
// they have no kernel (inputs, views) and their analytic cost otherwise (unknown shapes).
ProfileResult profile_model(const std::string& path, const ProfileOptions& options);

}  // namespace placeto
