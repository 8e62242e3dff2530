// The list schedulers' picture of a partial schedule (HEFT, m-ETF, m-SCT), built on the
// cost view that the simulator uses (Cluster::op_time_us, op_gap_us, transfer_time_us,
// transfer_gap_us), so a scheduler's estimates mean the same as simulated runtimes:
//  * a device runs one op at a time and stays busy for the op's time plus the per-op gap;
//  * each device has one outgoing bus; a transfer keeps it busy for bytes / bandwidth plus
//    the per-transfer gap, and one transfer of an output serves every remote consumer of it
//    (as in the simulator);
//  * transfers are booked on the sender's bus in the earliest gap after the producer ends,
//    which stands in for the simulator's queue ordered by ready time.
// Ops run either in the earliest gap of their device that fits (insertion, HEFT) or after
// the device's last op (append, ETF-style).
//
// Threading: one model per scheduler call; not thread-safe.
#pragma once

#include <utility>
#include <vector>

#include "sim/cluster.h"
#include "sim/graph.h"

namespace placeto {

// Busy intervals [start, end) of one resource, sorted and disjoint.
class Timeline {
 public:
  // Earliest start >= t of a free interval of length `len`.
  double find_slot(double t, double len) const;
  // End of the last busy interval (0 when idle so far).
  double end() const { return busy_.empty() ? 0 : busy_.back().second; }
  // REQUIRES: [start, start + len) is free (as returned by find_slot or after end()).
  void book(double start, double len);

 private:
  std::vector<std::pair<double, double>> busy_;
};

class ScheduleModel {
 public:
  // Keeps references: graph and cluster must outlive the model.
  ScheduleModel(const Graph& g, const Cluster& c, bool insertion);

  // Earliest start of v on d given where its parents run.  REQUIRES: all parents assigned.
  double earliest_start_us(NodeId v, int d);
  // Schedules v on d at its earliest start, booking the transfers it needs.
  void assign(NodeId v, int d);

  bool assigned(NodeId v) const { return placement_.device[v] >= 0; }
  int device(NodeId v) const { return placement_.device[v]; }
  double start_us(NodeId v) const { return start_[v]; }
  double finish_us(NodeId v) const { return finish_[v]; }  // without the gap after it
  // The op assigned to d most recently, or -1.
  NodeId last_op(int d) const { return last_op_[d]; }
  // REQUIRES: every op assigned.
  const Placement& placement() const { return placement_; }

 private:
  // Latest arrival of v's inputs on d; books the transfers when `commit`.
  double data_ready(NodeId v, int d, bool commit);

  const Graph& g_;
  const Cluster& c_;
  bool insertion_;
  Placement placement_;
  std::vector<double> start_, finish_;
  std::vector<Timeline> compute_, bus_;
  std::vector<NodeId> last_op_;
  std::vector<int32_t> group_of_edge_;  // edges of one (src, out) share a transfer
  std::vector<double> arrival_;         // per group; < 0 until booked
  struct Tentative {
    int bus;
    double start, end;
  };
  std::vector<Tentative> scratch_;
};

// HEFT's upward rank: mean compute time plus gap over devices, plus the largest sum of a
// child's rank and the mean transfer time plus gap over pairs of distinct devices (0 with one
// device).  Parents always rank at least as high as their children.
std::vector<double> upward_rank(const Graph& g, const Cluster& c);

// Mean transfer time of edge e's tensor over ordered pairs of distinct devices (0 with one
// device), without the gap.
double mean_transfer_us(const Graph& g, const Cluster& c, EdgeId e);

}  // namespace placeto
