#pragma once
// The processes of one run split over several (MPI ranks, `mpirun -np N fabricsim run`):
// what the parallel engine and the monitors need of them, and nothing of MPI itself. The
// MPI implementation is a plugin the app loads only when mpirun started it
// (app/mpi/), so the simulator core and the plain executable never link MPI.
//
// Every call is collective: each process makes the same calls in the same order.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace fabricsim {

using Bytes = std::string;  // an opaque buffer

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sends out[r] to process r (out.size() == size()); returns what each process sent
  // this one, by sender.
  virtual std::vector<Bytes> exchange(const std::vector<Bytes>& out) = 0;
  // `root`'s `data`, returned on every other process (their `data` is not read; the
  // root gets nothing back). By default an exchange; MPI broadcasts, so the root holds
  // no copy per receiver.
  virtual Bytes broadcast(int root, const Bytes& data) {
    std::vector<Bytes> out(static_cast<std::size_t>(size()));
    if (rank() == root) std::fill(out.begin(), out.end(), data);
    Bytes in = std::move(exchange(out)[static_cast<std::size_t>(root)]);
    return rank() == root ? Bytes() : in;
  }
  // Element-wise over every process's `values` (the same length everywhere).
  virtual void all_min(std::vector<std::int64_t>& values) = 0;
  virtual void all_sum(std::vector<std::int64_t>& values) = 0;
  // Ends every process now with `exit_code` (this one failed where the others may be
  // waiting for it: MPI_Abort). Not collective; does not return.
  [[noreturn]] virtual void abort(int exit_code) = 0;
};

// Every process's `mine`, by rank, on every process.
inline std::vector<Bytes> all_gather(ProcessGroup& group, const Bytes& mine) {
  return group.exchange(std::vector<Bytes>(static_cast<std::size_t>(group.size()), mine));
}

// Calls `take(rank, bytes)` with every other process's `mine`, in rank order, holding
// one at a time: the end of a cluster-scale run gathers hundreds of MB of counters, and
// all of them at once, in copies, doubled the per-process peak.
template <typename Take>
void for_each_gathered(ProcessGroup& group, const Bytes& mine, Take&& take) {
  for (int r = 0; r < group.size(); ++r) {
    if (r == group.rank()) {
      (void)group.broadcast(r, mine);
    } else {
      const Bytes theirs = group.broadcast(r, Bytes());
      take(r, theirs);
    }
  }
}

// Plain values in and out of buffers (the processes of one run share a machine type).
// `Out` is a Bytes, or a ByteCount to size one first.
template <typename T, typename Out>
void put(Out& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

// Counts what put() would append (to reserve a buffer whole instead of doubling it).
struct ByteCount {
  std::size_t bytes = 0;
  void append(const char*, std::size_t n) { bytes += n; }
};

// What `write(out)` puts, in a buffer sized once: `write` runs twice, first counting.
template <typename Write>
Bytes written_once(Write&& write) {
  ByteCount size;
  write(size);
  Bytes out;
  out.reserve(size.bytes);
  write(out);
  return out;
}

class BytesReader {
 public:
  explicit BytesReader(const Bytes& in) : in_(&in) {}
  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, in_->data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  // The next `n` bytes, in place.
  const char* take(std::size_t n) {
    const char* p = in_->data() + at_;
    at_ += n;
    return p;
  }
  bool done() const { return at_ >= in_->size(); }

 private:
  const Bytes* in_;
  std::size_t at_ = 0;
};

// Every process's `items` (trivially copyable), concatenated in process order.
template <typename T>
std::vector<T> all_gather_items(ProcessGroup& group, const std::vector<T>& items) {
  Bytes mine;
  for (const T& x : items) put(mine, x);
  std::vector<T> all;
  for (const Bytes& b : all_gather(group, mine)) {
    BytesReader r(b);
    while (!r.done()) all.push_back(r.get<T>());
  }
  return all;
}

}  // namespace fabricsim
