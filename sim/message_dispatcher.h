#pragma once
// Routes what NICs report about messages to whoever made each message (the sender's and
// the receiver's agents), so several collectives and transfers share one network; and
// records the times in the message table (records are kept here, not by the NICs). A
// finished message's record slot is then free for a later message. Each message names
// its two agents in its record: in a run split over threads, each side's partition
// reports its side, and nothing here is shared but the record.

#include <functional>

#include "sim/message.h"

namespace fabricsim {

class MessageDispatcher final : public MessageObserver {
 public:
  explicit MessageDispatcher(MessageTable* records) : records_(records) {}
  // What happens at the source (sent, finished) goes to `sender`; what happens at the
  // destination (delivered) to `receiver`: each side's agent hears only its own events.
  void assign(MessageId id, MessageObserver* sender, MessageObserver* receiver) {
    Message& m = (*records_)[id];
    m.sender_observer = sender;
    m.receiver_observer = receiver;
  }
  void assign(MessageId id, MessageObserver* owner) { assign(id, owner, owner); }
  void on_message_finished(MessageId id, Time now) override {
    (*records_)[id].finished = now;
    if (tap_) tap_->on_message_finished(id, now);
    if (MessageObserver* o = (*records_)[id].sender_observer) o->on_message_finished(id, now);
    release_when_done(id);
  }
  // Told of every finished and delivered message before its owner (a recorder: it only reads).
  void set_tap(MessageObserver* tap) { tap_ = tap; }
  // Told when a receive opened for another process's sender is complete.
  void set_on_remote_delivered(std::function<void(const Message&)> f) { on_remote_delivered_ = std::move(f); }
  void on_message_delivered(MessageId id, Time now) override {
    (*records_)[id].delivered = now;
    if (tap_) tap_->on_message_delivered(id, now);
    if (MessageObserver* o = (*records_)[id].receiver_observer) o->on_message_delivered(id, now);
    // An ordinary message is delivered before it can finish (its last ack answers the
    // last packet); an in-network one may be delivered after its sender is done with it,
    // and a receive opened for another process's sender has no sender side here.
    const Message& m = (*records_)[id];
    if (m.in_network != InNetwork::kNone || !m.has_sender) {
      if (m.in_network == InNetwork::kNone && on_remote_delivered_) on_remote_delivered_(m);
      release_when_done(id);
    }
  }
  void on_message_sent(MessageId id, Time now) override {
    if (MessageObserver* o = (*records_)[id].sender_observer) o->on_message_sent(id, now);
  }
  void on_message_started(MessageId id, Time now) override {
    if (MessageObserver* o = (*records_)[id].sender_observer) o->on_message_started(id, now);
  }

 private:
  // A record is free once each side it has is done with it.
  void release_when_done(MessageId id) {
    // Kept records are never released (and a split run's two sides may write them at once).
    if (!records_->recyclable(id)) return;
    const Message& m = (*records_)[id];
    if ((m.finished >= 0 || !m.has_sender) && (m.delivered >= 0 || !m.awaits_delivery)) records_->release(id);
  }
  MessageObserver* tap_ = nullptr;
  std::function<void(const Message&)> on_remote_delivered_;
  MessageTable* records_;
};

}  // namespace fabricsim
