#include "workloads/traces/chakra/chakra_import.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>

#include "chakra_et.pb.h"

namespace fabricsim {
namespace {

namespace pb = ::fabricsim::chakra;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::IstreamInputStream;
using google::protobuf::io::OstreamOutputStream;

bool read_delimited(CodedInputStream& in, google::protobuf::Message& msg) {
  std::uint32_t size = 0;
  if (!in.ReadVarint32(&size)) return false;
  const auto limit = in.PushLimit(static_cast<int>(size));
  // Partial parsing and our own completeness check: protobuf's full parse prints an ERROR
  // line of its own to stderr on a corrupt file, besides failing.
  const bool ok = msg.ParsePartialFromCodedStream(&in) && in.ConsumedEntireMessage() && msg.IsInitialized();
  in.PopLimit(limit);
  if (!ok) throw std::runtime_error("malformed message");
  return true;
}

void write_delimited(CodedOutputStream& out, const google::protobuf::Message& msg) {
  out.WriteVarint32(static_cast<std::uint32_t>(msg.ByteSizeLong()));
  msg.SerializeWithCachedSizes(&out);
}

std::int64_t int_attr(const pb::Node& n, const std::string& name, std::int64_t fallback) {
  for (const pb::AttributeProto& a : n.attr()) {
    if (a.name() != name) continue;
    switch (a.value_case()) {
      case pb::AttributeProto::kInt64Val: return a.int64_val();
      case pb::AttributeProto::kInt32Val: return a.int32_val();
      case pb::AttributeProto::kUint64Val: return static_cast<std::int64_t>(a.uint64_val());
      case pb::AttributeProto::kUint32Val: return a.uint32_val();
      case pb::AttributeProto::kDoubleVal: return static_cast<std::int64_t>(a.double_val());
      default: break;
    }
  }
  return fallback;
}

std::string string_attr(const pb::Node& n, const std::string& name) {
  for (const pb::AttributeProto& a : n.attr()) {
    if (a.name() == name && a.value_case() == pb::AttributeProto::kStringVal) return a.string_val();
  }
  return {};
}

CollectiveOp comm_op(std::int64_t t, const std::string& where) {
  switch (t) {
    case pb::ALL_REDUCE: return CollectiveOp::kAllReduce;
    case pb::REDUCE: return CollectiveOp::kReduce;
    case pb::ALL_GATHER: return CollectiveOp::kAllGather;
    case pb::BROADCAST: return CollectiveOp::kBroadcast;
    case pb::ALL_TO_ALL: return CollectiveOp::kAllToAll;
    case pb::REDUCE_SCATTER: return CollectiveOp::kReduceScatter;
    default: throw std::runtime_error(where + ": collective type " + std::to_string(t) + " is not supported");
  }
}

pb::AttributeProto int_attribute(const std::string& name, std::int64_t v) {
  pb::AttributeProto a;
  a.set_name(name);
  a.set_int64_val(v);
  return a;
}

}  // namespace

Trace import_chakra(const std::string& prefix, int ranks, const std::map<std::string, std::vector<int>>& process_groups) {
  Trace t;
  t.set_ranks(ranks);
  for (int r = 0; r < ranks; ++r) {
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    std::ifstream file(path, std::ios::binary);
    if (!file) throw std::runtime_error(path + ": cannot read the file");
    IstreamInputStream raw(&file);
    CodedInputStream in(&raw);
    in.SetTotalBytesLimit(INT32_MAX);
    pb::GlobalMetadata meta;
    try {
      if (!read_delimited(in, meta)) throw std::runtime_error("empty file");
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(path + ": global metadata: " + e.what());
    }
    std::map<std::uint64_t, pb::Node> nodes;  // by id: issue order
    pb::Node node;
    for (;;) {
      try {
        if (!read_delimited(in, node)) break;
      } catch (const std::runtime_error& e) {
        throw std::runtime_error(path + ": node after id " + (nodes.empty() ? std::string("(none)") : std::to_string(nodes.rbegin()->first)) + ": " + e.what());
      }
      nodes[node.id()] = node;
    }
    std::map<std::string, int> issued;  // collectives so far, per process group ("": every rank)
    for (const auto& [id, n] : nodes) {
      const std::string where = path + ": node " + std::to_string(id);
      TraceOp op;
      op.id = static_cast<int>(id);
      op.label = t.name_id(n.name());
      std::vector<int> deps;
      for (std::uint64_t d : n.ctrl_deps()) deps.push_back(static_cast<int>(d));
      for (std::uint64_t d : n.data_deps()) deps.push_back(static_cast<int>(d));
      switch (n.type()) {
        case pb::COMP_NODE:
          op.kind = TraceOpKind::kCompute;
          op.duration = us(static_cast<std::int64_t>(n.duration_micros()));
          op.flops = static_cast<double>(int_attr(n, "num_ops", 0));
          break;
        case pb::COMM_COLL_NODE: {
          op.kind = TraceOpKind::kCollective;
          op.op = comm_op(int_attr(n, "comm_type", -1), where);
          op.bytes = int_attr(n, "comm_size", 0);
          std::string pg = string_attr(n, "pg_name");
          std::vector<int> group;
          if (const auto g = process_groups.find(pg); !pg.empty() && g != process_groups.end()) {
            group = g->second;
            if (std::find(group.begin(), group.end(), r) == group.end()) {
              throw std::runtime_error(where + ": rank " + std::to_string(r) + " is not in process group '" + pg + "'");
            }
          } else {
            for (int m = 0; m < ranks; ++m) group.push_back(m);
            pg.clear();
          }
          op.group = t.group_id(group);
          op.process_group = t.name_id(pg);
          op.key = t.key_id("chakra/" + (pg.empty() ? "" : pg + "/") + std::to_string(issued[pg]++));
          break;
        }
        case pb::COMM_SEND_NODE:
        case pb::COMM_RECV_NODE:
          op.kind = n.type() == pb::COMM_SEND_NODE ? TraceOpKind::kSend : TraceOpKind::kRecv;
          op.peer = static_cast<int>(int_attr(n, n.type() == pb::COMM_SEND_NODE ? "comm_dst" : "comm_src", -1));
          op.tag = static_cast<int>(int_attr(n, "comm_tag", 0));
          op.bytes = int_attr(n, "comm_size", 0);
          break;
        default:
          // Memory and metadata nodes take no time here: keep them as joins.
          op.kind = TraceOpKind::kCompute;
          break;
      }
      t.add(r, op, deps);
    }
  }
  return t;
}

void export_chakra(const Trace& trace, const std::string& prefix) {
  for (int r = 0; r < trace.ranks; ++r) {
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (!file) throw std::runtime_error("cannot write " + path);
    {
      OstreamOutputStream raw(&file);
      CodedOutputStream out(&raw);
      pb::GlobalMetadata meta;
      meta.set_version("0.0.4");
      write_delimited(out, meta);
      for (const TraceOp& op : trace.ops[static_cast<std::size_t>(r)]) {
        pb::Node n;
        n.set_id(static_cast<std::uint64_t>(op.id));
        n.set_name(trace.label(op));
        for (int d : trace.deps(r, op)) n.add_data_deps(static_cast<std::uint64_t>(d));
        switch (op.kind) {
          case TraceOpKind::kCompute:
            n.set_type(pb::COMP_NODE);
            n.set_duration_micros(static_cast<std::uint64_t>(trace.compute_time(op) / us(1)));
            break;
          case TraceOpKind::kCollective: {
            n.set_type(pb::COMM_COLL_NODE);
            static const std::map<CollectiveOp, pb::CollectiveCommType> kTypes{
                {CollectiveOp::kAllReduce, pb::ALL_REDUCE}, {CollectiveOp::kReduce, pb::REDUCE},
                {CollectiveOp::kAllGather, pb::ALL_GATHER}, {CollectiveOp::kBroadcast, pb::BROADCAST},
                {CollectiveOp::kAllToAll, pb::ALL_TO_ALL},  {CollectiveOp::kReduceScatter, pb::REDUCE_SCATTER}};
            *n.add_attr() = int_attribute("comm_type", kTypes.at(op.op));
            *n.add_attr() = int_attribute("comm_size", op.bytes);
            if (op.process_group != 0) {
              pb::AttributeProto pg;
              pg.set_name("pg_name");
              pg.set_string_val(trace.process_group(op));
              *n.add_attr() = pg;
            }
            break;
          }
          case TraceOpKind::kSend:
          case TraceOpKind::kRecv:
            n.set_type(op.kind == TraceOpKind::kSend ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
            *n.add_attr() = int_attribute(op.kind == TraceOpKind::kSend ? "comm_dst" : "comm_src", op.peer);
            *n.add_attr() = int_attribute("comm_tag", op.tag);
            *n.add_attr() = int_attribute("comm_size", op.bytes);
            break;
        }
        write_delimited(out, n);
      }
    }
    if (!file) throw std::runtime_error("cannot write " + path);
  }
}

}  // namespace fabricsim
