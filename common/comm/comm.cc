#include "common/comm/comm.h"

#include <algorithm>
#include <cstring>

namespace placeto {

std::vector<std::string> Communicator::all_gather_strings(const std::string& local) {
  // Every rank pads to the longest string so that one fixed-size all-gather suffices.
  const size_t width = static_cast<size_t>(all_reduce_max(static_cast<int64_t>(local.size())));
  std::vector<char> mine(std::max<size_t>(width, 1), '\0');
  std::memcpy(mine.data(), local.data(), local.size());
  std::vector<char> all(mine.size() * static_cast<size_t>(size()));
  all_gather_bytes(mine.data(), mine.size(), all.data());
  std::vector<std::string> out;
  for (int r = 0; r < size(); ++r) {
    const char* begin = all.data() + static_cast<size_t>(r) * mine.size();
    out.emplace_back(begin, strnlen(begin, mine.size()));
  }
  return out;
}

std::vector<double> Communicator::all_gather_doubles(const std::vector<double>& local) {
  std::vector<double> out(local.size() * static_cast<size_t>(size()));
  all_gather_bytes(local.data(), local.size() * sizeof(double), out.data());
  return out;
}

}  // namespace placeto
