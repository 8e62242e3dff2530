// Per-step baselines for REINFORCE: b_t = mean return at step t over the last N episodes of
// the same graph.  Kept per graph because step t is a different op on each graph and return
// scales differ between graphs (rewards are normalised by the start runtime, which helps but
// does not make them equal).  No torch.  Not thread-safe.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

namespace placeto {

class BaselineStore {
 public:
  explicit BaselineStore(int window = 10) : window_(window) {}

  // Baseline of each of `steps` steps for `graph` (0 where no episode reached step t yet).
  std::vector<double> baseline(const std::string& graph, int steps) const;
  // Records an episode's returns.
  void add(const std::string& graph, const std::vector<double>& returns);

  int window() const { return window_; }
  // Flat export for checkpoints: per graph, the stored return vectors (oldest first).
  const std::map<std::string, std::deque<std::vector<double>>>& history() const { return history_; }
  void set_history(std::map<std::string, std::deque<std::vector<double>>> h) {
    history_ = std::move(h);
  }

 private:
  int window_;
  std::map<std::string, std::deque<std::vector<double>>> history_;
};

}  // namespace placeto
