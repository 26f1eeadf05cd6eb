// The MPI side of a run split over processes: a plugin (libfabricsim_mpi.so) that
// fabricsim loads only when mpirun started it (app/mpi/launch.cpp), so the executable
// itself links no MPI library. Open MPI from Debian (libopenmpi-dev).
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/parallel/process_group.h"

namespace fabricsim {
namespace {

class MpiProcessGroup final : public ProcessGroup {
 public:
  MpiProcessGroup(int* argc, char*** argv) {
    // Between windows whichever thread arrives last at the barrier talks to the other
    // processes: one at a time, but not always the main thread.
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
    if (provided < MPI_THREAD_SERIALIZED) {
      MPI_Finalize();
      throw std::runtime_error("this MPI library cannot be called from several threads in turn (MPI_THREAD_SERIALIZED)");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiProcessGroup() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<Bytes> exchange(const std::vector<Bytes>& out) override {
    const auto n = static_cast<std::size_t>(size_);
    std::vector<long long> send_counts(n), recv_counts(n);
    for (std::size_t r = 0; r < n; ++r) send_counts[r] = static_cast<long long>(out[r].size());
    MPI_Alltoall(send_counts.data(), 1, MPI_LONG_LONG, recv_counts.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
    std::vector<int> sc(n), sd(n), rc(n), rd(n);
    Bytes send, recv;
    long long send_total = 0, recv_total = 0;
    for (std::size_t r = 0; r < n; ++r) {
      sd[r] = checked(send_total);
      sc[r] = checked(send_counts[r]);
      send_total += send_counts[r];
      rd[r] = checked(recv_total);
      rc[r] = checked(recv_counts[r]);
      recv_total += recv_counts[r];
    }
    checked(send_total);
    checked(recv_total);
    send.reserve(static_cast<std::size_t>(send_total));
    for (const Bytes& b : out) send += b;
    recv.resize(static_cast<std::size_t>(recv_total));
    MPI_Alltoallv(send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(), rd.data(), MPI_BYTE, MPI_COMM_WORLD);
    std::vector<Bytes> in(n);
    for (std::size_t r = 0; r < n; ++r) in[r] = recv.substr(static_cast<std::size_t>(rd[r]), static_cast<std::size_t>(rc[r]));
    return in;
  }

  Bytes broadcast(int root, const Bytes& data) override {
    long long bytes = rank_ == root ? static_cast<long long>(data.size()) : 0;
    MPI_Bcast(&bytes, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD);
    Bytes in;
    if (rank_ != root) in.resize(static_cast<std::size_t>(bytes));
    char* at = rank_ == root ? const_cast<char*>(data.data()) : in.data();  // MPI_Bcast's buffer is not const
    // In pieces of at most 1 GiB: MPI counts are int.
    for (long long done = 0; done < bytes;) {
      const int piece = static_cast<int>(std::min<long long>(bytes - done, 1ll << 30));
      MPI_Bcast(at + done, piece, MPI_BYTE, root, MPI_COMM_WORLD);
      done += piece;
    }
    return in;  // empty at the root: it has `data`
  }

  void all_min(std::vector<std::int64_t>& values) override { reduce(values, MPI_MIN); }
  void all_sum(std::vector<std::int64_t>& values) override { reduce(values, MPI_SUM); }
  [[noreturn]] void abort(int exit_code) override {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);  // MPI_Abort should not return
  }

 private:
  static int checked(long long bytes) {
    if (bytes > INT_MAX) throw std::runtime_error("more than 2 GiB between two processes in one exchange");
    return static_cast<int>(bytes);
  }
  static void reduce(std::vector<std::int64_t>& values, MPI_Op op) {
    MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, op, MPI_COMM_WORLD);
  }

  int rank_ = 0;
  int size_ = 1;
};

}  // namespace
}  // namespace fabricsim

extern "C" fabricsim::ProcessGroup* fabricsim_mpi_open(int* argc, char*** argv) {
  return new fabricsim::MpiProcessGroup(argc, argv);
}
