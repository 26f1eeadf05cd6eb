#include "sim/endpoint/rdma_engine.h"

#include <algorithm>

#include "sim/core/simulator.h"
#include "sim/endpoint/nic.h"

namespace fabricsim {

RdmaEngine::RdmaEngine(Nic& nic, const NicConfig& config)
    : nic_(nic),
      fetch_window_packets_(std::max<std::uint32_t>(1, config.fetch_window_bytes / std::max<std::uint32_t>(1, config.mtu))),
      fetch_batch_packets_(std::max<std::uint32_t>(1, fetch_window_packets_ / 4)) {}

// ---- The GPU's side ----

void RdmaEngine::post(MessageId id, const Message& d, PortIndex port) {
  const HostId gpu = nic_.host_;
  nic_.ports_[port]->enqueue(nic_.factory().work_request(id, d, gpu, nic_.group_of(gpu), nic_.group_of(d.dst)));
  // Posted is sent, for the GPU's program: as NCCL's kernel leaves its data in its FIFO
  // for the proxy's RDMA write and goes on (its owner is told from an event of its own).
  nic_.note_sent(id, UINT32_MAX);
}

void RdmaEngine::on_read_request(Packet* p, PortIndex in_port) {
  // The GPU's memory answers with the payload, packet by packet, as PCIe credits allow,
  // in the order the NIC asked: a read that continues one still being answered extends
  // it, and one that starts elsewhere (the NIC went back) replaces it.
  for (const Nic::Sending& e : nic_.sending_) {
    SendState& r = nic_.sends_[e.slot];
    if (r.kind != SendKind::kReadResponse || r.home_port != in_port || r.recv_slot != p->message || r.sequence != p->sequence) continue;
    if (r.first_seq + r.packets == p->seq) {
      r.packets += std::max<std::uint32_t>(1, p->payload);
      r.bytes += p->sent_at;
    } else {
      r.first_seq = p->seq;
      r.next_seq = 0;
      r.packets = std::max<std::uint32_t>(1, p->payload);
      r.bytes = p->sent_at;
    }
    nic_.sim_->packets().release(p);
    return;
  }
  const std::uint32_t slot = nic_.sends_.allocate();
  SendState& m = nic_.sends_[slot];
  m.src = nic_.host_;
  m.dst = p->src;
  m.via = p->src;
  m.sequence = p->sequence;
  m.recv_slot = p->message;  // the NIC's send slot, named in every response
  m.packets = std::max<std::uint32_t>(1, p->payload);
  m.bytes = p->sent_at;
  m.traffic_class = p->traffic_class;
  m.kind = SendKind::kReadResponse;
  m.home_port = in_port;
  m.first_seq = p->seq;
  m.active = true;
  nic_.sim_->packets().release(p);
  nic_.enter_rotation(slot);
}

Packet* RdmaEngine::pull_read_response(std::size_t pick) {
  const std::uint32_t slot = nic_.sending_[pick].slot;
  SendState& m = nic_.sends_[slot];
  Packet* p = nic_.factory().read_response(m, nic_.host_, nic_.sim_->now());
  if (++m.next_seq == m.packets) {
    nic_.sending_.erase(nic_.sending_.begin() + static_cast<std::ptrdiff_t>(pick));
    nic_.next_ = pick;
    nic_.sends_.release(slot);
  } else {
    nic_.next_ = pick + 1;
  }
  return p;
}

void RdmaEngine::on_completion(Packet* p) {
  const MessageId id = p->message;
  const auto kind = static_cast<CompletionKind>(p->seq);
  nic_.sim_->packets().release(p);
  MessageObserver* observer = nic_.observer_;
  if (observer == nullptr) return;
  const Time now = nic_.sim_->now();
  switch (kind) {
    case CompletionKind::kFinished:
      ++nic_.counters_.messages_finished;  // the message's owner counts it, as for its own sends
      observer->on_message_finished(id, now);
      break;
    case CompletionKind::kDelivered: observer->on_message_delivered(id, now); break;
  }
}

// ---- The NIC's side ----

void RdmaEngine::on_work_request(Packet* p, PortIndex in_port) {
  const std::uint32_t slot = nic_.sends_.allocate();
  SendState& m = nic_.sends_[slot];
  m.id = p->message;
  m.src = p->src;
  m.dst = p->dst;
  m.via = p->dst;
  m.sequence = p->sequence;
  m.recv_slot = p->recv_slot;
  m.packets = p->seq;
  m.bytes = p->sent_at;
  m.traffic_class = p->traffic_class;
  m.kind = SendKind::kForGpu;
  m.home_port = in_port;
  m.queue_pair = queue_pair_of(m.src, m.dst, p->group);
  m.active = true;
  m.last_progress = nic_.sim_->now();
  nic_.sim_->packets().release(p);
  ++nic_.counters_.work_requests;
  nic_.start_reliable(slot, nic_.ports_toward(m.dst));
  fetch(slot);
  nic_.enter_rotation(slot);  // its ports find nothing to send until the first read is in
}

void RdmaEngine::fetch(std::uint32_t slot) {
  SendState& m = nic_.sends_[slot];
  m.fetch_next = std::max(m.fetch_next, m.fetched);
  const std::uint32_t limit = fetch_limit(slot, m.next_seq);
  if (m.fetch_next >= limit) return;
  // One read per batch of the window (a whole batch, or what is left of the message).
  if (limit - m.fetch_next < fetch_batch_packets_ && limit < m.packets) return;
  Packet* r = nic_.factory().read_request(m, slot, limit);
  m.fetch_next = limit;
  ++nic_.counters_.read_requests;
  nic_.ports_[m.home_port]->enqueue(r);
}

std::uint32_t RdmaEngine::queue_pair_of(HostId src, HostId dst, std::uint16_t connection) {
  // The GPU behind this NIC, its peer and the connection (host numbers below 2^24).
  const std::uint64_t key = (std::uint64_t{src & 0xffffffu} << 40) | (std::uint64_t{dst & 0xffffffu} << 16) | connection;
  const auto [it, made] = queue_pair_index_.try_emplace(key, static_cast<std::uint32_t>(queue_pairs_.size()));
  if (made) queue_pairs_.emplace_back();
  return it->second;
}

void RdmaEngine::queue_pair_enter(std::uint32_t slot) {
  // Posted later is the larger sequence (the GPU numbers its messages in order); one that
  // went back and enters again goes before those posted after it.
  auto& sends = nic_.sends_;
  std::vector<std::uint32_t>& q = queue_pairs_[sends[slot].queue_pair].in_rotation;
  const std::uint32_t sequence = sends[slot].sequence;
  auto at = q.end();
  while (at != q.begin() && sends[*(at - 1)].sequence > sequence) --at;
  const bool first = at == q.begin();
  if (first && !q.empty()) sends[q.front()].queue_pair_head = false;
  q.insert(at, slot);
  sends[slot].queue_pair_head = first;
}

void RdmaEngine::queue_pair_leave(std::uint32_t slot) {
  auto& sends = nic_.sends_;
  std::vector<std::uint32_t>& q = queue_pairs_[sends[slot].queue_pair].in_rotation;
  q.erase(std::find(q.begin(), q.end(), slot));  // mostly the first
  sends[slot].queue_pair_head = false;
  if (!q.empty()) sends[q.front()].queue_pair_head = true;
}

std::uint32_t RdmaEngine::fetch_limit(std::uint32_t slot, std::uint32_t next_seq) const {
  // The read-ahead window belongs to the queue pair: a work request queued behind others
  // reads once they have asked for all of theirs, into the room their unsent packets leave
  // (else the GPU would share PCIe between the head's reads and reads not yet needed).
  const auto& sends = nic_.sends_;
  const SendState& m = sends[slot];
  std::uint32_t window = fetch_window_packets_;
  for (const std::uint32_t earlier : queue_pairs_[m.queue_pair].in_rotation) {
    const SendState& o = sends[earlier];
    if (o.sequence >= m.sequence) break;  // in sequence order: the rest came later
    const std::uint32_t asked = std::max(o.fetch_next, o.fetched);
    if (asked < o.packets) return next_seq;
    const std::uint32_t held = asked - o.next_seq;
    window = held >= window ? 0 : window - held;
  }
  return std::min(m.packets, next_seq + window);
}

void RdmaEngine::fetch_later(std::uint32_t slot) {
  // Called as packet next_seq leaves: once it has, is there a whole read's room?
  SendState& m = nic_.sends_[slot];
  if (std::max(m.fetch_next, m.fetched) >= m.packets) {
    // All asked for: the queue pair's next work request may read into the room this
    // packet leaves (checked by fetch() once it has left).
    const std::vector<std::uint32_t>& q = queue_pairs_[m.queue_pair].in_rotation;
    const auto at = std::find(q.begin(), q.end(), slot);
    if (at != q.end() && at + 1 != q.end()) due_for_fetch(*(at + 1));
    return;
  }
  if (m.fetch_due) return;
  const std::uint32_t limit = fetch_limit(slot, m.next_seq + 1);
  const std::uint32_t next = std::max(m.fetch_next, m.fetched);
  if (next >= limit || (limit - next < fetch_batch_packets_ && limit < m.packets)) return;
  due_for_fetch(slot);
}

void RdmaEngine::due_for_fetch(std::uint32_t slot) {
  SendState& m = nic_.sends_[slot];
  if (m.fetch_due) return;
  m.fetch_due = true;
  fetch_due_.push_back(slot);
  nic_.wake_soon();
}

void RdmaEngine::run_due_fetches() {
  fetch_round_.swap(fetch_due_);  // both keep their capacity: no allocation per round
  for (std::uint32_t slot : fetch_round_) {
    SendState& m = nic_.sends_[slot];
    if (!m.active || m.kind != SendKind::kForGpu) continue;
    m.fetch_due = false;
    fetch(slot);
  }
  fetch_round_.clear();
}

void RdmaEngine::rewound(std::uint32_t slot) {
  // Go-back-N: what was sent after `next_seq` is read again (the NIC keeps no copy);
  // reads still on their way are dropped as they come, unless they are the next needed.
  SendState& m = nic_.sends_[slot];
  m.fetched = m.next_seq;
  m.fetch_next = m.next_seq;
  fetch(slot);
}

void RdmaEngine::acknowledged(std::uint32_t slot) {
  SendState& m = nic_.sends_[slot];
  if (m.fetched >= m.next_seq) return;
  m.fetched = m.next_seq;
  m.fetch_next = std::max(m.fetch_next, m.fetched);
  fetch(slot);
}

void RdmaEngine::on_read_response(Packet* p) {
  const std::uint32_t slot = p->message;
  SendState& m = nic_.sends_[slot];
  const std::uint32_t seq = p->seq;
  nic_.sim_->packets().release(p);
  if (m.kind != SendKind::kForGpu || seq != m.fetched) {
    ++nic_.counters_.stale_read_packets;  // read before a rewind, or already acknowledged
    return;
  }
  ++nic_.counters_.read_packets;
  const bool was_waiting = m.next_seq == m.fetched;
  ++m.fetched;
  m.fetch_next = std::max(m.fetch_next, m.fetched);
  if (was_waiting && m.sending) nic_.wake_ports_toward(m.dst);
}

void RdmaEngine::write_to_gpu(Packet* p, MessageId id, PortIndex gpu_port) {
  // Into the GPU's memory, over PCIe: each packet once, in the order it came.
  nic_.factory().into_dma_write(p, id);
  ++nic_.counters_.dma_writes;
  nic_.ports_[gpu_port]->enqueue(p);
}

void RdmaEngine::complete(MessageId id, CompletionKind kind, PortIndex port, std::uint8_t traffic_class) {
  ++nic_.counters_.completions;
  nic_.ports_[port]->enqueue(nic_.factory().completion(id, kind, nic_.host_, traffic_class, nic_.sim_->now()));
}

}  // namespace fabricsim
