#pragma once
// What the results keep of individual messages, gathered as each one finishes (message
// slots are reused during a run, so nothing is read back afterwards): the slowest one,
// and, on request (`run --records messages`), one JSON line per message streamed to a
// file as the run goes, in order of finish time, then name (source, sequence). A split run's partitions
// finish messages at once: each gathers into its own buffer (by the sender's partition),
// merged between windows (flush()); a serial run flushes as its clock moves on. So the
// file is the same for any split.
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "sim/message.h"
#include "sim/parallel/process_group.h"

namespace fabricsim {

class ScenarioRun;

struct SlowestMessage {
  std::uint64_t serial = 0;
  HostId src = 0, dst = 0;
  std::int64_t bytes = 0;
  Time took = -1;  // finish - posted; -1 while none finished
  std::uint32_t sequence = 0;  // with src, its name
};

class MessageLog final : public MessageObserver {
 public:
  // `partitions`: how many threads may report at once (one buffer each).
  MessageLog(const ScenarioRun& run, std::size_t partitions);
  ~MessageLog() override;
  // Streams records to `path` (written to path.partial, renamed by finish_records()).
  void record_to(const std::string& path);
  // Writes the records of messages still unfinished and closes the file atomically.
  void finish_records();

  void on_message_finished(MessageId id, Time now) override;
  // A split run: the receiver's partition notes when an ordinary message was delivered, so
  // the sender's record takes it between windows instead of reading another thread's.
  void on_message_delivered(MessageId id, Time now) override;
  // Writes what the buffers hold (a split run calls it between windows: every partition
  // is stopped, and nothing later than what they hold can finish before it).
  void flush();
  SlowestMessage slowest() const;
  // A run split over processes: a message finishes at its sender's process and is
  // delivered at its receiver's, so nothing is kept as it goes; once the processes have
  // pooled the message table (its slots are never reused in such runs), pool_finished()
  // finds the slowest, and finish_records() writes the records in the streamed order.
  void defer_to_end() { deferred_ = true; }
  // Messages below `kept` were made before the run (pooled in the table); later ones were
  // followed at their senders: the slowest of each process's is pooled over `group`.
  void pool_finished(MessageId kept, ProcessGroup* group);
  std::uint64_t records_written() const { return written_; }

 private:
  std::string line(MessageId id, const Message& m) const;
  // The record up to its delivered time's value.
  std::string line_head(MessageId id, const Message& m) const;
  struct Pending {
    Time finished;
    HostId src;
    std::uint32_t sequence;
    std::string line;
    bool awaits_delivered = false;  // `line` is a head: the delivered time comes at flush()
  };
  struct Delivered {
    HostId src;
    std::uint32_t sequence;
    Time at;
  };
  struct Partition {
    SlowestMessage slowest;
    std::vector<Pending> pending;
    std::vector<Delivered> delivered;  // split runs: ordinary messages delivered here
  };

  const ScenarioRun* run_;
  std::vector<Partition> partitions_;
  bool split_ = false;
  bool deferred_ = false;
  std::string path_;
  std::unique_ptr<std::ofstream> out_;
  std::uint64_t written_ = 0;
};

}  // namespace fabricsim
