#pragma once
// Runs a CollectiveProgram over the packet network: rank r is endpoint rank_hosts[r].
// A send step becomes a message when its dependencies are done and completes when its
// own NIC says the data has left (the last packet's first transmission); the matching
// receive completes when the message is delivered at the receiver (after a reduce on the
// receiving GPU, costing bytes / reduce bandwidth, one reduce or copy at a time per GPU).
// Which receive a message feeds is worked out from the program before the run.
// With data checking on, contributions travel with the messages and the result is
// verified when the last step finishes.
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/activity.h"
#include "sim/core/event_queue.h"
#include "sim/network.h"
#include "workloads/collectives/collective.h"
#include "workloads/collectives/collective_data.h"
#include "workloads/collectives/collective_matching.h"

namespace fabricsim {

// The network's connection number (sim/message.h) for a send on NCCL connection
// `connection` (0 on) of a program, where each connection has `queue_pairs` queue pairs and
// this is the connection's `nth` send to another node (0 on): NCCL's IB transport posts a
// connection's successive messages on its queue pairs in turn (src/transport/net_ib.cc,
// NCCL_IB_QPS_PER_CONNECTION). 0 is point-to-point's.
std::uint16_t nccl_network_connection(int connection, int queue_pairs, std::uint32_t nth);

struct CollectiveOptions {
  double reduce_bytes_per_second = 0;  // 0: reductions and copies take no time
  bool check_data = true;
  std::uint8_t traffic_class = 0;
  // Told of each rank's steps and of its part of the collective as a whole (timelines).
  ActivityListener* activity = nullptr;
  // Flow fidelity: each send stands for this many equal ones (Message::shares): a
  // program of one channel running for `flow_shares` identical ones.
  std::uint16_t flow_shares = 1;
  // Order keys for the ranks' handlers: 2 per rank from this one on (0: the network's next
  // ones). A trace replay fixes them per collective before the run, so they do not depend
  // on the order in which a split run's partitions launch collectives.
  std::uint32_t first_order_key = 0;
  // Each rank's node, for the program's step_sync_ps (empty: every rank on one node).
  std::vector<std::uint32_t> rank_node;
};

// What every run of one program shares, worked out once: the program, which receive each
// send feeds, and each step's dependants and initial wait. A training trace runs the same
// few collectives thousands of times; its replay prepares each kind once.
struct PreparedCollective {
  CollectiveProgram program;
  ProgramMatching matching;
  std::vector<std::vector<int>> waiting;                // per rank, per step: what it waits for
  std::vector<std::vector<std::vector<int>>> children;  // per rank, per step: who waits for it

  // Throws std::invalid_argument if check_program finds a problem.
  static std::shared_ptr<const PreparedCollective> prepare(CollectiveProgram program);
};

// The collective as one agent per rank, each running its rank's program at its endpoint:
// an agent hears from its own NIC that its sends have left and that data for its
// receives has arrived (which receive travels with the message as its tag). The
// executor around them builds the agents, checks data and sees the end of the run.
class CollectiveExecutor final {
 public:
  // Throws std::invalid_argument if check_program finds a problem.
  CollectiveExecutor(Network& network, CollectiveProgram program, std::vector<HostId> rank_hosts,
                     const CollectiveOptions& options);
  CollectiveExecutor(Network& network, std::shared_ptr<const PreparedCollective> prepared, std::vector<HostId> rank_hosts,
                     const CollectiveOptions& options);
  CollectiveExecutor(const CollectiveExecutor&) = delete;
  CollectiveExecutor& operator=(const CollectiveExecutor&) = delete;
  ~CollectiveExecutor();

  void start();  // at the simulator's current time
  // Every rank starts at `at` (a time not yet run anywhere), from an event of its own in
  // its endpoint's partition: how a run split over threads starts one (the ranks' events
  // are the same for any split).
  void start_at(Time at);
  // Why `program`'s in-network steps cannot run on these endpoints (a group not on
  // switches that reduce), or nullopt.
  static std::optional<std::string> in_network_problem(const Network& network, const CollectiveProgram& program,
                                                       const std::vector<HostId>& rank_hosts);
  // Called once when the last step finishes (after data checking), from that rank's
  // event. With `deferred`, it is not called: whoever runs the run asks done() between
  // windows (a split run's ranks finish on several threads at once).
  void set_on_done(std::function<void()> on_done, bool deferred = false) {
    on_done_ = std::move(on_done);
    defer_done_ = deferred;
  }

  // Before it starts: told of each rank's steps (timelines).
  void set_activity_listener(ActivityListener* listener) { options_.activity = listener; }

  // Told as each rank finishes its part (`rank` in the collective's numbering), on that
  // rank's partition, before the collective's end is.
  void set_on_rank_done(std::function<void(int rank, Time now)> f) { on_rank_done_ = std::move(f); }

  bool done() const { return ranks_left_.load(std::memory_order_acquire) == 0; }
  // Every rank this process runs is done and every message they sent acknowledged:
  // nothing here will call it again (one process: the collective is done).
  bool idle() const {
    return local_ranks_left_.load(std::memory_order_acquire) == 0 && messages_unfinished_.load(std::memory_order_acquire) == 0;
  }
  // Idle, and none of its handlers is pending: it may be destroyed (a sweep frees the
  // sizes it has finished with).
  bool quiescent() const;
  Time started_at() const { return started_; }
  Time finished_at() const;  // the last rank's last step (-1 until done)
  // Over MPI processes each process sees its own ranks finish: these are pooled between
  // windows, and the pooled end is set here.
  int ranks_with_steps() const { return ranks_with_steps_; }
  int ranks_done() const { return ranks_with_steps_ - ranks_left_.load(std::memory_order_acquire); }
  Time local_finished() const;  // the last of this process's ranks to finish (-1: none)
  void set_finished_at(Time t) { finished_ = t; }
  // Set when data checking found the result wrong (or a contribution reduced twice).
  const std::optional<std::string>& data_error() const { return data_error_; }
  // A split run's end is seen between windows: the data are checked then.
  void check_data_at_end() {
    if (data_ && !data_error_) data_error_ = data_->verify();
  }
  const CollectiveProgram& program() const { return prepared_->program; }

 private:
  struct StepState {
    int waiting = 0;          // unfinished dependencies (+1 for a receive until its data arrives)
    bool started = false;
    bool proxied = false;     // a network send the proxy has taken (program_.proxy_op_ps)
    Time began = 0;           // when it started (timelines)
  };
  class RankAgent;
  // One reduce/copy at a time per GPU, in order.
  struct ComputeEngine final : EventHandler {
    RankAgent* agent = nullptr;
    std::vector<int> queue;  // steps
    std::size_t head = 0;
    void on_event() override;
  };
  // Starts the rank's program, then hands received pieces to their steps once NCCL's
  // per-step latency has passed (step_sync_ps): one pending event per rank.
  struct Starter final : EventHandler {
    RankAgent* agent = nullptr;
    bool begun = false;
    Time next = 0;                 // when it is scheduled, while it is
    // When a receive's data counts as arrived -> the receive; when the proxy posts a send
    // -> -(send + 1).
    std::multimap<Time, int> due;
    void on_event() override;
  };
  class RankAgent final : public MessageObserver {
   public:
    CollectiveExecutor* owner = nullptr;
    int rank = 0;
    HostId host = 0;
    std::vector<StepState> steps;
    ComputeEngine engine;
    Starter starter;
    std::map<MessageId, int> sends;  // my messages in flight -> my send step
    std::vector<std::uint32_t> network_sends;  // per connection: my messages to other nodes on it so far
    std::int64_t steps_left = 0;     // mine
    Time finished = -1;              // my last step's end
    Time proxy_free = 0;             // when my GPU's proxy is done with the work it has
    Simulator* sim = nullptr;        // my endpoint's partition's clock


    void begin();  // starts the steps that wait for nothing
    void arrived(int recv);  // a receive's data is here (after any per-step latency)
    void ready(int step);
    void start_step(int step);
    // Whether send `step` goes to another node and waits for my proxy (then it is due later).
    bool wait_for_proxy(int step);
    void due_at(Time at, int what);
    void finish_step(int step);
    void enqueue_compute(int step);
    void on_message_sent(MessageId id, Time now) override;
    void on_message_delivered(MessageId id, Time now) override;
    void on_message_finished(MessageId id, Time now) override;
    std::uint32_t observer_key() const override { return starter.order(); }
  };
  Time compute_time(const Step& s) const;
  void report_step(const RankAgent& agent, int step) const;  // to options_.activity
  void rank_finished(Time now);  // a rank's last step: the collective is done after the last rank's

  const std::vector<StepRef>& feeds(int rank, int step) const {
    return prepared_->matching.feeds[static_cast<std::size_t>(rank)][static_cast<std::size_t>(step)];
  }

  Network* network_;
  std::shared_ptr<const PreparedCollective> prepared_;
  const CollectiveProgram& program_;  // prepared_->program
  CollectiveOptions options_;
  std::deque<RankAgent> agents_;  // handlers and observers never move
  struct InNetworkGroup {
    std::vector<int> ranks;
    std::uint16_t multicast = 0;  // the network's multicast group over their endpoints
  };
  const InNetworkGroup& in_network_group(int g) const { return in_network_groups_[static_cast<std::size_t>(g + 1)]; }
  std::vector<InNetworkGroup> in_network_groups_;  // by group + 1 (0: every rank)
  std::mutex data_mutex_;        // data checking's state (ranks on several threads)
  std::mutex in_network_mutex_;  // the sums below (their members may run on several threads)
  std::map<StepRef, std::uint32_t> sum_slots_;  // an in-switch sum's receive slot at its owner
  struct AllSum {
    std::uint32_t number = 0;  // the network's name for it
    std::size_t made = 0;      // contributions made so far
  };
  std::map<StepRef, AllSum> all_sums_;  // SHARP sums being contributed to (by the first member's receive)
  std::map<StepRef, std::vector<ContributionSet>> payload_;  // receive -> data in flight (checking only)
  std::optional<DataState> data_;
  std::optional<std::string> data_error_;
  std::atomic<int> ranks_left_{0};
  int ranks_with_steps_ = 0;
  std::atomic<int> local_ranks_left_{0};  // of this process's
  std::atomic<std::int64_t> messages_unfinished_{0};
  Time started_ = -1;
  Time finished_ = -1;
  std::function<void()> on_done_;
  std::function<void(int, Time)> on_rank_done_;
  bool defer_done_ = false;
};

}  // namespace fabricsim
