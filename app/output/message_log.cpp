#include "app/output/message_log.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <cstdio>
#include <sstream>
#include <filesystem>
#include <stdexcept>

#include "app/scenario/scenario.h"
#include "topologies/compile.h"

namespace fabricsim {

namespace {
template <typename A, typename B>
bool named_before(const A& a, const B& b) {
  return a.src != b.src ? a.src < b.src : a.sequence < b.sequence;
}
}  // namespace

MessageLog::~MessageLog() {
  if (out_) {
    out_.reset();
    std::error_code ec;
    std::filesystem::remove(path_ + ".partial", ec);  // never leave half a file behind
  }
}

void MessageLog::record_to(const std::string& path) {
  path_ = path;
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  out_ = std::make_unique<std::ofstream>(path + ".partial", std::ios::trunc);
  if (!*out_) throw std::runtime_error("cannot write " + path + ".partial");
}

MessageLog::MessageLog(const ScenarioRun& run, std::size_t partitions)
    : run_(&run), partitions_(std::max<std::size_t>(1, partitions)), split_(partitions > 1) {}

std::string MessageLog::line(MessageId id, const Message& m) const {
  std::string out = line_head(id, m);
  if (m.delivered >= 0) out += std::to_string(m.delivered); else out += "null";
  return out + "}\n";
}

std::string MessageLog::line_head(MessageId id, const Message& m) const {
  const Topology& t = run_->topology();
  std::ostringstream out;
  // A message made before the run has a serial; one made during it (a collective's, a
  // trace's) is named by its source and its sequence there alone: a split run makes them
  // in an order of its own.
  out << "{\"id\":";
  if (!run_->network().messages().recyclable(id)) out << m.serial; else out << "null";
  out << ",\"sequence\":" << m.sequence << ",\"source\":\"" << node_name(t, NodeRef::host(m.src)) << "\",\"destination\":\""
      << node_name(t, NodeRef::host(m.dst)) << "\",\"bytes\":" << m.bytes << ",\"packets\":" << m.packets
      << ",\"start_ps\":" << run_->message_start(id) << ",\"finish_ps\":";
  if (m.finished >= 0) out << m.finished; else out << "null";
  out << ",\"delivered_ps\":";
  return out.str();
}

namespace {
// An ordinary message is delivered before it finishes (its last ack answers its last
// packet), but within one window the two may fall to two threads: its record waits for
// the receiver's note.
bool ordinary(const Message& m) { return m.in_network == InNetwork::kNone && m.has_sender && m.awaits_delivery; }
}  // namespace

void MessageLog::on_message_delivered(MessageId id, Time now) {
  if (!split_ || !out_ || deferred_) return;
  const Message& m = run_->network().messages()[id];
  if (!ordinary(m)) return;
  partitions_[run_->network().host_partition(m.dst)].delivered.push_back({m.src, m.sequence, now});
}

void MessageLog::on_message_finished(MessageId id, Time now) {
  // Over processes, messages made before the run are pooled from the table at the end.
  if (deferred_ && !run_->network().messages().recyclable(id)) return;
  const Message& m = run_->network().messages()[id];
  // Only the sender's partition's thread reports this message: its buffer is its own.
  Partition& p = partitions_[split_ ? run_->network().host_partition(m.src) : 0];
  const Time took = m.finished - m.posted;
  // Equal times: the first by name (source, then its sequence), whichever finished first
  // (the same for any split, where messages made during the run have no fixed serial).
  if (took > p.slowest.took || (took == p.slowest.took && named_before(m, p.slowest))) {
    p.slowest = {m.serial, m.src, m.dst, m.bytes, took, m.sequence};
  }
  if (!out_ || deferred_) return;
  if (!split_ && !p.pending.empty() && p.pending.front().finished != now) flush();
  if (split_ && ordinary(m)) {
    p.pending.push_back({now, m.src, m.sequence, line_head(id, m), true});
  } else {
    p.pending.push_back({now, m.src, m.sequence, line(id, m), false});
  }
}

void MessageLog::flush() {
  if (!out_) return;
  std::vector<Pending> all;
  // Deliveries noted since the last flush, and those still waiting for their finish.
  std::map<std::pair<HostId, std::uint32_t>, Time> delivered;
  for (Partition& p : partitions_) {
    for (const Delivered& d : p.delivered) delivered[{d.src, d.sequence}] = d.at;
    p.delivered.clear();
  }
  for (Partition& p : partitions_) {
    for (Pending& x : p.pending) all.push_back(std::move(x));
    p.pending.clear();
  }
  std::sort(all.begin(), all.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.finished, a.src, a.sequence) < std::tie(b.finished, b.src, b.sequence);
  });
  for (Pending& x : all) {
    if (x.awaits_delivered) {
      const auto it = delivered.find({x.src, x.sequence});
      if (it != delivered.end()) {
        x.line += std::to_string(it->second);
        delivered.erase(it);
      } else {
        x.line += "null";
      }
      x.line += "}\n";
    }
    *out_ << x.line;
  }
  written_ += all.size();
  // Delivered but not yet finished: kept for a later window.
  for (const auto& [key, at] : delivered) partitions_.front().delivered.push_back({key.first, key.second, at});
}

SlowestMessage MessageLog::slowest() const {
  SlowestMessage best;
  for (const Partition& p : partitions_) {
    const SlowestMessage& s = p.slowest;
    if (s.took > best.took || (s.took == best.took && s.took >= 0 && named_before(s, best))) best = s;
  }
  return best;
}

void MessageLog::pool_finished(MessageId kept, ProcessGroup* group) {
  SlowestMessage best = slowest();
  const MessageTable& table = run_->network().messages();
  for (MessageId id = 0; id < kept; ++id) {
    const Message& m = table[id];
    if (m.finished < 0) continue;
    const Time took = m.finished - m.posted;
    if (took > best.took || (took == best.took && named_before(m, best))) best = {m.serial, m.src, m.dst, m.bytes, took, m.sequence};
  }
  if (group != nullptr) {
    Bytes mine;
    put(mine, best);
    for (const Bytes& b : all_gather(*group, mine)) {
      const SlowestMessage s = BytesReader(b).get<SlowestMessage>();
      if (s.took > best.took || (s.took == best.took && s.took >= 0 && named_before(s, best))) best = s;
    }
  }
  for (Partition& p : partitions_) p.slowest = SlowestMessage{};
  partitions_.front().slowest = best;
}

void MessageLog::finish_records() {
  if (!out_) return;
  flush();
  const auto all = run_->network().messages().all();
  if (deferred_) {
    // In order of finish time, then id: as a run on one process streams them.
    std::vector<MessageId> finished;
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (all[i].finished >= 0) finished.push_back(static_cast<MessageId>(i));
    }
    std::sort(finished.begin(), finished.end(), [&](MessageId a, MessageId b) {
      return std::tie(all[a].finished, all[a].src, all[a].sequence) < std::tie(all[b].finished, all[b].src, all[b].sequence);
    });
    for (MessageId id : finished) *out_ << line(id, all[id]);
    written_ += finished.size();
  }
  // Then the unfinished: those made before the run in id order, then those made during
  // it by name (receive-side records of in-network transfers have no record of their own).
  const MessageTable& table = run_->network().messages();
  std::vector<MessageId> later;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto id = static_cast<MessageId>(i);
    if (all[i].finished >= 0) continue;
    if (table.recyclable(id)) {
      if (all[i].has_sender) later.push_back(id);
      continue;
    }
    *out_ << line(id, all[i]);
    ++written_;
  }
  std::sort(later.begin(), later.end(), [&](MessageId a, MessageId b) {
    return std::tie(all[a].src, all[a].sequence) < std::tie(all[b].src, all[b].sequence);
  });
  for (MessageId id : later) *out_ << line(id, all[id]);
  written_ += later.size();
  out_->close();
  const bool ok = static_cast<bool>(*out_);
  out_.reset();
  if (!ok) throw std::runtime_error("cannot write " + path_);
  std::filesystem::rename(path_ + ".partial", path_);
}

}  // namespace fabricsim
