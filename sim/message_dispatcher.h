#pragma once
// Routes message completions to whoever created each message, so several collectives
// and point-to-point transfers can share one network. Ids are dense: a flat table.
#include <vector>

#include "sim/message.h"

namespace fabricsim {

class MessageDispatcher final : public MessageObserver {
 public:
  void assign(MessageId id, MessageObserver* owner) {
    if (id >= owners_.size()) owners_.resize(static_cast<std::size_t>(id) + 1, nullptr);
    owners_[id] = owner;
  }
  void on_message_finished(MessageId id, Time now) override {
    if (tap_) tap_->on_message_finished(id, now);
    if (id < owners_.size() && owners_[id]) owners_[id]->on_message_finished(id, now);
  }
  // Told of every finished message before its owner (a recorder: it only reads).
  void set_tap(MessageObserver* tap) { tap_ = tap; }
  void on_message_delivered(MessageId id, Time now) override {
    if (id < owners_.size() && owners_[id]) owners_[id]->on_message_delivered(id, now);
  }
  void on_message_sent(MessageId id, Time now) override {
    if (id < owners_.size() && owners_[id]) owners_[id]->on_message_sent(id, now);
  }

 private:
  std::vector<MessageObserver*> owners_;
  MessageObserver* tap_ = nullptr;
};

}  // namespace fabricsim
