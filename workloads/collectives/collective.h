#pragma once
// A collective as per-rank programs: each rank runs a dependency graph of steps (send a
// run of chunks to a peer, receive into chunks with or without reducing, copy or reduce
// locally). Built-in algorithms and custom ones (MSCCL XML, our YAML) compile to this,
// and one executor runs them all over the packet network.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricsim {

enum class CollectiveOp : std::uint8_t {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,
};

const char* op_name(CollectiveOp op);
// The inverse of op_name; nullopt for any other name.
std::optional<CollectiveOp> op_from_name(std::string_view name);
// nccl-tests' bus bandwidth factor: busbw = algbw * factor(n).
double busbw_factor(CollectiveOp op, int ranks);

enum class StepKind : std::uint8_t {
  kSend,        // send slots [src, src+count) to `peer`
  kRecv,        // receive from `peer` into [dst, dst+count), replacing
  kRecvReduce,  // receive from `peer` and reduce into [dst, dst+count)
  kCopy,        // local: [dst..] = [src..]
  kReduce,      // local: [dst..] += [src..]
  kNop,         // a join point for dependencies
  // In-network (a switch reduces or copies: NVLink SHARP), within `group` (the program's
  // groups; -1: every rank), whose ranks all reach one reducing switch.
  kSwitchReduce,  // add slots [src, src+count) to the sum a switch delivers to `peer` (which
                  // may be this rank); matched in order per (owner, channel), every member
                  // of the group contributing to each of the owner's kRecvSum
  kRecvSum,       // receive the switch's sum of the group's contributions toward this rank
                  // on `channel` into [dst, dst+count), replacing
  kMulticast,     // send slots [src, src+count) to every member of the group, this rank
                  // included, as one transfer the switch copies; each takes it with a kRecv
};

// kSwitchReduce's and kRecvSum's `peer` for SHARP's sum, which the switch returns to every
// member of the group (each member takes it with a kRecvSum of this peer).
inline constexpr int kAllMembers = -2;

// A step that puts data on the network.
inline bool sends_data(StepKind k) {
  return k == StepKind::kSend || k == StepKind::kSwitchReduce || k == StepKind::kMulticast;
}
// A step that waits for data from the network.
inline bool receives_data(StepKind k) {
  return k == StepKind::kRecv || k == StepKind::kRecvReduce || k == StepKind::kRecvSum;
}


struct Step {
  StepKind kind = StepKind::kNop;
  int peer = -1;
  int channel = 0;     // sends and receives match in order per (sender, receiver, channel)
  int src = 0;         // first slot read (send, copy, reduce)
  int dst = 0;         // first slot written (recv, copy, reduce)
  int count = 1;       // slots
  int group = -1;      // in-network steps: the group (index into the program's groups), -1: all ranks
  std::vector<int> deps;  // steps of the same rank that must finish first
};

struct RankProgram {
  std::vector<Step> steps;
};

// Every rank has `slots` chunk slots of `slot_bytes` each. The operation says what the
// slots hold at the start and what they must hold at the end (CollectiveSpec).
struct CollectiveProgram {
  std::string name;
  CollectiveOp op = CollectiveOp::kAllReduce;
  int ranks = 0;
  int root = 0;               // broadcast, reduce; sendrecv: the sender (the receiver is root+1)
  int slots = 0;              // per rank
  std::int64_t slot_bytes = 0;
  // Slots that hold the input and, where different, the output; each `chunks` long.
  int input_offset = 0;
  int output_offset = 0;
  int chunks = 0;             // slots of the operation's buffer (per rank)
  // Out-of-place layouts that hold one rank's share only: an all-gather input of
  // chunks / ranks slots (this rank's segment), a reduce-scatter output likewise.
  bool input_is_own_segment = false;
  bool output_is_own_segment = false;
  // A fixed cost before any rank starts (e.g. NVLS's set-up, fitted from measurements),
  // in picoseconds.
  std::int64_t start_latency_ps = 0;
  // The part of start_latency_ps that is a pipeline's fill (NVLS's kernel), which comes
  // after whichever fixed start-up applies (apply_nccl_costs), not instead of it.
  std::int64_t start_fill_ps = 0;
  // Wire bytes per payload byte (an NCCL protocol's flags: LL 2, LL128 128/120).
  double wire_factor = 1.0;
  // NCCL's per-step latency beyond what the links charge (its flag, the proxy, the RDMA
  // write's completion), in picoseconds: a received piece reaches its receiving step this
  // much after its data, [0] from a GPU of the same node, [1] from another node
  // (CollectiveOptions::rank_node says which). It delays, it does not occupy: later pieces
  // overlap it, as NCCL's buffer slots do.
  std::int64_t step_sync_ps[2] = {0, 0};
  // The most one send puts on the wire per second, in payload bytes (0: no limit): an
  // NCCL channel is one thread block, whose copies cannot fill a GPU's NVLinks alone.
  double channel_bytes_per_second = 0;
  // NCCL's proxy thread, one per GPU, launches every network send of the GPU's channels in
  // turn: each takes it this long (picoseconds; 0: no proxy). A send waits for the proxy to
  // be done with the ones before it; alone it does not wait (step_sync_ps holds its launch).
  std::int64_t proxy_op_ps = 0;
  // Consecutive step channels that form one NCCL channel (a ring's pieces and phases), whose
  // sends share that channel's connection, and so an RDMA NIC's queue pair; 0: the whole
  // program is one connection.
  int streams_per_connection = 0;
  // Where a program's streams take its NCCL channels in turn (a tree's pieces go tree by tree
  // and channel by channel): how many connections those groups of streams cycle through
  // (0: none, each group its own).
  int connections = 0;
  // The queue pairs each connection's network sends take in turn (NCCL_IB_QPS_PER_CONNECTION:
  // NCCL's IB transport posts a connection's successive messages on its queue pairs round
  // robin, src/transport/net_ib.cc).
  int queue_pairs_per_connection = 1;
  // Groups of ranks for in-network steps (e.g. each node's GPUs on their NVSwitch).
  std::vector<std::vector<int>> groups;
  std::vector<RankProgram> programs;

  std::int64_t steps() const;
  // The ranks of group `g` (-1: every rank, in order).
  std::vector<int> group_members(int g) const;
};

// Whether it has steps of the in-network kinds (which need a switch that reduces and copies).
bool uses_in_network(const CollectiveProgram& program);
// The groups its in-network steps name, by group + 1 (index 0: every rank).
std::vector<bool> in_network_groups_named(const CollectiveProgram& program);

}  // namespace fabricsim
