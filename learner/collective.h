// What the training loop needs from the other ranks.  The single-process trainer uses
// LocalCollective; the MPI trainer adapts common/comm's Communicator (launch/placeto_actor.cc).
// Every call is collective: all ranks make it in the same order.
#pragma once

#include <string>
#include <vector>

namespace placeto {

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Element-wise mean over ranks, bit-identical on every rank.
  virtual void all_reduce_mean(float* data, size_t n) = 0;
  // Every rank's vector (all of length n), concatenated in rank order, on every rank.
  virtual std::vector<double> all_gather(const std::vector<double>& local) = 0;
  // Seconds spent in all_reduce_mean so far (for metrics).
  virtual double reduce_seconds() const = 0;
};

class LocalCollective : public Collective {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_reduce_mean(float*, size_t) override {}
  std::vector<double> all_gather(const std::vector<double>& local) override { return local; }
  double reduce_seconds() const override { return 0; }
};

}  // namespace placeto
