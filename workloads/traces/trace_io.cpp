#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "workloads/traces/trace.h"

namespace fabricsim {

void Trace::set_ranks(int n) {
  ranks = n;
  ops.resize(static_cast<std::size_t>(n));
  dep_lists.resize(static_cast<std::size_t>(n));
  dep_at.resize(static_cast<std::size_t>(n));
}

TraceOp& Trace::add(int rank, TraceOp op, std::span<const int> deps) {
  if (dep_lists.size() < ops.size()) dep_lists.resize(ops.size());
  if (dep_at.size() < ops.size()) dep_at.resize(ops.size());
  std::vector<int>& list = dep_lists[static_cast<std::size_t>(rank)];
  if (list.size() + deps.size() > UINT32_MAX) throw std::runtime_error("rank " + std::to_string(rank) + ": more than 4,294,967,295 dependencies");
  std::vector<std::uint32_t>& at = dep_at[static_cast<std::size_t>(rank)];
  if (at.empty()) at.push_back(0);
  list.insert(list.end(), deps.begin(), deps.end());
  at.push_back(static_cast<std::uint32_t>(list.size()));
  std::vector<TraceOp>& mine = ops[static_cast<std::size_t>(rank)];
  mine.push_back(op);
  return mine.back();
}

std::size_t Trace::IntsHash::operator()(const std::vector<int>& v) const {
  std::size_t h = v.size();
  for (int x : v) h = h * 1000003u ^ static_cast<std::size_t>(static_cast<unsigned>(x));
  return h;
}

std::uint32_t Trace::group_id(const std::vector<int>& members) {
  if (members.empty()) return 0;
  const auto [it, fresh] = group_index.try_emplace(members, static_cast<std::uint32_t>(groups.size()));
  if (fresh) groups.push_back(members);
  return it->second;
}

std::uint32_t Trace::key_id(const std::string& key) {
  if (key.empty()) return 0;
  const auto [it, fresh] = key_index.try_emplace(key, static_cast<std::uint32_t>(keys.size()));
  if (fresh) keys.push_back(key);
  return it->second;
}

std::uint32_t Trace::new_key(std::string key) {
  keys.push_back(std::move(key));
  return static_cast<std::uint32_t>(keys.size() - 1);
}

std::uint16_t Trace::name_id(const std::string& name) {
  if (name.empty()) return 0;
  const auto [it, fresh] = name_index.try_emplace(name, static_cast<std::uint16_t>(names.size()));
  if (fresh) {
    if (names.size() > UINT16_MAX) throw std::runtime_error("more than 65,535 distinct labels, algorithms and process groups");
    names.push_back(name);
  }
  return it->second;
}

void Trace::drop_indexes() {
  // Swapped with empty ones, not assigned `{}` (which clears and keeps the buckets).
  decltype(group_index)().swap(group_index);
  decltype(key_index)().swap(key_index);
  decltype(name_index)().swap(name_index);
}

std::size_t Trace::op_count() const {
  std::size_t n = 0;
  for (const auto& r : ops) n += r.size();
  return n;
}

Time Trace::compute_time(const TraceOp& op) const {
  if (op.flops > 0 && achieved_flops > 0) return static_cast<Time>(std::llround(op.flops / achieved_flops * 1e12));
  return op.duration;
}

std::string Trace::compute_description() const {
  if (!compute_model.empty()) return compute_model;
  if (achieved_flops <= 0) return "each op's given duration";
  char text[96];
  std::snprintf(text, sizeof text, "FLOPs at %.6g TFLOP/s, or each op's given duration", achieved_flops * 1e-12);
  return text;
}

namespace {


const char* kind_name(TraceOpKind k) {
  switch (k) {
    case TraceOpKind::kCompute: return "compute";
    case TraceOpKind::kCollective: return "collective";
    case TraceOpKind::kSend: return "send";
    case TraceOpKind::kRecv: return "recv";
  }
  return "?";
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

void ints(std::ostringstream& out, const char* key, std::span<const int> v) {
  out << ", \"" << key << "\": [";
  for (std::size_t i = 0; i < v.size(); ++i) out << (i ? "," : "") << v[i];
  out << "]";
}

// A JSON value as the trace needs: number, string, or array of those.
struct Value {
  enum Kind { kNumber, kString, kArray } kind = kNumber;
  double number = 0;
  std::string text;
  std::vector<Value> items;
};

class LineParser {
 public:
  LineParser(const std::string& line, const std::string& where) : s_(line), where_(where) {}
  std::map<std::string, Value> object() {
    std::map<std::string, Value> out;
    space();
    expect('{');
    space();
    if (peek() == '}') {
      ++i_;
      return out;
    }
    for (;;) {
      space();
      const std::string key = string();
      space();
      expect(':');
      out[key] = value();
      space();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      expect('}');
      return out;
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error(where_ + ": " + what); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (peek() != '"') {
      if (i_ >= s_.size()) fail("unterminated string");
      if (s_[i_] == '\\') ++i_;
      out += s_[i_++];
    }
    ++i_;
    return out;
  }
  Value value() {
    space();
    Value v;
    if (peek() == '"') {
      v.kind = Value::kString;
      v.text = string();
    } else if (peek() == '[') {
      ++i_;
      v.kind = Value::kArray;
      space();
      if (peek() == ']') {
        ++i_;
        return v;
      }
      for (;;) {
        v.items.push_back(value());
        space();
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect(']');
        break;
      }
    } else {
      char* end = nullptr;
      v.number = std::strtod(s_.c_str() + i_, &end);
      if (end == s_.c_str() + i_) fail("expected a number, string or list");
      i_ = static_cast<std::size_t>(end - s_.c_str());
    }
    return v;
  }

  const std::string& s_;
  std::string where_;
  std::size_t i_ = 0;
};

}  // namespace

std::string trace_to_jsonl(const Trace& t) {
  std::ostringstream out;
  out.precision(17);
  out << "{\"fabricsim_trace\": 1, \"ranks\": " << t.ranks << ", \"achieved_tflops\": " << t.achieved_flops * 1e-12;
  if (!t.compute_model.empty()) out << ", \"compute_model\": \"" << escape(t.compute_model) << "\"";
  out << "}\n";
  for (int r = 0; r < t.ranks; ++r) {
    for (const TraceOp& op : t.ops[static_cast<std::size_t>(r)]) {
      out << "{\"rank\": " << r << ", \"id\": " << op.id << ", \"kind\": \"" << kind_name(op.kind) << "\"";
      switch (op.kind) {
        case TraceOpKind::kCompute:
          if (op.flops > 0) {
            out << ", \"flops\": " << op.flops;
          } else {
            out << ", \"duration_us\": " << static_cast<double>(op.duration) * 1e-6;
          }
          break;
        case TraceOpKind::kCollective:
          out << ", \"op\": \"" << op_name(op.op) << "\", \"bytes\": " << op.bytes << ", \"key\": \"" << escape(t.key(op)) << "\"";
          if (op.algorithm != 0) out << ", \"algorithm\": \"" << escape(t.algorithm(op)) << "\"";
          ints(out, "group", t.group(op));
          break;
        case TraceOpKind::kSend:
        case TraceOpKind::kRecv: out << ", \"peer\": " << op.peer << ", \"bytes\": " << op.bytes << ", \"tag\": " << op.tag; break;
      }
      ints(out, "deps", t.deps(r, op));
      if (op.label != 0) out << ", \"label\": \"" << escape(t.label(op)) << "\"";
      out << "}\n";
    }
  }
  return out.str();
}

void write_trace(const Trace& trace, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << trace_to_jsonl(trace);
    if (!f) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
}

Trace read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_trace(text.str(), path);
}

Trace parse_trace(const std::string& text, const std::string& name) {
  Trace t;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = name + ":" + std::to_string(number);
    auto obj = LineParser(line, where).object();
    const auto num = [&](const char* key, std::optional<double> fallback = std::nullopt) {
      const auto it = obj.find(key);
      if (it == obj.end()) {
        if (fallback) return *fallback;
        throw std::runtime_error(where + ": missing \"" + key + "\"");
      }
      if (it->second.kind != Value::kNumber) throw std::runtime_error(where + ": \"" + key + "\" should be a number");
      return it->second.number;
    };
    const auto str = [&](const char* key, const std::string& fallback = "") {
      const auto it = obj.find(key);
      if (it == obj.end()) return fallback;
      if (it->second.kind != Value::kString) throw std::runtime_error(where + ": \"" + key + "\" should be a string");
      return it->second.text;
    };
    const auto list = [&](const char* key) {
      std::vector<int> out;
      const auto it = obj.find(key);
      if (it == obj.end()) return out;
      if (it->second.kind != Value::kArray) throw std::runtime_error(where + ": \"" + key + "\" should be a list");
      for (const Value& v : it->second.items) out.push_back(static_cast<int>(v.number));
      return out;
    };
    if (!header) {
      if (num("fabricsim_trace", -1.0) != 1) throw std::runtime_error(where + ": expected the header {\"fabricsim_trace\": 1, \"ranks\": N, ...}");
      t.ranks = static_cast<int>(num("ranks"));
      if (t.ranks < 1) throw std::runtime_error(where + ": ranks must be at least 1");
      t.achieved_flops = num("achieved_tflops", 0.0) * 1e12;
      t.compute_model = str("compute_model");
      t.set_ranks(t.ranks);
      header = true;
      continue;
    }
    const int rank = static_cast<int>(num("rank"));
    if (rank < 0 || rank >= t.ranks) throw std::runtime_error(where + ": rank out of range");
    TraceOp op;
    op.id = static_cast<int>(num("id"));
    const std::string kind = str("kind");
    // A number in [lo, hi]: not NaN, not negative where that has no meaning, and small
    // enough to stay exact as picoseconds or bytes.
    const auto bounded = [&](const char* key, double lo, double hi, std::optional<double> fallback = std::nullopt) {
      const double v = fallback ? num(key, *fallback) : num(key);
      if (!(v >= lo && v <= hi)) {
        throw std::runtime_error(where + ": \"" + key + "\" should be a number from " + std::to_string(lo) + " to " +
                                 std::to_string(hi));
      }
      return v;
    };
    if (kind == "compute") {
      op.kind = TraceOpKind::kCompute;
      op.flops = bounded("flops", 0.0, 1e21, 0.0);
      // At most about 106 days, what int64 picoseconds hold.
      op.duration = static_cast<Time>(std::llround(bounded("duration_us", 0.0, 9e12, 0.0) * 1e6));
      if (op.flops <= 0 && op.duration <= 0 && !obj.count("duration_us")) throw std::runtime_error(where + ": compute needs duration_us or flops");
    } else if (kind == "collective") {
      op.kind = TraceOpKind::kCollective;
      const std::string o = str("op");
      // Point-to-point is a send/recv pair in a trace, not a collective.
      const auto parsed = op_from_name(o);
      if (!parsed || *parsed == CollectiveOp::kSendRecv) throw std::runtime_error(where + ": unknown collective op '" + o + "'");
      op.op = *parsed;
      op.bytes = static_cast<std::int64_t>(bounded("bytes", 1.0, 1125899906842624.0));  // 1 B to 1 PiB
      const std::string key = str("key");
      const std::vector<int> group = list("group");
      if (key.empty() || group.size() < 2) throw std::runtime_error(where + ": a collective needs a key and a group of at least two ranks");
      op.key = t.key_id(key);
      op.algorithm = t.name_id(str("algorithm"));
      op.group = t.group_id(group);
    } else if (kind == "send" || kind == "recv") {
      op.kind = kind == "send" ? TraceOpKind::kSend : TraceOpKind::kRecv;
      op.peer = static_cast<int>(num("peer"));
      op.bytes = static_cast<std::int64_t>(bounded("bytes", 1.0, 1125899906842624.0));
      op.tag = static_cast<int>(num("tag", 0.0));
    } else {
      throw std::runtime_error(where + ": kind should be compute, collective, send or recv");
    }
    op.label = t.name_id(str("label"));
    t.add(rank, op, list("deps"));
  }
  if (!header) throw std::runtime_error(name + ": empty trace");
  return t;
}

std::string check_trace(const Trace& t) {
  // By key: its group, the ranks seen so far; its operation and size.
  std::map<std::uint32_t, std::pair<std::uint32_t, std::set<int>>> collectives;
  std::map<std::tuple<int, int, int>, std::pair<int, int>> p2p;                  // (src, dst, tag) -> sends, recvs
  // Matched in order per (src, dst, tag): the n-th send's bytes and the n-th receive's.
  std::map<std::tuple<int, int, int>, std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> p2p_bytes;
  std::map<std::uint32_t, std::pair<CollectiveOp, std::int64_t>> collective_sizes;
  for (int r = 0; r < t.ranks; ++r) {
    std::set<int> ids;
    for (const TraceOp& op : t.ops[static_cast<std::size_t>(r)]) {
      if (!ids.insert(op.id).second) return "rank " + std::to_string(r) + ": operation id " + std::to_string(op.id) + " used twice";
    }
    // A dependency cycle never runs (Kahn's count of what can run).
    {
      const auto& ops = t.ops[static_cast<std::size_t>(r)];
      std::map<int, std::size_t> index;
      for (std::size_t i = 0; i < ops.size(); ++i) index[ops[i].id] = i;
      std::vector<int> waiting(ops.size(), 0);
      std::vector<std::vector<std::size_t>> children(ops.size());
      for (std::size_t i = 0; i < ops.size(); ++i) {
        for (int d : t.deps(r, ops[i])) {
          const auto it = index.find(d);
          if (it == index.end()) continue;  // reported below
          ++waiting[i];
          children[it->second].push_back(i);
        }
      }
      std::vector<std::size_t> ready;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        if (waiting[i] == 0) ready.push_back(i);
      }
      std::size_t ran = 0;
      while (!ready.empty()) {
        const std::size_t i = ready.back();
        ready.pop_back();
        ++ran;
        for (std::size_t c : children[i]) {
          if (--waiting[c] == 0) ready.push_back(c);
        }
      }
      if (ran < ops.size()) {
        for (std::size_t i = 0; i < ops.size(); ++i) {
          if (waiting[i] > 0) return "rank " + std::to_string(r) + " op " + std::to_string(ops[i].id) + " is in a dependency cycle: it can never run";
        }
      }
    }
    for (const TraceOp& op : t.ops[static_cast<std::size_t>(r)]) {
      for (int d : t.deps(r, op)) {
        if (!ids.count(d)) return "rank " + std::to_string(r) + " op " + std::to_string(op.id) + " depends on unknown op " + std::to_string(d);
      }
      if (op.kind == TraceOpKind::kCollective) {
        const auto [size, fresh] = collective_sizes.try_emplace(op.key, op.op, op.bytes);
        if (!fresh && (size->second.first != op.op || size->second.second != op.bytes)) {
          return "collective '" + t.key(op) + "' has a different operation or size on rank " + std::to_string(r);
        }
        auto& [group, seen] = collectives.try_emplace(op.key, op.group, std::set<int>{}).first->second;
        if (group != op.group) return "collective '" + t.key(op) + "' has different groups on different ranks";
        const std::vector<int>& members = t.group(op);
        if (std::find(members.begin(), members.end(), r) == members.end()) return "rank " + std::to_string(r) + " is not in the group of collective '" + t.key(op) + "'";
        seen.insert(r);
      }
      if ((op.kind == TraceOpKind::kSend || op.kind == TraceOpKind::kRecv) && (op.peer < 0 || op.peer >= t.ranks || op.peer == r)) {
        return "rank " + std::to_string(r) + " op " + std::to_string(op.id) + ": peer out of range";
      }
      if (op.kind == TraceOpKind::kSend) {
        ++p2p[{r, op.peer, op.tag}].first;
        p2p_bytes[{r, op.peer, op.tag}].first.push_back(op.bytes);
      }
      if (op.kind == TraceOpKind::kRecv) {
        ++p2p[{op.peer, r, op.tag}].second;
        p2p_bytes[{op.peer, r, op.tag}].second.push_back(op.bytes);
      }
    }
  }
  for (const auto& [key, v] : collectives) {
    if (v.second.size() != t.groups[v.first].size()) return "collective '" + t.keys[key] + "' is missing on some of its group";
  }
  for (const auto& [k, v] : p2p) {
    if (v.first != v.second) {
      return std::to_string(v.first) + " sends but " + std::to_string(v.second) + " receives from rank " + std::to_string(std::get<0>(k)) +
             " to rank " + std::to_string(std::get<1>(k)) + " with tag " + std::to_string(std::get<2>(k));
    }
    const auto& [sent, received] = p2p_bytes[k];
    for (std::size_t n = 0; n < sent.size(); ++n) {
      if (sent[n] != received[n]) {
        return "send " + std::to_string(n + 1) + " from rank " + std::to_string(std::get<0>(k)) + " to rank " + std::to_string(std::get<1>(k)) +
               " with tag " + std::to_string(std::get<2>(k)) + " is " + std::to_string(sent[n]) + " bytes, its receive " +
               std::to_string(received[n]);
      }
    }
  }
  return {};
}

}  // namespace fabricsim
