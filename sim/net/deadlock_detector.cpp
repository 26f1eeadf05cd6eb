#include "sim/net/deadlock_detector.h"

#include <algorithm>
#include <functional>
#include <map>

namespace fabricsim {

void DeadlockDetector::start() {
  network_->sim().register_monitor();
  network_->sim().schedule_in(*this, interval_);
}

std::uint64_t DeadlockDetector::packets_moved() const {
  std::uint64_t moved = 0;
  for (const LinkDirection& d : network_->directions()) moved += d.port->packets_sent();
  if (group_ != nullptr) {
    std::vector<std::int64_t> v{static_cast<std::int64_t>(moved)};
    group_->all_sum(v);
    moved = static_cast<std::uint64_t>(v[0]);
  }
  return moved;
}

bool DeadlockDetector::anything_waiting() const {
  bool waiting = false;
  for (const LinkDirection& d : network_->directions()) {
    if (d.port->queued_bytes() > 0) {
      waiting = true;
      break;
    }
  }
  if (group_ != nullptr) {
    std::vector<std::int64_t> v{waiting ? 1 : 0};
    group_->all_sum(v);
    waiting = v[0] > 0;
  }
  return waiting;
}

void DeadlockDetector::on_event() {
  Simulator& sim = network_->sim();
  const std::uint64_t moved = packets_moved();
  // Every process asks the same questions in the same order (each is collective).
  const bool stalled = moved == last_moved_ && anything_waiting();
  if (stalled && find_cycle()) {
    detected_at_ = sim.now();
    sim.request_stop();
    return;
  }
  last_moved_ = moved;
  if (sim.work_pending()) {
    sim.schedule_in(*this, interval_);
  } else {
    sim.retire_monitor();
  }
}

bool DeadlockDetector::find_cycle() {
  // Vertices: blocked switch egress queues (direction index, class).
  const auto& dirs = network_->directions();
  struct Vertex {
    std::size_t direction;
    int traffic_class;
  };
  std::vector<Vertex> blocked;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    const LinkDirection& d = dirs[i];
    if (d.from.kind != NodeRef::Kind::kSwitch) continue;
    for (int c = 0; c < d.port->traffic_classes(); ++c) {
      if (d.port->paused(static_cast<std::uint8_t>(c)) && d.port->queued_bytes(c) > 0) blocked.push_back({i, c});
    }
  }
  if (group_ != nullptr) {
    // Each process knows its own ports' queues: gather them all, in the serial order.
    blocked = all_gather_items(*group_, blocked);
    std::sort(blocked.begin(), blocked.end(), [](const Vertex& a, const Vertex& b) {
      return a.direction != b.direction ? a.direction < b.direction : a.traffic_class < b.traffic_class;
    });
  }
  std::vector<Vertex> vertices;
  std::map<std::uint32_t, std::vector<std::size_t>> blocked_at_switch;  // switch -> vertex ids
  for (const Vertex& v : blocked) {
    blocked_at_switch[dirs[v.direction].from.index].push_back(vertices.size());
    vertices.push_back(v);
  }
  // Edges: a blocked queue toward switch D waits on D's blocked queues.
  const auto successors = [&](std::size_t v) -> const std::vector<std::size_t>* {
    const LinkDirection& d = dirs[vertices[v].direction];
    if (d.to.kind != NodeRef::Kind::kSwitch) return nullptr;
    const auto it = blocked_at_switch.find(d.to.index);
    return it == blocked_at_switch.end() ? nullptr : &it->second;
  };
  std::vector<int> state(vertices.size(), 0);  // 0 new, 1 on the stack, 2 done
  std::vector<std::size_t> stack;
  std::function<bool(std::size_t)> visit = [&](std::size_t v) -> bool {
    state[v] = 1;
    stack.push_back(v);
    if (const auto* next = successors(v)) {
      for (std::size_t w : *next) {
        if (state[w] == 1) {
          // The cycle is the stack from w.
          cycle_.clear();
          bool on = false;
          for (std::size_t u : stack) {
            on = on || u == w;
            if (on) cycle_.emplace_back(dirs[vertices[u].direction].from.index, dirs[vertices[u].direction].from_port);
          }
          return true;
        }
        if (state[w] == 0 && visit(w)) return true;
      }
    }
    stack.pop_back();
    state[v] = 2;
    return false;
  };
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    if (state[v] == 0 && visit(v)) return true;
  }
  return false;
}

}  // namespace fabricsim
