#pragma once
// An in-process stand-in for MPI ranks: N "processes" are N threads, each with its own
// ScenarioRun (its own network, partitions and clocks), meeting only through this group,
// as MPI ranks meet only through messages. It lets the tests drive the split-over-
// processes path (engine, monitors, gathering the results) on a machine without MPI.
#include <barrier>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "sim/parallel/process_group.h"

namespace fabricsim::testing {

class LocalHub {
 public:
  explicit LocalHub(int processes)
      : n_(processes), sync_(processes), mail_(static_cast<std::size_t>(processes) * static_cast<std::size_t>(processes)),
        values_(static_cast<std::size_t>(processes)) {}

  std::vector<Bytes> exchange(int rank, const std::vector<Bytes>& out) {
    for (int to = 0; to < n_; ++to) mail_[slot(rank, to)] = out[static_cast<std::size_t>(to)];
    sync_.arrive_and_wait();
    std::vector<Bytes> in(static_cast<std::size_t>(n_));
    for (int from = 0; from < n_; ++from) in[static_cast<std::size_t>(from)] = mail_[slot(from, rank)];
    sync_.arrive_and_wait();  // nobody writes again before everyone has read
    return in;
  }
  void reduce(int rank, std::vector<std::int64_t>& v, bool min) {
    values_[static_cast<std::size_t>(rank)] = v;
    sync_.arrive_and_wait();
    for (int r = 0; r < n_; ++r) {
      if (r == rank) continue;
      const auto& other = values_[static_cast<std::size_t>(r)];
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = min ? std::min(v[i], other[i]) : v[i] + other[i];
    }
    sync_.arrive_and_wait();
  }
  int size() const { return n_; }

 private:
  std::size_t slot(int from, int to) const { return static_cast<std::size_t>(from) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(to); }
  int n_;
  std::barrier<> sync_;
  std::vector<Bytes> mail_;
  std::vector<std::vector<std::int64_t>> values_;
};

class LocalProcessGroup final : public ProcessGroup {
 public:
  LocalProcessGroup(LocalHub& hub, int rank) : hub_(&hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return hub_->size(); }
  std::vector<Bytes> exchange(const std::vector<Bytes>& out) override { return hub_->exchange(rank_, out); }
  void all_min(std::vector<std::int64_t>& v) override { hub_->reduce(rank_, v, true); }
  void all_sum(std::vector<std::int64_t>& v) override { hub_->reduce(rank_, v, false); }
  [[noreturn]] void abort(int exit_code) override { std::_Exit(exit_code); }  // as MPI_Abort: every process ends

 private:
  LocalHub* hub_;
  int rank_;
};

// Runs `body(group)` once per process, each on its own thread; returns when all are done.
inline void run_processes(int processes, const std::function<void(ProcessGroup&)>& body) {
  LocalHub hub(processes);
  std::vector<std::unique_ptr<LocalProcessGroup>> groups;
  for (int r = 0; r < processes; ++r) groups.push_back(std::make_unique<LocalProcessGroup>(hub, r));
  std::vector<std::thread> threads;
  for (int r = 0; r < processes; ++r) threads.emplace_back([&, r] { body(*groups[static_cast<std::size_t>(r)]); });
  for (std::thread& t : threads) t.join();
}

}  // namespace fabricsim::testing
