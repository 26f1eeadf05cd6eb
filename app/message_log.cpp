#include "app/message_log.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "app/scenario.h"
#include "topologies/compile.h"

namespace fabricsim {

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

void MessageLog::write(MessageId id, const Message& m) {
  const Topology& t = run_->topology();
  *out_ << "{\"id\":" << m.serial << ",\"source\":\"" << node_name(t, NodeRef::host(m.src)) << "\",\"destination\":\""
        << node_name(t, NodeRef::host(m.dst)) << "\",\"bytes\":" << m.bytes << ",\"packets\":" << m.packets
        << ",\"start_ps\":" << run_->message_start(id) << ",\"finish_ps\":";
  if (m.finished >= 0) *out_ << m.finished; else *out_ << "null";
  *out_ << ",\"delivered_ps\":";
  if (m.delivered >= 0) *out_ << m.delivered; else *out_ << "null";
  *out_ << "}\n";
  ++written_;
}

void MessageLog::on_message_finished(MessageId id, Time) {
  const Message& m = run_->network().messages()[id];
  const Time took = m.finished - m.posted;
  // Equal times: the first made, whichever finished first (the same for any split).
  if (took > slowest_.took || (took == slowest_.took && m.serial < slowest_.serial)) {
    slowest_ = {m.serial, m.src, m.dst, m.bytes, took};
  }
  if (out_) write(id, m);
}

void MessageLog::read_records() {
  const auto& all = run_->network().messages().all();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].finished >= 0) on_message_finished(static_cast<MessageId>(i), all[i].finished);
  }
}

void MessageLog::finish_records() {
  if (!out_) return;
  const auto& all = run_->network().messages().all();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].finished < 0) write(static_cast<MessageId>(i), all[i]);
  }
  out_->close();
  const bool ok = static_cast<bool>(*out_);
  out_.reset();
  if (!ok) throw std::runtime_error("cannot write " + path_);
  std::filesystem::rename(path_ + ".partial", path_);
}

}  // namespace fabricsim
