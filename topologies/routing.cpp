#include "topologies/routing.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "sim/parallel/ordered_pipeline.h"

namespace fabricsim {

std::vector<std::vector<Adjacent>> adjacency(const Topology& t) {
  std::vector<std::vector<Adjacent>> adj(t.nodes().size());
  for (std::uint32_t i = 0; i < t.links().size(); ++i) {
    const TopologyLink& l = t.links()[i];
    adj[l.a].push_back({l.b, i, static_cast<PortIndex>(adj[l.a].size())});
    adj[l.b].push_back({l.a, i, static_cast<PortIndex>(adj[l.b].size())});
  }
  return adj;
}

namespace {

constexpr std::uint64_t kUnreached = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint32_t kUnset = UINT32_MAX;
constexpr std::uint32_t kNone = UINT32_MAX;

// Neighbours of every node in port order, flat.
struct FlatAdjacency {
  std::vector<std::uint32_t> offset;  // per node + 1
  std::vector<std::uint32_t> node;
  std::vector<std::uint32_t> cost;
  std::vector<PortIndex> port;
  std::uint32_t begin(std::uint32_t u) const { return offset[u]; }
  std::uint32_t end(std::uint32_t u) const { return offset[u + 1]; }
  void add(std::uint32_t v, std::uint32_t c, PortIndex p) {
    node.push_back(v);
    cost.push_back(c);
    port.push_back(p);
  }
  void close_node() { offset.push_back(static_cast<std::uint32_t>(node.size())); }
};

// One node's table while it is built: interns candidate sets, keeps the per-group
// entries compact while every group has the same set, gathers the exceptions.
class TableBuilder {
 public:
  std::uint32_t intern(const std::vector<PortIndex>& ports) {
    if (ports.empty()) return 0;
    if (last_ != kUnset && same(last_, ports)) return last_;
    const std::uint64_t h = hash(ports);
    if (table_.set_count() <= 16) {
      for (std::uint32_t s = 1; s < table_.set_count(); ++s) {
        if (same(s, ports)) return last_ = s;
      }
    } else {
      if (index_.empty()) {
        for (std::uint32_t s = 1; s < table_.set_count(); ++s) {
          const auto sp = table_.set(s);
          index_.emplace(hash({sp.begin(), sp.end()}), s);
        }
      }
      const auto [lo, hi] = index_.equal_range(h);
      for (auto it = lo; it != hi; ++it) {
        if (same(it->second, ports)) return last_ = it->second;
      }
    }
    table_.ports.insert(table_.ports.end(), ports.begin(), ports.end());
    table_.set_offset.push_back(static_cast<std::uint32_t>(table_.ports.size()));
    last_ = static_cast<std::uint32_t>(table_.set_count() - 1);
    if (!index_.empty()) index_.emplace(h, last_);
    return last_;
  }
  void set_group(std::uint32_t g, std::uint32_t set, std::uint32_t groups) {
    if (uniform_) {
      if (uniform_set_ == kUnset) uniform_set_ = set;
      if (set == uniform_set_) return;
      uniform_ = false;
      table_.by_group.assign(groups, uniform_set_);
    }
    table_.by_group[g] = set;
  }
  void add_exception(HostId h, std::uint32_t set) { exceptions_.push_back({h, set}); }
  // Every group so far has `set` (so setting it again records nothing).
  bool uniform_with(std::uint32_t set) const { return uniform_ && uniform_set_ == set; }
  // Groups not set yet read `set`: the first group's set, which by_group is filled with
  // when the table stops being uniform.
  bool defaults_to(std::uint32_t set) const { return uniform_set_ == set; }

  RouteTable finish() {
    table_.default_set = uniform_set_ == kUnset ? 0 : uniform_set_;
    if (!exceptions_.empty()) {
      std::sort(exceptions_.begin(), exceptions_.end());
      table_.first_host = exceptions_.front().first;
      table_.by_host.assign(exceptions_.back().first - table_.first_host + 1, RouteTable::kNoException);
      for (const auto& [h, s] : exceptions_) table_.by_host[h - table_.first_host] = s;
    }
    table_.set_offset.shrink_to_fit();
    table_.ports.shrink_to_fit();
    RouteTable out = std::move(table_);
    exceptions_.clear();
    exceptions_.shrink_to_fit();
    index_.clear();
    return out;
  }

 private:
  static std::uint64_t hash(std::span<const PortIndex> ports) {
    std::uint64_t h = 1469598103934665603ull;
    for (PortIndex p : ports) h = (h ^ p) * 1099511628211ull;
    return h;
  }
  bool same(std::uint32_t s, const std::vector<PortIndex>& ports) const {
    const auto sp = table_.set(s);
    return std::equal(sp.begin(), sp.end(), ports.begin(), ports.end());
  }

  RouteTable table_;
  std::unordered_multimap<std::uint64_t, std::uint32_t> index_;
  std::vector<std::pair<HostId, std::uint32_t>> exceptions_;
  std::uint32_t last_ = kUnset;
  std::uint32_t uniform_set_ = kUnset;
  bool uniform_ = true;
};

struct Entry {
  std::uint32_t sw;    // a fabric switch the host is entered from
  std::uint64_t cost;  // from there to the host
  bool operator<(const Entry& o) const { return sw != o.sw ? sw < o.sw : cost < o.cost; }
  bool operator==(const Entry&) const = default;
};

// A node's last group entry, kept in one flat array beside the builders: most nodes give
// most groups the same ports, and comparing here, in cache, spares a visit to the
// builder (at 100,000 hosts, 3,000 groups x 10,000 fabric switches of visits). Sets of
// more ports than fit (a leaf's way up to its spines) are kept in `wide`, by node.
struct LastSet {
  static constexpr std::size_t kPorts = 5;
  static constexpr std::uint16_t kWide = UINT16_MAX;
  std::uint32_t set = kUnset;
  std::uint16_t count = 0;
  bool records_nothing = false;  // the builder's groups not set yet read `set` already
  std::array<PortIndex, kPorts> ports{};
  bool matches(const std::vector<PortIndex>& cand, const std::vector<PortIndex>& wide) const {
    if (set == kUnset) return false;
    if (count == kWide) return cand == wide;
    if (cand.size() != count) return false;
    for (std::size_t i = 0; i < cand.size(); ++i) {
      if (cand[i] != ports[i]) return false;
    }
    return true;
  }
  void keep(std::uint32_t s, const std::vector<PortIndex>& cand, std::vector<PortIndex>& wide, bool nothing) {
    set = s;
    records_nothing = nothing;
    if (cand.size() <= kPorts) {
      count = static_cast<std::uint16_t>(cand.size());
      std::copy(cand.begin(), cand.end(), ports.begin());
    } else {
      count = kWide;
      wide = cand;
    }
  }
};

class RouteCompiler {
 public:
  explicit RouteCompiler(const Topology& t) : t_(t), hosts_(static_cast<std::uint32_t>(t.host_count())) {
    const auto adj = adjacency(t);
    const std::size_t n = t.nodes().size();
    is_host_.resize(n);
    host_only_.resize(n);
    for (std::uint32_t u = 0; u < n; ++u) is_host_[u] = t.node(u).kind == NodeKind::kHost;
    // All neighbours, and the relaying (switch) ones alone: most scans need only those.
    flat_.offset.push_back(0);
    relay_.offset.push_back(0);
    for (std::uint32_t u = 0; u < n; ++u) {
      for (const Adjacent& a : adj[u]) {
        flat_.add(a.node, t.links()[a.link].cost, a.port);
        if (!is_host_[a.node]) relay_.add(a.node, t.links()[a.link].cost, a.port);
      }
      flat_.close_node();
      relay_.close_node();
    }
    for (std::uint32_t u = 0; u < n; ++u) {
      if (is_host_[u]) continue;
      bool any_switch = false;
      for (std::uint32_t i = flat_.begin(u); i < flat_.end(u); ++i) any_switch |= !is_host_[flat_.node[i]];
      host_only_[u] = !any_switch;
    }
    // A stub relays for no other switch: its one switch neighbour is the only switch it
    // reaches (a cluster's NIC: PCIe to its GPU, a cable to its leaf).
    stub_.resize(n);
    for (std::uint32_t u = 0; u < n; ++u) {
      if (is_host_[u]) continue;
      std::uint32_t only = kNone;
      bool one = true;
      for (std::uint32_t i = relay_.begin(u); i < relay_.end(u) && one; ++i) {
        if (only != kNone && relay_.node[i] != only) one = false;
        only = relay_.node[i];
      }
      stub_[u] = one && only != kNone;
    }
    if (t.routing() == RoutingScheme::kDimensionOrder) {
      if (!t.torus()) throw std::logic_error("dimension-order routing needs a torus layout");
      is_torus_.resize(n);
      for (std::uint32_t u = 0; u < n; ++u) is_torus_[u] = t.node(u).role == "torus";
    }
    for (std::uint32_t u = 0; u < n; ++u) {  // (only switches' links are relaxed)
      if (is_host_[u]) continue;
      for (std::uint32_t i = relay_.begin(u); i < relay_.end(u); ++i) max_relay_cost_ = std::max(max_relay_cost_, relay_.cost[i]);
    }
    find_sole_relays();
  }

  std::uint32_t count_groups() {
    Routes out;
    form_groups(out);
    return out.group_count;
  }

  Routes run(const RoutingProgress& progress, int threads) {
    Routes out;
    form_groups(out);
    builders_.resize(t_.nodes().size());
    last_.assign(t_.nodes().size(), LastSet{});
    wide_.assign(t_.nodes().size(), {});
    entry_mark_.assign(t_.nodes().size(), 0);
    unsettled_ = sole_nodes_;
    // The groups' Dijkstras are independent: they run on the threads, a few groups ahead,
    // while the tables take them in group order here.
    threads = std::max(1, threads);
    std::vector<Distances> slots(threads > 1 ? 2 * static_cast<std::size_t>(threads) : 1);
    for (Distances& d : slots) d.dist.assign(t_.nodes().size(), kUnreached);
    run_in_order(
        out.group_count, threads, slots, [this](std::uint32_t g, Distances& d) { dijkstra(g, d); },
        [&](std::uint32_t g, const Distances& d) {
          dist_ = d.dist.data();
          reached_ = d.touched.size();
          route_group(g, out);
          if (progress && (g % 64 == 63 || g + 1 == out.group_count)) progress(g + 1, out.group_count);
        });
    dist_ = nullptr;
    // A host with one link, to a relaying switch, sends everything there.
    for (std::uint32_t u = 0; u < t_.nodes().size(); ++u) {
      if (simple_host(u)) builders_[u].set_group(0, builders_[u].intern({flat_.port[flat_.begin(u)]}), out.group_count);
    }
    out.tables.reserve(builders_.size());
    for (TableBuilder& b : builders_) out.tables.push_back(b.finish());
    builders_.clear();
    builders_.shrink_to_fit();
    last_ = {};
    wide_ = {};
    return out;
  }

 private:
  bool simple_host(std::uint32_t u) const {
    return is_host_[u] && flat_.end(u) - flat_.begin(u) == 1 && relay_.end(u) - relay_.begin(u) == 1;
  }

  std::uint64_t min_cost(std::uint32_t from, std::uint32_t to) const {
    std::uint64_t best = kUnreached;
    for (std::uint32_t i = flat_.begin(from); i < flat_.end(from); ++i) {
      if (flat_.node[i] == to) best = std::min<std::uint64_t>(best, flat_.cost[i]);
    }
    return best;
  }

  // Groups by entry set; a private switch (one host, the host's only fabric switch) folds.
  void form_groups(Routes& out) {
    via_.assign(hosts_, kNone);
    via_cost_.assign(hosts_, 0);
    std::map<std::vector<Entry>, std::uint32_t> by_entries;
    out.host_group.resize(hosts_);
    std::vector<std::uint32_t> fabric;
    for (std::uint32_t h = 0; h < hosts_; ++h) {
      const std::uint32_t hn = t_.host_node(h);
      fabric.clear();
      for (std::uint32_t i = flat_.begin(hn); i < flat_.end(hn); ++i) {
        const std::uint32_t v = flat_.node[i];
        if (!is_host_[v] && !host_only_[v] && std::find(fabric.begin(), fabric.end(), v) == fabric.end()) fabric.push_back(v);
      }
      std::vector<Entry> entries;
      // (A torus router is never folded: dimension order aims at it.)
      const bool torus = !is_torus_.empty() && fabric.size() == 1 && is_torus_[fabric[0]];
      if (fabric.size() == 1 && !torus && host_neighbours(fabric[0]) == 1) {
        const std::uint32_t s = fabric[0];
        via_[h] = s;
        via_cost_[h] = min_cost(s, hn);
        for (std::uint32_t i = flat_.begin(s); i < flat_.end(s); ++i) {
          const std::uint32_t b = flat_.node[i];
          if (!is_host_[b]) entries.push_back({b, flat_.cost[i] + via_cost_[h]});
        }
      } else {
        for (std::uint32_t s : fabric) entries.push_back({s, min_cost(s, hn)});
      }
      std::sort(entries.begin(), entries.end());
      // Parallel links: keep the cheapest per switch.
      entries.erase(std::unique(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.sw == b.sw; }),
                    entries.end());
      const auto [it, fresh] = by_entries.try_emplace(std::move(entries), static_cast<std::uint32_t>(group_entries_.size()));
      if (fresh) {
        group_entries_.push_back(it->first);
        members_.emplace_back();
      }
      out.host_group[h] = it->second;
      members_[it->second].push_back(h);
    }
    out.group_count = static_cast<std::uint32_t>(group_entries_.size());
  }

  std::uint32_t host_neighbours(std::uint32_t s) const {
    std::uint32_t seen = kNone, count = 0;
    for (std::uint32_t i = flat_.begin(s); i < flat_.end(s); ++i) {
      const std::uint32_t v = flat_.node[i];
      if (is_host_[v] && v != seen) {
        if (seen != kNone) return 2;
        seen = v;
        ++count;
      }
    }
    return count;
  }

  // A group's least costs from every relaying node, and which nodes it reached.
  struct Distances {
    std::vector<std::uint64_t> dist;  // by node; kUnreached but where `touched`
    std::vector<std::uint32_t> touched;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> frontier;  // a min-heap
    std::vector<std::vector<std::uint32_t>> buckets;  // Dial's: by least cost, modulo their count
    std::vector<Entry> entries;                       // the group's entries by cost
    std::vector<std::uint32_t> level;                 // the bucket being taken
  };

  // Reads only what the constructor and form_groups set: groups' Dijkstras run at once.
  void dijkstra(std::uint32_t g, Distances& d) const {
    std::vector<std::uint64_t>& dist = d.dist;
    for (std::uint32_t u : d.touched) dist[u] = kUnreached;
    d.touched.clear();
    if (max_relay_cost_ <= kBucketCosts) {
      dial(g, d);
      return;
    }
    auto& frontier = d.frontier;
    frontier.clear();
    const std::greater<> later;
    for (const Entry& e : group_entries_[g]) {
      if (e.cost < dist[e.sw]) {
        if (dist[e.sw] == kUnreached) d.touched.push_back(e.sw);
        dist[e.sw] = e.cost;
        frontier.emplace_back(e.cost, e.sw);
        std::push_heap(frontier.begin(), frontier.end(), later);
      }
    }
    while (!frontier.empty()) {
      std::pop_heap(frontier.begin(), frontier.end(), later);
      const auto [du, u] = frontier.back();
      frontier.pop_back();
      if (du != dist[u]) continue;
      relax(u, du, d, [&](std::uint64_t nd, std::uint32_t v) {
        frontier.emplace_back(nd, v);
        std::push_heap(frontier.begin(), frontier.end(), later);
      });
    }
  }

  // Node u, settled at cost `du`: its relaying neighbours' costs through it, and those that
  // go on relaying handed to `wait` (cost, node) for their turn.
  template <typename Wait>
  void relax(std::uint32_t u, std::uint64_t du, Distances& d, Wait wait) const {
    std::vector<std::uint64_t>& dist = d.dist;
    // Hosts never relay; their own distance is read off their links.
    for (std::uint32_t i = relay_.begin(u); i < relay_.end(u); ++i) {
      const std::uint32_t v = relay_.node[i];
      const std::uint64_t nd = du + relay_.cost[i];
      if (nd < dist[v]) {
        if (dist[v] == kUnreached) d.touched.push_back(v);
        dist[v] = nd;
        // A stub reached from its one switch neighbour leads nowhere cheaper: its
        // distance is final, and it need not wait in the queue (100,000 NICs per group
        // at 100,000 GPUs).
        if (!stub_[v]) wait(nd, v);
      }
    }
  }

  // The same least costs where links between relaying nodes cost little (1 a hop unless a
  // topology says): a bucket per cost, taken in order, instead of a heap (Dial's
  // algorithm). Costs are exact integers, so the distances are the heap's.
  void dial(std::uint32_t g, Distances& d) const {
    std::vector<std::uint64_t>& dist = d.dist;
    const std::size_t width = std::size_t{max_relay_cost_} + 1;  // a link's cost never reaches its own bucket
    if (d.buckets.size() != width) d.buckets.assign(width, {});
    d.entries = group_entries_[g];
    std::sort(d.entries.begin(), d.entries.end(), [](const Entry& a, const Entry& b) { return a.cost < b.cost; });
    std::size_t next_entry = 0;
    std::size_t pending = 0;  // in the buckets, stale ones included
    std::uint64_t cost = 0;
    for (;;) {
      if (pending == 0) {
        if (next_entry == d.entries.size()) break;
        cost = d.entries[next_entry].cost;
      }
      std::vector<std::uint32_t>& bucket = d.buckets[cost % width];
      for (; next_entry < d.entries.size() && d.entries[next_entry].cost == cost; ++next_entry) {
        const std::uint32_t sw = d.entries[next_entry].sw;
        if (cost < dist[sw]) {
          if (dist[sw] == kUnreached) d.touched.push_back(sw);
          dist[sw] = cost;
          bucket.push_back(sw);
          ++pending;
        }
      }
      // In node order, as the heap takes equal costs: neighbouring nodes' links and
      // distances lie near one another.
      d.level.swap(bucket);
      std::sort(d.level.begin(), d.level.end());
      pending -= d.level.size();
      for (const std::uint32_t u : d.level) {
        if (dist[u] != cost) continue;
        relax(u, cost, d, [&](std::uint64_t nd, std::uint32_t v) {
          d.buckets[nd % width].push_back(v);
          ++pending;
        });
      }
      d.level.clear();
      ++cost;
    }
  }

  // Least cost from node u (a host or a switch) toward the group through relaying switches.
  std::uint64_t through_cost(std::uint32_t u) const {
    if (!is_host_[u]) return dist_[u];
    std::uint64_t best = kUnreached;
    for (std::uint32_t i = relay_.begin(u); i < relay_.end(u); ++i) {
      const std::uint32_t v = relay_.node[i];
      if (dist_[v] != kUnreached) best = std::min(best, dist_[v] + relay_.cost[i]);
    }
    return best;
  }

  // Ports of u on a least-cost path of cost `best` toward the group through relaying switches.
  void through_ports(std::uint32_t u, std::uint64_t best, std::vector<PortIndex>& out) const {
    if (best == kUnreached) return;
    for (std::uint32_t i = relay_.begin(u); i < relay_.end(u); ++i) {
      const std::uint32_t v = relay_.node[i];
      if (dist_[v] != kUnreached && dist_[v] + relay_.cost[i] == best) out.push_back(relay_.port[i]);
    }
  }

  // Dimension order: the port of torus switch u toward torus switch `attach`.
  bool torus_port(std::uint32_t u, std::uint32_t attach, std::vector<PortIndex>& out) const {
    const TorusLayout& torus = *t_.torus();
    const auto& here = torus.switch_coords[t_.node(u).kind_index];
    const auto& there = torus.switch_coords[t_.node(attach).kind_index];
    for (int d = 0; d < 3; ++d) {
      if (here[d] == there[d]) continue;
      const int k = torus.dims[d];
      const int forward = ((there[d] - here[d]) % k + k) % k;
      const int step = forward <= k - forward ? 1 : -1;
      auto c = here;
      c[d] = ((c[d] + step) % k + k) % k;
      const std::uint32_t next =
          t_.switch_node(torus.switch_at[static_cast<std::size_t>(c[0] + torus.dims[0] * (c[1] + torus.dims[1] * c[2]))]);
      for (std::uint32_t i = flat_.begin(u); i < flat_.end(u); ++i) {
        if (flat_.node[i] == next) {
          out.push_back(flat_.port[i]);  // one path: with two parallel links (a ring of 2) the first
          return true;
        }
      }
      return false;
    }
    return false;
  }

  // With dist_ and reached_ the group's (its Dijkstra's, done already).
  void route_group(std::uint32_t g, Routes& out) {
    const std::uint32_t groups = out.group_count;
    // Dimension order aims at the torus switch nearest the group (first of equals).
    std::uint32_t attach = kNone;
    if (!is_torus_.empty()) {
      std::uint64_t best = kUnreached;
      for (std::uint32_t u = 0; u < t_.nodes().size(); ++u) {
        if (is_torus_[u] && dist_[u] < best) best = dist_[u], attach = u;
      }
    }
    // Group entries: switches from the Dijkstra, hosts from their links.
    if (all_reached()) {
      // A node with one relaying neighbour v (a GPU's NIC, a NIC's leaf) has the same
      // ports toward every group that reaches v and does not enter at it: once its table
      // reads them for groups not set, those groups need nothing (at 100,000 GPUs, 200,000
      // of 260,000 nodes).
      for (const Entry& e : group_entries_[g]) entry_mark_[e.sw] = 1;
      for (std::uint32_t u : varied_) group_entry(g, u, attach, groups);
      std::size_t kept = 0;
      for (std::uint32_t u : unsettled_) {
        if (entry_mark_[u]) {
          unsettled_[kept++] = u;
          continue;
        }
        const std::uint32_t set = group_entry(g, u, attach, groups);
        if (!builders_[u].defaults_to(set)) unsettled_[kept++] = u;
      }
      unsettled_.resize(kept);
      for (const Entry& e : group_entries_[g]) {
        if (sole_[e.sw]) group_entry(g, e.sw, attach, groups);
        entry_mark_[e.sw] = 0;
      }
    } else {
      for (std::uint32_t u : varied_) group_entry(g, u, attach, groups);
      for (std::uint32_t u : sole_nodes_) group_entry(g, u, attach, groups);
    }
    pairs_.clear();
    for (std::uint32_t h : members_[g]) host_exceptions(g, h, attach);
    check_reach(g, out);
  }

  // Node u's ports toward group g, into its table; returns their set.
  std::uint32_t group_entry(std::uint32_t g, std::uint32_t u, std::uint32_t attach, std::uint32_t groups) {
    cand_.clear();
    if (is_host_[u]) {
      through_ports(u, through_cost(u), cand_);
    } else if (dist_[u] != kUnreached) {
      if (attach != kNone && is_torus_[u] && u != attach) {
        torus_port(u, attach, cand_);
      } else {
        through_ports(u, dist_[u], cand_);
      }
    }
    LastSet& last = last_[u];
    std::vector<PortIndex>& wide = wide_[u];
    const bool same = last.matches(cand_, wide);
    // The same ports as the table gives groups not set yet: nothing to record. (By_group
    // is filled with the first group's set when it is made, and each group is set once.)
    if (same && last.records_nothing) return last.set;
    TableBuilder& b = builders_[u];
    const std::uint32_t set = same ? last.set : b.intern(cand_);
    b.set_group(g, set, groups);
    last.keep(set, cand_, wide, b.defaults_to(set));
    return set;
  }

  // Every node a group's Dijkstra can reach was reached: every relaying node but the
  // host-only switches, which no switch neighbours (an NVSwitch chip).
  bool all_reached() const { return is_torus_.empty() && reached_ == reachable_; }

  // sole_[u]: all u's relaying links (host-only switches aside: nothing reaches them) go
  // to one node. Simple hosts are set once at the end, and host-only switches (NVSwitch
  // chips) have no ports toward any group (their table's default, 0: none) but their
  // hosts' exceptions; the others split into varied_ and sole_nodes_.
  void find_sole_relays() {
    const std::size_t n = t_.nodes().size();
    sole_.assign(n, 0);
    has_relay_.assign(n, 0);
    reachable_ = 0;
    for (std::uint32_t u = 0; u < n; ++u) {
      if (!is_host_[u] && !host_only_[u]) ++reachable_;
      for (std::uint32_t i = relay_.begin(u); i < relay_.end(u); ++i) has_relay_[u] |= !host_only_[relay_.node[i]];
      if (simple_host(u) || (!is_host_[u] && host_only_[u])) continue;
      std::uint32_t only = kNone;
      bool one = true;
      for (std::uint32_t i = relay_.begin(u); i < relay_.end(u) && one; ++i) {
        const std::uint32_t v = relay_.node[i];
        if (host_only_[v]) continue;
        if (only != kNone && v != only) one = false;
        only = v;
      }
      if (one && only != kNone && is_torus_.empty()) {
        sole_[u] = 1;
        sole_nodes_.push_back(u);
      } else {
        varied_.push_back(u);
      }
    }
  }

  // Where a node is next to host h its ports differ from the group's.
  void host_exceptions(std::uint32_t g, std::uint32_t h, std::uint32_t attach) {
    const std::uint32_t hn = t_.host_node(h);
    const std::uint32_t last = via_[h] == kNone ? hn : via_[h];  // the last switch-side hop's target
    const std::uint64_t tail = via_[h] == kNone ? 0 : via_cost_[h];
    std::vector<PortIndex> cand;
    // Entry switches: the group's ports plus their own way in, where it is least-cost.
    for (const Entry& e : group_entries_[g]) {
      cand.clear();
      const std::uint32_t b = e.sw;
      if (attach != kNone && is_torus_[b] && b != attach) {
        torus_port(b, attach, cand);
      } else {
        through_ports(b, dist_[b], cand);
        for (std::uint32_t i = flat_.begin(b); i < flat_.end(b); ++i) {
          if (flat_.node[i] == last && flat_.cost[i] + tail == dist_[b]) cand.push_back(flat_.port[i]);
        }
        std::sort(cand.begin(), cand.end());
        cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
      }
      builders_[b].add_exception(h, builders_[b].intern(cand));
    }
    // The folded private switch (a GPU's NIC): straight down.
    if (via_[h] != kNone) direct_exception(via_[h], hn, h);
    // Switches that reach hosts only (NVSwitch chips): straight down; and hosts that reach
    // h through them or by a direct cable.
    near_.clear();
    for (std::uint32_t i = flat_.begin(hn); i < flat_.end(hn); ++i) {
      const std::uint32_t x = flat_.node[i];
      if (is_host_[x]) {
        near_.push_back(x);
      } else if (host_only_[x]) {
        if (std::find(done_only_.begin(), done_only_.end(), x) == done_only_.end()) {
          done_only_.push_back(x);
          direct_exception(x, hn, h);
        }
        for (std::uint32_t j = flat_.begin(x); j < flat_.end(x); ++j) near_.push_back(flat_.node[j]);
      }
    }
    done_only_.clear();
    std::sort(near_.begin(), near_.end());
    near_.erase(std::unique(near_.begin(), near_.end()), near_.end());
    for (std::uint32_t u : near_) {
      if (u == hn) continue;
      std::uint64_t best = through_cost(u);
      for (std::uint32_t i = flat_.begin(u); i < flat_.end(u); ++i) best = std::min(best, side_cost(i, hn));
      cand.clear();
      for (std::uint32_t i = flat_.begin(u); i < flat_.end(u); ++i) {
        const std::uint32_t v = flat_.node[i];
        const bool through = !is_host_[v] && dist_[v] != kUnreached && dist_[v] + flat_.cost[i] == best;
        if (through || side_cost(i, hn) == best) cand.push_back(flat_.port[i]);
      }
      builders_[u].add_exception(h, builders_[u].intern(cand));
      pairs_.push_back({t_.node(u).kind_index, h});
    }
    builders_[hn].add_exception(h, 0);  // to itself: nowhere
  }

  // Cost from u's adjacency i to host node hn other than through relaying switches: a
  // direct cable, or a host-only switch next to hn.
  std::uint64_t side_cost(std::uint32_t i, std::uint32_t hn) const {
    const std::uint32_t v = flat_.node[i];
    if (v == hn) return flat_.cost[i];
    if (!is_host_[v] && host_only_[v]) {
      const std::uint64_t c = min_cost(v, hn);
      return c == kUnreached ? kUnreached : c + flat_.cost[i];
    }
    return kUnreached;
  }

  void direct_exception(std::uint32_t s, std::uint32_t hn, HostId h) {
    const std::uint64_t c = min_cost(s, hn);
    std::vector<PortIndex> cand;
    for (std::uint32_t i = flat_.begin(s); i < flat_.end(s); ++i) {
      if (flat_.node[i] == hn && flat_.cost[i] == c) cand.push_back(flat_.port[i]);
    }
    builders_[s].add_exception(h, builders_[s].intern(cand));
  }

  // Every host must reach every member: through the fabric, or by an exception.
  void check_reach(std::uint32_t g, Routes& out) {
    if (!out.unreachable.empty()) return;
    const auto& members = members_[g];
    std::sort(pairs_.begin(), pairs_.end());
    // With every relaying node reached, a host with a relaying neighbour has a way.
    const bool every_relay_reached = all_reached();
    for (std::uint32_t s = 0; s < hosts_; ++s) {
      const std::uint32_t sn = t_.host_node(s);
      if (every_relay_reached && has_relay_[sn]) continue;
      if (through_cost(sn) != kUnreached) continue;
      for (std::uint32_t h : members) {  // the first member s has no way to
        const bool reached = std::binary_search(pairs_.begin(), pairs_.end(), std::pair{s, h});
        if (h != s && !reached) {
          out.unreachable = "endpoint '" + t_.node(t_.host_node(h)).name + "' cannot be reached from '" + t_.node(sn).name + "'";
          return;
        }
      }
    }
  }

  const Topology& t_;
  std::uint32_t hosts_;
  FlatAdjacency flat_, relay_;
  std::vector<char> is_host_, host_only_, stub_, is_torus_;
  static constexpr std::uint32_t kBucketCosts = 64;  // Dial's buckets up to this link cost
  std::uint32_t max_relay_cost_ = 0;
  std::vector<std::uint32_t> via_;
  std::vector<std::uint64_t> via_cost_;
  std::vector<std::vector<Entry>> group_entries_;
  std::vector<std::vector<std::uint32_t>> members_;
  std::vector<TableBuilder> builders_;
  std::vector<LastSet> last_;  // by node, beside builders_
  std::vector<std::vector<PortIndex>> wide_;  // by node: its last set where more than LastSet::kPorts
  const std::uint64_t* dist_ = nullptr;  // by node: the group being routed's (Distances::dist)
  std::size_t reached_ = 0;              // and how many nodes its Dijkstra reached
  std::vector<std::uint32_t> near_, done_only_;
  std::vector<PortIndex> cand_;
  // The skip of nodes whose ports do not change from group to group (route_group).
  std::vector<char> sole_;       // by node: one relaying neighbour (find_sole_relays)
  std::vector<char> has_relay_;  // by node: a neighbour a group's Dijkstra reaches
  std::vector<std::uint32_t> varied_, sole_nodes_;
  std::vector<std::uint32_t> unsettled_;  // sole nodes whose table does not yet default to their ports
  std::vector<char> entry_mark_;  // by node: an entry of the group being routed
  std::size_t reachable_ = 0;  // relaying nodes (switches but the host-only ones)
  // (source host, member) pairs this group's exceptions connect; only hosts with no way
  // through the fabric (a lone NVSwitch domain) are looked up in it.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs_;
};

}  // namespace

Routes compute_routes(const Topology& t, const RoutingProgress& progress, int threads) {
  return RouteCompiler(t).run(progress, threads);
}

std::uint32_t route_group_count(const Topology& t) { return RouteCompiler(t).count_groups(); }

std::vector<std::vector<int>> routed_hops(const Topology& t, const Routes& routes) {
  const auto adj = adjacency(t);
  const std::size_t hosts = t.host_count();
  std::vector<std::vector<int>> hops(hosts, std::vector<int>(hosts, -1));
  // For each destination, hops from every node by following the tables (any choice in
  // an ECMP set has the same hop count under unit costs; we take the first).
  std::vector<int> memo(t.nodes().size());
  for (std::uint32_t h = 0; h < hosts; ++h) {
    const std::uint32_t dst = t.host_node(h);
    std::fill(memo.begin(), memo.end(), -2);  // -2: not computed
    std::function<int(std::uint32_t, int)> walk = [&](std::uint32_t u, int depth) -> int {
      if (u == dst) return 0;
      if (memo[u] != -2) return memo[u];
      if (depth > static_cast<int>(t.nodes().size())) return memo[u] = -1;  // a loop: report unreachable
      const auto ports = routes.to(u, h);
      if (ports.empty()) return memo[u] = -1;
      const int rest = walk(adj[u][ports[0]].node, depth + 1);
      return memo[u] = rest < 0 ? -1 : rest + 1;
    };
    for (std::uint32_t s = 0; s < hosts; ++s) hops[s][h] = s == h ? 0 : walk(t.host_node(s), 0);
  }
  return hops;
}

std::uint64_t routed_path_count(const Topology& t, const Routes& routes, std::uint32_t src, std::uint32_t dst) {
  const auto adj = adjacency(t);
  std::vector<std::int64_t> memo(t.nodes().size(), -1);
  const std::uint32_t target = t.host_node(dst);
  std::function<std::uint64_t(std::uint32_t)> count = [&](std::uint32_t u) -> std::uint64_t {
    if (u == target) return 1;
    if (memo[u] >= 0) return static_cast<std::uint64_t>(memo[u]);
    std::uint64_t total = 0;
    for (PortIndex p : routes.to(u, dst)) total += count(adj[u][p].node);
    memo[u] = static_cast<std::int64_t>(total);
    return total;
  };
  return count(t.host_node(src));
}

}  // namespace fabricsim
