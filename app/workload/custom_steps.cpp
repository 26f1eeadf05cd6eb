#include "app/workload/custom_steps.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "app/config/yaml_reader.h"
#include "app/config/yaml_safety.h"

namespace fabricsim {

CollectiveProgram load_custom_steps(const std::string& path, std::int64_t bytes) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, "", "cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_custom_steps(text.str(), path, bytes);
}

CollectiveProgram parse_custom_steps(const std::string& text, const std::string& name, std::int64_t bytes) {
  YamlContext ctx(name);
  const YAML::Node root = parse_yaml(text, name);
  MapReader top(ctx, root, "");
  CollectiveProgram p;
  p.name = top.string("name", "custom");
  p.op = top.choice<CollectiveOp>("op", {{"all_reduce", CollectiveOp::kAllReduce}, {"reduce_scatter", CollectiveOp::kReduceScatter},
                                         {"all_gather", CollectiveOp::kAllGather}, {"broadcast", CollectiveOp::kBroadcast},
                                         {"reduce", CollectiveOp::kReduce}, {"all_to_all", CollectiveOp::kAllToAll},
                                         {"send_recv", CollectiveOp::kSendRecv}});
  p.ranks = static_cast<int>(top.integer("ranks", 2, 1 << 16));
  p.chunks = static_cast<int>(top.integer("chunks", 1, 1 << 20));
  p.slots = static_cast<int>(top.integer("slots", p.chunks, 1 << 22, p.chunks));
  p.output_offset = static_cast<int>(top.integer("output_offset", 0, p.slots - p.chunks, 0));
  p.root = static_cast<int>(top.integer("root", 0, p.ranks - 1, 0));
  p.slot_bytes = std::max<std::int64_t>(1, (bytes + p.chunks - 1) / p.chunks);
  p.programs.resize(static_cast<std::size_t>(p.ranks));
  const YAML::Node programs = top.sequence("programs", true);
  std::vector<bool> seen(static_cast<std::size_t>(p.ranks), false);
  for (std::size_t i = 0; i < programs.size(); ++i) {
    MapReader prog(ctx, programs[i], "programs[" + std::to_string(i) + "]");
    const int rank = static_cast<int>(prog.integer("rank", 0, p.ranks - 1));
    if (seen[static_cast<std::size_t>(rank)]) ctx.fail(programs[i]["rank"], prog.child_path("rank"), "expected each rank once, got " + std::to_string(rank) + " again");
    seen[static_cast<std::size_t>(rank)] = true;
    const YAML::Node steps = prog.sequence("steps", true);
    auto& out = p.programs[static_cast<std::size_t>(rank)].steps;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      MapReader st(ctx, steps[k], prog.child_path("steps") + "[" + std::to_string(k) + "]");
      Step s;
      int kinds = 0;
      const auto slot = [&](const char* key) { return static_cast<int>(st.integer(key, 0, p.slots - 1)); };
      if (st.has("send")) { ++kinds; s.kind = StepKind::kSend; s.peer = static_cast<int>(st.integer("send", 0, p.ranks - 1)); s.src = slot("chunk"); }
      if (st.has("recv")) {
        ++kinds;
        s.peer = static_cast<int>(st.integer("recv", 0, p.ranks - 1));
        s.dst = slot("chunk");
        s.kind = st.boolean("reduce", false) ? StepKind::kRecvReduce : StepKind::kRecv;
      }
      if (st.has("copy")) { ++kinds; s.kind = StepKind::kCopy; s.src = slot("copy"); s.dst = slot("to"); }
      if (st.has("add")) { ++kinds; s.kind = StepKind::kReduce; s.src = slot("add"); s.dst = slot("to"); }
      if (st.has("nop")) { ++kinds; s.kind = StepKind::kNop; st.boolean("nop"); }
      if (kinds != 1) ctx.fail(steps[k], st.path(), "expected exactly one of send, recv, copy, add, nop");
      if (s.kind != StepKind::kRecv && s.kind != StepKind::kRecvReduce) st.boolean("reduce", false);
      s.count = static_cast<int>(st.integer("count", 1, p.slots, 1));
      s.channel = static_cast<int>(st.integer("channel", 0, 1 << 20, 0));
      for (std::int64_t d : st.integer_list("after", 0, static_cast<std::int64_t>(steps.size()) - 1, false)) s.deps.push_back(static_cast<int>(d));
      st.finish();
      out.push_back(std::move(s));
    }
    prog.finish();
  }
  top.finish();
  return p;
}

}  // namespace fabricsim
