#include "launch/equal_time_table.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "sim/placers/registry.h"

namespace placeto {
namespace {

struct Cell {
  double gmean = NAN;  // step / best classical's, over the graphs where both fit
  double ms = 0;       // mean placement time
  int graphs = 0, infeasible = 0;
};

Cell cell(const std::vector<GraphResult>& results, const std::string& label) {
  Cell c;
  double log_sum = 0;
  int n = 0;
  for (const GraphResult& g : results)
    for (const ProtocolRow& r : g.rows) {
      if (r.label != label) continue;
      ++c.graphs;
      c.ms += r.place_ms;
      if (!r.eval.feasible) {
        ++c.infeasible;
      } else if (g.reference.best_run().evaluation.feasible && r.ratio_to_best_classical > 0) {
        log_sum += std::log(r.ratio_to_best_classical);
        ++n;
      }
    }
  if (c.graphs) c.ms /= c.graphs;
  if (n) c.gmean = std::exp(log_sum / n);
  return c;
}

std::string format_ms(double ms) {
  char buf[32];
  if (ms >= 1000) {
    std::snprintf(buf, sizeof buf, "%.2f s", ms / 1000);
  } else if (ms >= 10) {
    std::snprintf(buf, sizeof buf, "%.0f ms", ms);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f ms", ms);
  }
  return buf;
}

std::string format_cell(const Cell& c) {
  if (!c.graphs) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f (%s)", c.gmean, format_ms(c.ms).c_str());
  std::string s = buf;
  if (c.infeasible) s += " " + std::to_string(c.infeasible) + " unfit";
  return s;
}

}  // namespace

std::string equal_time_table(const std::vector<GraphResult>& results, const EqualTimeTable& t) {
  const size_t name_width = 48, col_width = 24;
  char buf[512];
  auto line = [&](const std::string& name, const std::vector<std::string>& cells) {
    std::string s = "  " + name;
    s.resize(std::max(s.size() + 1, name_width), ' ');
    for (const std::string& c : cells) {
      std::string cc = c;
      cc.resize(std::max(cc.size() + 1, col_width), ' ');
      s += cc;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line("placement time given:", t.columns);
  std::vector<std::vector<Cell>> cells(t.rows.size());
  for (size_t i = 0; i < t.rows.size(); ++i) {
    std::vector<std::string> shown;
    for (const std::string& label : t.rows[i].labels) {
      cells[i].push_back(label.empty() ? Cell{} : cell(results, label));
      shown.push_back(label.empty() ? "-" : format_cell(cells[i].back()));
    }
    out += line(t.rows[i].name, shown);
  }
  // The best classical placer (which one, how often) and the lower bound: the same in every
  // column.
  std::map<std::string, int> wins;
  double best_ms = 0, log_lb = 0;
  int n_lb = 0;
  for (const GraphResult& g : results) {
    ++wins[g.reference.best_run().method];
    best_ms += g.reference.place_ms;
    const double best = g.reference.best_run().evaluation.runtime_us;
    if (best > 0 && g.reference.lower_bound_us > 0) {
      log_lb += std::log(g.reference.lower_bound_us / best);
      ++n_lb;
    }
  }
  std::string which;
  for (const auto& [m, k] : wins)
    which += (which.empty() ? "" : ", ") + m + " " + std::to_string(k);
  std::snprintf(buf, sizeof buf, "1.000 (%s for all)",
                format_ms(results.empty() ? 0 : best_ms / results.size()).c_str());
  out += line("best classical (" + which + ")", std::vector<std::string>(t.columns.size(), buf));
  std::snprintf(buf, sizeof buf, "%.3f", n_lb ? std::exp(log_lb / n_lb) : NAN);
  out += line("lower bound (no transfers, memory ignored)",
              std::vector<std::string>(t.columns.size(), buf));
  out +=
      "  (step over the best classical placer's, geometric mean over the graphs; lower is "
      "faster; in brackets the mean placement time)\n";

  // Who wins each column, and by how much over the next best.
  for (size_t c = 0; c < t.columns.size(); ++c) {
    int best = -1, second = -1;
    for (size_t i = 0; i < t.rows.size(); ++i) {
      if (c >= cells[i].size() || !(cells[i][c].gmean > 0)) continue;
      const int ii = static_cast<int>(i);
      if (best < 0 || cells[i][c].gmean < cells[best][c].gmean) {
        second = best;
        best = ii;
      } else if (second < 0 || cells[i][c].gmean < cells[second][c].gmean) {
        second = ii;
      }
    }
    if (best < 0) continue;
    const double g = cells[best][c].gmean;
    std::string s = "Given " + t.columns[c] + ": " + t.rows[best].name + " wins";
    if (second >= 0) {
      std::snprintf(buf, sizeof buf, ", with steps %.1f%% shorter than %s's, the next best",
                    100 * (1 - g / cells[second][c].gmean), t.rows[second].name.c_str());
      s += buf;
    }
    std::snprintf(buf, sizeof buf, "; %.1f%% %s than the best classical placer's.\n",
                  100 * std::fabs(1 - g), g <= 1 ? "shorter" : "longer");
    out += s + buf;
  }

  // The fast classical placers' losses to one device, as one count.
  std::set<std::string> losers;
  int losses = 0, runs = 0;
  for (const GraphResult& g : results) {
    const double single = g.reference.single_run().evaluation.runtime_us;
    for (const PlacerRun& r : g.reference.runs) {
      ++runs;
      if (!r.evaluation.feasible || r.evaluation.runtime_us > single * (1 + 1e-12)) {
        ++losses;
        losers.insert(r.method);
      }
    }
  }
  const size_t placers = fast_placer_names().size();
  std::snprintf(buf, sizeof buf,
                "%zu of the %zu fast classical placers lose to one device (`single`) on some "
                "graph: %d of their %d placements (all in the report).\n",
                losers.size(), placers, losses, runs);
  out += buf;
  return out;
}

}  // namespace placeto
