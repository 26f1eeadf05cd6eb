#pragma once
// Recorders: read a finished ScenarioRun and write what users read. The model never
// changes when the recording does.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "app/output/collective_report.h"
#include "app/output/json_writer.h"
#include "app/scenario/scenario.h"

namespace fabricsim {

// results.json: run facts, one record per message and one per link direction.
// Deterministic for a given config and seed except `wall_seconds`.
std::string results_json(const ScenarioRun& run);
// The same into `path`, streamed (atomically, as write_file_atomically).
void write_results_file(const std::string& path, const ScenarioRun& run);

// Link direction `i`'s utilization over the run (busy time, or at flow fidelity the bytes
// carried, over what the simulated time allowed).
double link_utilization(const ScenarioRun& run, std::size_t i);


// A few lines for a person at a terminal.
void print_summary(std::ostream& out, const ScenarioRun& run, const std::string& results_path);

// Writes to a temporary file beside `path`, then renames: readers see the old file or
// the whole new one, never half. Creates missing parent directories.
void write_file_atomically(const std::string& path, const std::string& content);
// The same with the content streamed by `write` (an exception removes the temporary file).
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);
// A name as a folder name: letters, digits, '-', '_' and inner '.' kept, anything else
// (a '/', a leading '.') made '_', so a config's name or a sweep's value cannot leave
// the folder it is put in.
std::string folder_name(const std::string& name);

// This process's peak resident memory so far, in bytes (0 where the system does not say).
std::uint64_t peak_memory_bytes();

const char* stop_reason_name(StopReason r);

// A config's hash as results.json writes it (16 hex digits).
std::string config_hash_text(std::uint64_t hash);

// The deadlock cycle as "switch:port" hops, each waiting on the next (empty without one).
std::vector<std::string> deadlock_cycle(const ScenarioRun& run);

}  // namespace fabricsim
