// Logging setup: spdlog to stderr, and optionally to a per-rank file in a run directory.
// Other ranks than 0 are quieter on the console (warnings only) so that a 64-rank job
// prints one stream of progress.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace placeto {

struct LogOptions {
  int rank = 0;
  std::string level = "info";  // trace, debug, info, warn, error
  std::string file;            // "" = console only
  bool quiet_nonzero_ranks = true;
};

// Installs the default logger. Safe to call again (replaces it).
void init_logging(const LogOptions& options);

}  // namespace placeto
