#include "workloads/collectives/msccl_xml.h"

#include <cctype>
#include <fstream>
#include <optional>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace fabricsim {
namespace {

// The little XML MSCCL files use: elements with attributes, nesting, comments and
// declarations; no text content, entities or CDATA.
struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<std::unique_ptr<Element>> children;
  int line = 0;
};

class XmlReader {
 public:
  XmlReader(const std::string& text, const std::string& name) : text_(text), name_(name) {}

  std::unique_ptr<Element> document() {
    std::unique_ptr<Element> root;
    while (skip_to_tag()) {
      if (peek("<?") || peek("<!")) {
        skip_special();
        continue;
      }
      if (root) fail("expected one top-level element");
      root = element();
    }
    if (!root) fail("expected an <algo> element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(name_ + ":" + std::to_string(line_) + ": " + what);
  }
  bool peek(const char* s) const { return text_.compare(pos_, std::char_traits<char>::length(s), s) == 0; }
  void advance(std::size_t n = 1) {
    for (std::size_t i = 0; i < n && pos_ < text_.size(); ++i) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) advance();
  }
  // Skips whitespace to the next '<'; text between elements is not allowed.
  bool skip_to_tag() {
    skip_space();
    if (pos_ >= text_.size()) return false;
    if (text_[pos_] != '<') fail("expected '<', got text");
    return true;
  }
  void skip_special() {
    const char* end = peek("<!--") ? "-->" : ">";
    const auto at = text_.find(end, pos_);
    if (at == std::string::npos) fail("unterminated comment or declaration");
    advance(at + std::char_traits<char>::length(end) - pos_);
  }
  std::string name() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' || text_[pos_] == '-')) advance();
    if (pos_ == start) fail("expected a name");
    return text_.substr(start, pos_ - start);
  }
  std::unique_ptr<Element> element() {
    auto e = std::make_unique<Element>();
    e->line = line_;
    advance();  // '<'
    e->name = name();
    for (;;) {
      skip_space();
      if (peek("/>")) {
        advance(2);
        return e;
      }
      if (peek(">")) {
        advance();
        break;
      }
      const std::string key = name();
      skip_space();
      if (!peek("=")) fail("expected '=' after attribute " + key);
      advance();
      skip_space();
      if (!peek("\"") && !peek("'")) fail("expected a quoted value for attribute " + key);
      const char quote = text_[pos_];
      advance();
      const auto end = text_.find(quote, pos_);
      if (end == std::string::npos) fail("unterminated value of attribute " + key);
      e->attrs[key] = text_.substr(pos_, end - pos_);
      advance(end + 1 - pos_);
    }
    for (;;) {
      if (!skip_to_tag()) fail("expected </" + e->name + ">");
      if (peek("<!--")) {
        skip_special();
        continue;
      }
      if (peek("</")) {
        advance(2);
        const std::string closing = name();
        if (closing != e->name) fail("expected </" + e->name + ">, got </" + closing + ">");
        skip_space();
        if (!peek(">")) fail("expected '>'");
        advance();
        return e;
      }
      e->children.push_back(element());
    }
  }

  const std::string& text_;
  std::string name_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

int attr_int(const Element& e, const std::string& key, const std::string& name, std::optional<int> fallback = std::nullopt) {
  const auto it = e.attrs.find(key);
  if (it == e.attrs.end()) {
    if (fallback) return *fallback;
    throw std::runtime_error(name + ":" + std::to_string(e.line) + ": <" + e.name + "> needs attribute " + key);
  }
  try {
    std::size_t used = 0;
    const int v = std::stoi(it->second, &used);
    if (used != it->second.size()) throw std::invalid_argument("trailing");
    return v;
  } catch (const std::exception&) {
    throw std::runtime_error(name + ":" + std::to_string(e.line) + ": attribute " + key + " of <" + e.name +
                             "> should be an integer, got '" + it->second + "'");
  }
}

std::string attr(const Element& e, const std::string& key, const std::string& fallback = "") {
  const auto it = e.attrs.find(key);
  return it == e.attrs.end() ? fallback : it->second;
}

}  // namespace

CollectiveProgram load_msccl_xml(const std::string& path, std::int64_t bytes) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_msccl_xml(text.str(), path, bytes);
}

CollectiveProgram parse_msccl_xml(const std::string& text, const std::string& name, std::int64_t bytes) {
  XmlReader reader(text, name);
  const auto root = reader.document();
  const auto where = [&](const Element& e) { return name + ":" + std::to_string(e.line) + ": "; };
  if (root->name != "algo") throw std::runtime_error(where(*root) + "expected <algo>, got <" + root->name + ">");
  CollectiveProgram p;
  p.name = attr(*root, "name", "msccl");
  p.ranks = attr_int(*root, "ngpus", name);
  p.chunks = attr_int(*root, "nchunksperloop", name);
  if (p.ranks < 2 || p.chunks < 1) throw std::runtime_error(where(*root) + "ngpus must be at least 2 and nchunksperloop at least 1");
  static const std::map<std::string, CollectiveOp> kColl{{"allreduce", CollectiveOp::kAllReduce},
                                                          {"allgather", CollectiveOp::kAllGather},
                                                          {"reducescatter", CollectiveOp::kReduceScatter},
                                                          {"alltoall", CollectiveOp::kAllToAll},
                                                          {"broadcast", CollectiveOp::kBroadcast},
                                                          {"reduce", CollectiveOp::kReduce}};
  const std::string coll = attr(*root, "coll", "allreduce");
  if (!kColl.count(coll)) throw std::runtime_error(where(*root) + "unknown coll '" + coll + "'");
  p.op = kColl.at(coll);
  p.programs.resize(static_cast<std::size_t>(p.ranks));

  // Slot layout per rank: input, output, scratch, then hidden slots for rrs.
  struct Layout {
    int i = 0, o = 0, s = 0, hidden = 0;
  };
  std::vector<Layout> layout(static_cast<std::size_t>(p.ranks));
  std::vector<const Element*> gpus(static_cast<std::size_t>(p.ranks), nullptr);
  for (const auto& g : root->children) {
    if (g->name != "gpu") throw std::runtime_error(where(*g) + "expected <gpu>, got <" + g->name + ">");
    const int id = attr_int(*g, "id", name);
    if (id < 0 || id >= p.ranks) throw std::runtime_error(where(*g) + "gpu id " + std::to_string(id) + " out of range");
    if (gpus[static_cast<std::size_t>(id)]) throw std::runtime_error(where(*g) + "gpu " + std::to_string(id) + " given twice");
    gpus[static_cast<std::size_t>(id)] = g.get();
    Layout& l = layout[static_cast<std::size_t>(id)];
    l.i = attr_int(*g, "i_chunks", name, 0);
    l.o = attr_int(*g, "o_chunks", name, 0);
    l.s = attr_int(*g, "s_chunks", name, 0);
    for (const auto& tb : g->children) {
      for (const auto& st : tb->children) {
        if (attr(*st, "type") == "rrs") l.hidden += attr_int(*st, "cnt", name, 1);
      }
    }
  }
  for (int r = 0; r < p.ranks; ++r) {
    if (!gpus[static_cast<std::size_t>(r)]) throw std::runtime_error(where(*root) + "no <gpu id=\"" + std::to_string(r) + "\">");
  }
  int slots = 0;
  for (const Layout& l : layout) slots = std::max(slots, l.i + l.o + l.s + l.hidden);
  p.slots = slots;
  const Layout& l0 = layout[0];
  p.input_offset = 0;
  p.output_offset = l0.o > 0 ? l0.i : 0;
  p.input_is_own_segment = p.op == CollectiveOp::kAllGather && l0.i * p.ranks == p.chunks;
  p.output_is_own_segment = p.op == CollectiveOp::kReduceScatter && l0.o * p.ranks == p.chunks;
  p.slot_bytes = std::max<std::int64_t>(1, (bytes + p.chunks - 1) / p.chunks);

  for (int r = 0; r < p.ranks; ++r) {
    const Element& g = *gpus[static_cast<std::size_t>(r)];
    const Layout& l = layout[static_cast<std::size_t>(r)];
    auto& steps = p.programs[static_cast<std::size_t>(r)].steps;
    int hidden_next = l.i + l.o + l.s;
    const auto slot = [&](const Element& st, const std::string& buf, int off, int cnt) {
      int base = 0, size = 0;
      if (buf == "i") { base = 0; size = l.i; }
      else if (buf == "o") { base = l.i; size = l.o; }
      else if (buf == "s") { base = l.i + l.o; size = l.s; }
      else throw std::runtime_error(where(st) + "unknown buffer '" + buf + "' (expected i, o or s)");
      if (off < 0 || off + cnt > size) {
        throw std::runtime_error(where(st) + "chunks " + std::to_string(off) + ".." + std::to_string(off + cnt - 1) +
                                 " are outside buffer " + buf + " of " + std::to_string(size) + " chunks");
      }
      return base + off;
    };
    // (tb, step) -> this rank's program index of the step's last part.
    std::map<std::pair<int, int>, int> done_at;
    std::vector<std::pair<std::pair<int, int>, std::pair<int, int>>> cross;  // step first part <- (depid, deps)
    for (const auto& tb : g.children) {
      if (tb->name != "tb") throw std::runtime_error(where(*tb) + "expected <tb>, got <" + tb->name + ">");
      const int tb_id = attr_int(*tb, "id", name);
      const int send_to = attr_int(*tb, "send", name, -1);
      const int recv_from = attr_int(*tb, "recv", name, -1);
      const int chan = attr_int(*tb, "chan", name, 0);
      int previous = -1;
      for (const auto& st : tb->children) {
        if (st->name != "step") throw std::runtime_error(where(*st) + "expected <step>, got <" + st->name + ">");
        const int s_index = attr_int(*st, "s", name);
        const std::string type = attr(*st, "type");
        const int cnt = attr_int(*st, "cnt", name, 1);
        const auto add = [&](Step step) {
          if (previous >= 0) step.deps.push_back(previous);
          steps.push_back(std::move(step));
          previous = static_cast<int>(steps.size()) - 1;
          return previous;
        };
        const int first = static_cast<int>(steps.size());
        const auto need = [&](int peer, const char* what) {
          if (peer < 0) throw std::runtime_error(where(*st) + "step type " + type + " needs a tb with a " + what + " peer");
          return peer;
        };
        const auto src = [&] { return slot(*st, attr(*st, "srcbuf"), attr_int(*st, "srcoff", name), cnt); };
        const auto dst = [&] { return slot(*st, attr(*st, "dstbuf"), attr_int(*st, "dstoff", name), cnt); };
        Step s;
        s.count = cnt;
        s.channel = chan;
        if (type == "s") {
          s.kind = StepKind::kSend; s.peer = need(send_to, "send"); s.src = src(); add(s);
        } else if (type == "r") {
          s.kind = StepKind::kRecv; s.peer = need(recv_from, "recv"); s.dst = dst(); add(s);
        } else if (type == "rrc" || type == "rrcs") {
          const int from = src(), to = dst();
          if (from != to) { Step c = s; c.kind = StepKind::kCopy; c.src = from; c.dst = to; add(c); }
          s.kind = StepKind::kRecvReduce; s.peer = need(recv_from, "recv"); s.dst = to; add(s);
          if (type == "rrcs") { Step f = s; f.kind = StepKind::kSend; f.peer = need(send_to, "send"); f.src = to; f.deps.clear(); add(f); }
        } else if (type == "rrs") {
          const int temp = hidden_next;
          hidden_next += cnt;
          Step c = s; c.kind = StepKind::kCopy; c.src = src(); c.dst = temp; add(c);
          s.kind = StepKind::kRecvReduce; s.peer = need(recv_from, "recv"); s.dst = temp; add(s);
          Step f = s; f.kind = StepKind::kSend; f.peer = need(send_to, "send"); f.src = temp; f.deps.clear(); add(f);
        } else if (type == "rcs") {
          s.kind = StepKind::kRecv; s.peer = need(recv_from, "recv"); s.dst = dst(); add(s);
          Step f = s; f.kind = StepKind::kSend; f.peer = need(send_to, "send"); f.src = s.dst; f.deps.clear(); add(f);
        } else if (type == "cpy" || type == "re") {
          s.kind = type == "cpy" ? StepKind::kCopy : StepKind::kReduce; s.src = src(); s.dst = dst(); add(s);
        } else if (type == "nop") {
          s.kind = StepKind::kNop; add(s);
        } else {
          throw std::runtime_error(where(*st) + "unknown step type '" + type + "' (expected s, r, rrc, rrs, rcs, rrcs, cpy, re or nop)");
        }
        done_at[{tb_id, s_index}] = previous;
        const int depid = attr_int(*st, "depid", name, -1);
        const int deps = attr_int(*st, "deps", name, -1);
        if (depid >= 0) cross.push_back({{first, 0}, {depid, deps}});
      }
    }
    for (const auto& [at, dep] : cross) {
      const auto it = done_at.find(dep);
      if (it == done_at.end()) {
        throw std::runtime_error(where(g) + "gpu " + std::to_string(r) + " depends on tb " + std::to_string(dep.first) +
                                 " step " + std::to_string(dep.second) + ", which does not exist");
      }
      steps[static_cast<std::size_t>(at.first)].deps.push_back(it->second);
    }
  }
  return p;
}

}  // namespace fabricsim
