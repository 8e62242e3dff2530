#include "common/comm/inproc/inproc_communicator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <thread>

#include "common/comm/reduce_order.h"
#include "common/error.h"

namespace placeto {
namespace {

class InprocCommunicator : public Communicator {
 public:
  InprocCommunicator(InprocGroup& group, int rank) : group_(group), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return group_.size(); }
  std::string backend_name() const override { return "inproc"; }

  void all_reduce(float* data, size_t n, ReduceOp op) override { reduce(data, n, op); }
  void all_reduce(double* data, size_t n, ReduceOp op) override { reduce(data, n, op); }

  void broadcast(void* data, size_t bytes, int root) override {
    PLACETO_CHECK(root >= 0 && root < size());
    group_.exchange(rank_, data, bytes, [&](const std::vector<const void*>& all) {
      if (rank_ != root && bytes > 0) std::memcpy(data, all[root], bytes);
    });
  }

  void barrier() override {
    group_.exchange(rank_, nullptr, 0, [](const std::vector<const void*>&) {});
  }

  std::vector<double> gather_doubles(const double* local, size_t n, int root) override {
    PLACETO_CHECK(root >= 0 && root < size());
    std::vector<double> out(rank_ == root ? n * static_cast<size_t>(size()) : 0);
    group_.exchange(rank_, local, n, [&](const std::vector<const void*>& all) {
      if (rank_ != root) return;
      for (size_t r = 0; r < all.size(); ++r) {
        std::copy_n(static_cast<const double*>(all[r]), n, out.data() + r * n);
      }
    });
    return out;
  }

  void all_gather_bytes(const void* local, size_t bytes, void* out) override {
    group_.exchange(rank_, local, bytes, [&](const std::vector<const void*>& all) {
      for (size_t r = 0; r < all.size(); ++r) {
        if (bytes > 0) std::memcpy(static_cast<char*>(out) + r * bytes, all[r], bytes);
      }
    });
  }

  int64_t all_reduce_max(int64_t value) override {
    int64_t result = value;
    group_.exchange(rank_, &value, 1, [&](const std::vector<const void*>& all) {
      for (const void* p : all) result = std::max(result, *static_cast<const int64_t*>(p));
    });
    return result;
  }

  [[noreturn]] void abort(int code, const std::string& why) override {
    const std::string message =
        "rank " + std::to_string(rank_) + " aborted (code " + std::to_string(code) + "): " + why;
    group_.mark_aborted(message);
    throw SystemError(message);
  }

 private:
  template <typename T>
  void reduce(T* data, size_t n, ReduceOp op) {
    // Every rank computes the full sum from all postings into its own scratch, and copies it
    // over its buffer only after the second wait, when nobody reads the postings any more.
    scratch_.resize(n * sizeof(T));
    T* sum = reinterpret_cast<T*>(scratch_.data());
    group_.exchange(rank_, data, n, [&](const std::vector<const void*>& all) {
      std::vector<const T*> inputs(all.size());
      for (size_t r = 0; r < all.size(); ++r) inputs[r] = static_cast<const T*>(all[r]);
      comm_internal::sum_in_rank_order(inputs.data(), size(), n, sum);
    });
    std::copy_n(sum, n, data);
    if (op == ReduceOp::kMean) comm_internal::divide_by_ranks(data, n, size());
  }

  InprocGroup& group_;
  int rank_;
  std::vector<unsigned char> scratch_;
};

// One rank that owns its group (the group is only referenced by the base class).
class SingleRankCommunicator : public InprocCommunicator {
 public:
  explicit SingleRankCommunicator(std::unique_ptr<InprocGroup> group)
      : InprocCommunicator(*group, 0), group_(std::move(group)) {}

 private:
  std::unique_ptr<InprocGroup> group_;
};

}  // namespace

std::unique_ptr<Communicator> make_single_rank_communicator() {
  return std::make_unique<SingleRankCommunicator>(std::make_unique<InprocGroup>(1, CommOptions{}));
}

InprocGroup::InprocGroup(int ranks, const CommOptions& options)
    : options_(options), posted_(static_cast<size_t>(ranks)), counts_(static_cast<size_t>(ranks)) {
  PLACETO_CHECK_GE(ranks, 1);
}

std::unique_ptr<Communicator> InprocGroup::communicator(int rank) {
  PLACETO_CHECK(rank >= 0 && rank < size());
  return std::make_unique<InprocCommunicator>(*this, rank);
}

void InprocGroup::mark_aborted(const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!aborted_) {
    aborted_ = true;
    abort_reason_ = why;
  }
  changed_.notify_all();
}

void InprocGroup::wait_for_all(std::unique_lock<std::mutex>& lock, int rank) {
  if (aborted_) throw SystemError("in-process group aborted: " + abort_reason_);
  const uint64_t my_generation = generation_;
  if (++arrived_ == size()) {
    arrived_ = 0;
    ++generation_;
    changed_.notify_all();
    return;
  }
  auto released = [&] { return generation_ != my_generation || aborted_; };
  if (options_.timeout_s > 0) {
    const auto limit = std::chrono::duration<double>(options_.timeout_s);
    if (!changed_.wait_for(lock, limit, released)) {
      aborted_ = true;
      abort_reason_ = "rank " + std::to_string(rank) + " waited more than " +
                      std::to_string(options_.timeout_s) + " s for its peers (comm.timeout_s)";
      changed_.notify_all();
    }
  } else {
    changed_.wait(lock, released);
  }
  if (generation_ == my_generation) {
    throw SystemError("in-process group aborted: " + abort_reason_);
  }
}

void InprocGroup::exchange(int rank, const void* data, size_t count,
                           const std::function<void(const std::vector<const void*>&)>& use) {
  std::unique_lock<std::mutex> lock(mutex_);
  posted_[static_cast<size_t>(rank)] = data;
  counts_[static_cast<size_t>(rank)] = count;
  wait_for_all(lock, rank);
  // All postings of this step are in place and stay until the second wait.
  for (size_t r = 0; r < counts_.size(); ++r) PLACETO_CHECK_EQ(counts_[r], count);
  const std::vector<const void*> all = posted_;
  lock.unlock();
  use(all);
  lock.lock();
  wait_for_all(lock, rank);
}

void run_inproc(int ranks, const std::function<void(Communicator&)>& body,
                const CommOptions& options) {
  InprocGroup group(ranks, options);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        std::unique_ptr<Communicator> comm = group.communicator(r);
        body(*comm);
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
        group.mark_aborted("rank " + std::to_string(r) + " threw an exception");
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // Prefer the original failure over the "group aborted" echoes it caused on other ranks.
  std::exception_ptr first;
  for (const std::exception_ptr& e : errors) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const SystemError& echo) {
      if (std::string(echo.what()).rfind("in-process group aborted", 0) == 0) {
        if (!first) first = e;
        continue;
      }
      std::rethrow_exception(e);
    } catch (...) {
      std::rethrow_exception(e);
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace placeto
