#include "common/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <vector>

#include "common/error.h"

namespace placeto {

void init_logging(const LogOptions& options) {
  auto level = spdlog::level::from_str(options.level);
  if (level == spdlog::level::off && options.level != "off")
    throw InputError("log level '" + options.level +
                     "' is unknown (trace, debug, info, warn, error)");
  std::vector<spdlog::sink_ptr> sinks;
  auto console = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  console->set_level(options.rank != 0 && options.quiet_nonzero_ranks ? spdlog::level::warn
                                                                      : level);
  console->set_pattern(options.rank == 0 ? "[%H:%M:%S.%e] [%^%l%$] %v"
                                         : "[%H:%M:%S.%e] [rank " + std::to_string(options.rank) +
                                               "] [%^%l%$] %v");
  sinks.push_back(console);
  if (!options.file.empty()) {
    try {
      auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.file, false);
      file->set_level(level);
      file->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
      sinks.push_back(file);
    } catch (const spdlog::spdlog_ex& e) {
      throw SystemError(options.file + ": cannot open log file: " + e.what());
    }
  }
  auto logger = std::make_shared<spdlog::logger>("placeto", sinks.begin(), sinks.end());
  logger->set_level(level);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace placeto
