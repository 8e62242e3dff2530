// The equal-time table of `placeto eval --equal-time` (the quickstart's table): each method's
// step over the best classical placer's, geometric mean over graphs, with every method given
// the same placement time, one column per time; a line saying which method wins each column
// and by how much; the fast classical placers' losses to `single` as one count.
#pragma once

#include <string>
#include <vector>

#include "sim/placers/protocol.h"

namespace placeto {

struct EqualTimeRow {
  std::string name;                 // shown in the first column
  std::vector<std::string> labels;  // the protocol row label in each column; "" = none
};

struct EqualTimeTable {
  std::vector<std::string> columns;  // headers, e.g. "the policy's time", "1000 ms"
  std::vector<EqualTimeRow> rows;    // compared in the winner line
};

// Rendered after the table: the best classical placer's row and the lower bound.
std::string equal_time_table(const std::vector<GraphResult>& results, const EqualTimeTable& t);

}  // namespace placeto
