#pragma once
// Data checking: every chunk slot of every rank holds the set of ranks whose
// contributions it carries (a bitset). Sends snapshot it, receives replace or reduce
// into it (reducing a contribution twice is an error on the spot), and at the end the
// operation's meaning is checked slot by slot.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workloads/collectives/collective.h"
#include "workloads/collectives/collective_matching.h"

namespace fabricsim {

class ContributionSet {
 public:
  ContributionSet() = default;
  explicit ContributionSet(int ranks) : words_((static_cast<std::size_t>(ranks) + 63) / 64, 0) {}
  void add(int r) { words_[static_cast<std::size_t>(r) / 64] |= std::uint64_t{1} << (r % 64); }
  bool has(int r) const { return (words_[static_cast<std::size_t>(r) / 64] >> (r % 64)) & 1u; }
  // Adds `other`; returns a rank present in both (a duplicate contribution), or -1.
  int merge(const ContributionSet& other);
  bool operator==(const ContributionSet&) const = default;
  std::string describe(int ranks) const;  // e.g. "{0,2,5}"
  bool empty() const;

 private:
  std::vector<std::uint64_t> words_;
};

class DataState {
 public:
  // The operation's starting contents for every rank's slots.
  explicit DataState(const CollectiveProgram& program);

  std::vector<ContributionSet> read(int rank, int first, int count) const;
  // Writes (or reduces) `data` into rank's slots; returns an error message on a duplicate.
  std::optional<std::string> write(int rank, int first, const std::vector<ContributionSet>& data, bool reduce);
  std::optional<std::string> local(int rank, const Step& step);
  // Checks the end state against the operation: the first wrong rank, slot and what it
  // holds against what it should, or nullopt.
  std::optional<std::string> verify() const;

 private:
  ContributionSet& slot(int rank, int s) { return slots_[static_cast<std::size_t>(rank) * program_->slots + s]; }
  const ContributionSet& slot(int rank, int s) const { return slots_[static_cast<std::size_t>(rank) * program_->slots + s]; }
  const CollectiveProgram* program_;
  std::vector<ContributionSet> slots_;
};

// Before a run: sends and receives match per (sender, receiver, channel) in count and
// size, dependencies point backwards-free (an acyclic graph, checked across ranks
// through the matches), slots are in range; then a symbolic run in dependency order
// checks the data. Returns the first problem found; with none, `matching` (if given) gets
// the matches, so a caller that runs the program need not work them out again.
std::optional<std::string> check_program(const CollectiveProgram& program, bool check_data = true,
                                         ProgramMatching* matching = nullptr);

// Hands `data` to receive `to` (in flight): replaces what it had, or for an in-switch sum
// (`add`) adds it; an error names a contribution that arrives twice.
std::optional<std::string> deliver(std::map<StepRef, std::vector<ContributionSet>>& in_flight, StepRef to,
                                   std::vector<ContributionSet> data, bool add);

}  // namespace fabricsim
