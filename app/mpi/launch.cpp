#include "app/mpi/launch.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace fabricsim {

int launched_processes() {
  // Open MPI's mpirun, then PMIx and PMI launchers (MPICH's, Slurm's).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) {
      const int n = std::atoi(v);
      if (n > 0) return n;
    }
  }
  return 1;
}

int launched_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return 0;
}

std::unique_ptr<ProcessGroup> open_launched_processes(int* argc, char*** argv) {
  if (launched_processes() <= 1) return nullptr;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path plugin = (ec ? std::filesystem::path(".") : self.parent_path()) / "libfabricsim_mpi.so";
  void* lib = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    throw std::runtime_error("started by mpirun with " + std::to_string(launched_processes()) +
                             " processes, but this build has no MPI plugin (" + plugin.string() +
                             ": " + dlerror() + "); install libopenmpi-dev (scripts/install-deps) and rebuild");
  }
  using Open = ProcessGroup* (*)(int*, char***);
  const auto open = reinterpret_cast<Open>(dlsym(lib, "fabricsim_mpi_open"));
  if (open == nullptr) throw std::runtime_error(plugin.string() + " has no fabricsim_mpi_open");
  // The library stays loaded: MPI is finalized by the group's destructor, which lives there.
  return std::unique_ptr<ProcessGroup>(open(argc, argv));
}

}  // namespace fabricsim
