#include "learner/baselines.h"

namespace placeto {

std::vector<double> BaselineStore::baseline(const std::string& graph, int steps) const {
  std::vector<double> sum(steps, 0.0);
  std::vector<int> count(steps, 0);
  auto it = history_.find(graph);
  if (it != history_.end())
    for (const auto& ret : it->second)
      for (int t = 0; t < steps && t < static_cast<int>(ret.size()); ++t) {
        sum[t] += ret[t];
        ++count[t];
      }
  for (int t = 0; t < steps; ++t) sum[t] = count[t] ? sum[t] / count[t] : 0.0;
  return sum;
}

void BaselineStore::add(const std::string& graph, const std::vector<double>& returns) {
  auto& h = history_[graph];
  h.push_back(returns);
  while (static_cast<int>(h.size()) > window_) h.pop_front();
}

}  // namespace placeto
