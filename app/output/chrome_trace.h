#pragma once
// A timeline of a run for trace viewers (Perfetto UI, chrome://tracing): Chrome
// trace-event JSON, streamed to FILE.partial as the run goes and renamed when done.
//   - per endpoint: compute, communication operations and collective steps as slices,
//     overlapping ones on separate lanes so that each track's slices never cross; a
//     step's args: its bytes, peer rank, step number and channel;
//   - a message workload's messages: a slice per message at its source (posted to its
//     last ack; args: bytes, source, destination, delivery), a flow arrow to its
//     arrival at the destination;
//   - per link direction: busy periods and PFC pause periods, coalesced from samples
//     taken every `interval` (the resolution of their edges), and queue depth counters.
// Bounded: only [from, to] is recorded, at most `max_events` events, half of them for
// the endpoints' slices and half for the links' (the rest are counted in
// otherData.events_dropped); unless an interval is given, sampling slows down as a run
// goes long (the interval doubles every 2,048 samples, and each time half of what is
// left of the links' half is spent), so a long run is covered whole. Observing does not change the run: the sampler
// is a monitor (its events neither extend the run nor count as its events).
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/activity.h"
#include "sim/core/event_queue.h"
#include "sim/core/time.h"

namespace fabricsim {

class ScenarioRun;

struct ChromeTraceOptions {
  std::string path;
  Time interval = 10'000'000;  // link sampling: 10 us
  bool fixed_interval = false;  // given: no doubling
  Time from = 0;
  Time to = INT64_MAX;
  std::int64_t max_events = 1'000'000;  // about 80 MB
  bool trace_steps = false;             // collectives' steps inside training traces too
};

class ChromeTraceRecorder final : public ActivityListener, public EventHandler {
 public:
  // Opens FILE.partial; throws std::runtime_error when it cannot.
  ChromeTraceRecorder(ChromeTraceOptions options, ScenarioRun& run);
  ChromeTraceRecorder(const ChromeTraceRecorder&) = delete;
  ChromeTraceRecorder& operator=(const ChromeTraceRecorder&) = delete;

  // Attaches to the run's workload and starts sampling links; before ScenarioRun::run.
  void start();
  // After the run: closes open periods at the run's end, names the tracks, renames the file.
  void finish();

  bool wants_trace_steps() const override { return options_.trace_steps; }
  void on_activity(HostId endpoint, Activity kind, std::string_view what, Time begin, Time end,
                   const ActivityDetail& detail) override;
  void on_event() override;  // a link sample

  std::int64_t events_written() const { return written_; }
  std::int64_t events_dropped() const { return dropped_; }
  // When the links' half of the bound ran out (-1: it did not): their tracks stop there.
  Time links_cut_at() const { return links_cut_at_; }

 private:
  // A coalesced busy or paused period of one link direction. Its edges are known to the
  // sampling interval: it starts as late as its first interval's amount allows and ends
  // as early as its last one's does.
  struct Period {
    Time begin = -1;  // -1: none open
    Time first_sample = 0;
    Time last_interval_start = 0;  // of the last interval with any
    Time last_sample = 0;
    Time last_amount = 0;
    Time total = 0;
    Time end() const { return first_sample == last_sample ? last_sample : last_interval_start + last_amount; }
  };
  struct DirectionState {
    Time busy = 0;    // cumulative counters at the last sample
    Time paused = 0;
    std::int64_t queue = 0;  // last queue depth written
    Period busy_period;
    Period pause_period;
    bool named_busy = false, named_pause = false;
  };
  struct EndpointTracks {
    std::vector<Time> lanes[3];  // per Activity kind: each lane's last end
    std::vector<Time> sent_lanes, received_lanes;  // a message workload's messages
    bool named = false;
  };
  // A message workload (no collective or trace to report activities): each kept message
  // as a slice at its source from posting to its last ack, with its bytes, ends and
  // delivery as args, and a flow arrow to a slice at its destination at delivery.
  void write_messages();
  void sample(Time now);
  void close_period(Period& p, int pid, std::size_t direction, const char* name, Time latest);
  void slice(bool link, int pid, int tid, std::string_view name, Time begin, Time end, std::string_view args = {});
  bool admit(bool link);  // counts one event against its half of the bound
  void write(const std::string& line);
  std::string direction_name(std::size_t d) const;

  ChromeTraceOptions options_;
  ScenarioRun* run_;
  std::unique_ptr<std::ofstream> out_;
  bool first_ = true;
  bool sampling_ = false;
  bool baseline_taken_ = false;  // the first sample only reads the counters
  Time last_sample_ = 0;
  std::int64_t written_ = 0;
  std::int64_t written_by_links_ = 0;
  Time links_cut_at_ = -1;
  std::int64_t samples_ = 0;
  Time interval_ = 0;  // now
  Time first_interval_ = 0;
  std::int64_t next_coarsening_ = 0;  // link events written at which the interval doubles
  std::int64_t dropped_ = 0;
  std::mutex activity_mutex_;
  std::vector<DirectionState> directions_;
  std::vector<EndpointTracks> endpoints_;
};

}  // namespace fabricsim
