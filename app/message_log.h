#pragma once
// What the results keep of individual messages, gathered as each one finishes (message
// slots are reused during a run, so nothing is read back afterwards): the slowest one,
// and, on request (`run --records messages`), one JSON line per message streamed to a
// file as the run goes.
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "sim/message.h"

namespace fabricsim {

class ScenarioRun;

struct SlowestMessage {
  std::uint64_t serial = 0;
  HostId src = 0, dst = 0;
  std::int64_t bytes = 0;
  Time took = -1;  // finish - posted; -1 while none finished
};

class MessageLog final : public MessageObserver {
 public:
  explicit MessageLog(const ScenarioRun& run) : run_(&run) {}
  ~MessageLog() override;
  // Streams records to `path` (written to path.partial, renamed by finish_records()).
  void record_to(const std::string& path);
  // Writes the records of messages still unfinished and closes the file atomically.
  void finish_records();

  void on_message_finished(MessageId id, Time now) override;
  // A split run's log: taken from the kept records after the run (its partitions finish
  // messages at once), as the serial tap would have; refused with --records.
  void read_records();
  const SlowestMessage& slowest() const { return slowest_; }
  std::uint64_t records_written() const { return written_; }

 private:
  void write(MessageId id, const Message& m);

  const ScenarioRun* run_;
  SlowestMessage slowest_;
  std::string path_;
  std::unique_ptr<std::ofstream> out_;
  std::uint64_t written_ = 0;
};

}  // namespace fabricsim
