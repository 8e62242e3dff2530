// The "linalg" evaluation family (issue #35 item 5): task graphs of tiled dense linear algebra
// and stencils, the communication-heavy dataflow graphs of HPC runtimes, unlike the ENAS-style
// training graphs of the other families (no gradient or update ops, no parameters, one tile
// per edge).  Each graph draws its kind, its tile size and its tiles per side:
//  - cholesky: right-looking tiled Cholesky of a T x T tile matrix (POTRF, TRSM, SYRK, GEMM);
//  - lu: tiled LU without pivoting (GETRF, row and column TRSM, GEMM);
//  - stencil: S sweeps of a 5-point Jacobi stencil over T x T tiles, each tile reading its
//    own and its four neighbours' values from the sweep before.
// Costs are the profile's roofline of each kernel's FLOPs and tile traffic; a tile of b x b
// floats is 4 b^2 bytes.  Tiles of 64 to 2048 (log-uniform) span compute-to-transfer ratios
// from far below 1 (a 64-tile GEMM takes microseconds, its tile's transfer tens) to well above.
// The family is for evaluation only: the training configs refuse it (evaluation_only_family).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost_model.h"
#include "sim/families/generators.h"

namespace placeto {
namespace {

class TaskGraph {
 public:
  TaskGraph(const FamilySpec& spec, double tile) : profile_(device_profile(spec.profile)) {
    tile_bytes_ = static_cast<int64_t>(4.0 * tile * tile);
  }
  // A task of `flops` that reads `tiles_read` tiles and writes one, after `deps`.
  NodeId add(const std::string& name, const std::string& op, double flops, int tiles_read,
             const std::vector<NodeId>& deps) {
    const double bytes = static_cast<double>(tile_bytes_) * (tiles_read + 1);
    const NodeId v = b_.add_node(name, op, roofline_cost_us(flops, bytes, profile_), {tile_bytes_});
    std::set<NodeId> seen;
    for (NodeId u : deps)
      if (u >= 0 && seen.insert(u).second) b_.add_edge(u, v);
    return v;
  }
  Graph build(const std::string& name) {
    b_.set_name(name);
    return b_.build();
  }

 private:
  const DeviceProfile& profile_;
  int64_t tile_bytes_ = 0;
  GraphBuilder b_{"linalg"};
};

std::string id(const char* k, int a, int b = -1, int c = -1) {
  std::string s = std::string(k) + "_" + std::to_string(a);
  if (b >= 0) s += "_" + std::to_string(b);
  if (c >= 0) s += "_" + std::to_string(c);
  return s;
}

Graph cholesky(TaskGraph& t, int n, double b, const std::string& name) {
  std::map<std::pair<int, int>, NodeId> last;  // the latest writer of tile (i, j), i >= j
  auto at = [&](int i, int j) {
    auto it = last.find({i, j});
    return it == last.end() ? NodeId{-1} : it->second;
  };
  const double b3 = b * b * b;
  for (int k = 0; k < n; ++k) {
    const NodeId potrf = t.add(id("potrf", k), "potrf", b3 / 3, 0, {at(k, k)});
    last[{k, k}] = potrf;
    for (int i = k + 1; i < n; ++i)
      last[{i, k}] = t.add(id("trsm", i, k), "trsm", b3, 1, {potrf, at(i, k)});
    for (int i = k + 1; i < n; ++i) {
      last[{i, i}] = t.add(id("syrk", i, k), "syrk", b3, 1, {at(i, k), at(i, i)});
      for (int j = k + 1; j < i; ++j)
        last[{i, j}] =
            t.add(id("gemm", i, j, k), "gemm", 2 * b3, 2, {at(i, k), at(j, k), at(i, j)});
    }
  }
  return t.build(name);
}

Graph lu(TaskGraph& t, int n, double b, const std::string& name) {
  std::map<std::pair<int, int>, NodeId> last;
  auto at = [&](int i, int j) {
    auto it = last.find({i, j});
    return it == last.end() ? NodeId{-1} : it->second;
  };
  const double b3 = b * b * b;
  for (int k = 0; k < n; ++k) {
    const NodeId getrf = t.add(id("getrf", k), "getrf", 2 * b3 / 3, 0, {at(k, k)});
    last[{k, k}] = getrf;
    for (int j = k + 1; j < n; ++j)
      last[{k, j}] = t.add(id("trsm_row", k, j), "trsm", b3, 1, {getrf, at(k, j)});
    for (int i = k + 1; i < n; ++i)
      last[{i, k}] = t.add(id("trsm_col", i, k), "trsm", b3, 1, {getrf, at(i, k)});
    for (int i = k + 1; i < n; ++i)
      for (int j = k + 1; j < n; ++j)
        last[{i, j}] =
            t.add(id("gemm", i, j, k), "gemm", 2 * b3, 2, {at(i, k), at(k, j), at(i, j)});
  }
  return t.build(name);
}

Graph stencil(TaskGraph& t, int n, int sweeps, double b, const std::string& name) {
  std::vector<NodeId> prev(static_cast<size_t>(n) * n, -1), cur(prev.size());
  for (int s = 0; s < sweeps; ++s) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        std::vector<NodeId> deps;
        const int di[] = {0, -1, 1, 0, 0}, dj[] = {0, 0, 0, -1, 1};
        for (int k = 0; k < 5; ++k) {
          const int a = i + di[k], c = j + dj[k];
          if (a >= 0 && a < n && c >= 0 && c < n) deps.push_back(prev[a * n + c]);
        }
        cur[i * n + j] = t.add(id("sweep", s, i, j), "stencil", 10 * b * b, 1, deps);
      }
    std::swap(prev, cur);
  }
  return t.build(name);
}

}  // namespace

Graph build_linalg_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name) {
  const int kind = static_cast<int>(rng.below(3));
  // Tile size: the spec's width, or log-uniform in [64, 2048] rounded to a multiple of 16.
  double b = spec.width;
  if (b <= 0) b = 16 * std::round(std::exp(std::log(64.0) + rng.uniform01() * std::log(32.0)) / 16);
  auto tiles = [&](int lo, int hi) {
    return spec.steps > 0 ? spec.steps : lo + static_cast<int>(rng.below(hi - lo + 1));
  };
  TaskGraph t(spec, b);
  if (kind == 0) return cholesky(t, tiles(5, 10), b, name);  // 35-220 tasks
  if (kind == 1) return lu(t, tiles(5, 8), b, name);         // 55-204 tasks
  const int n = tiles(4, 6);
  const int sweeps = 4 + static_cast<int>(rng.below(5));  // 64-288 tasks
  return stencil(t, n, sweeps, b, name);
}

}  // namespace placeto
