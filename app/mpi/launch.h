#pragma once
// Runs started by mpirun: finds out from the launcher's environment, and loads the MPI
// plugin (libfabricsim_mpi.so, beside the executable) only then, so that a plain run
// loads no MPI library.
#include <memory>
#include <string>

#include "sim/parallel/process_group.h"

namespace fabricsim {

// How many processes the launcher started (1 when it was not mpirun).
int launched_processes();
int launched_rank();  // this process's number among them (0 when alone)

// The processes of this run, or null when there is one. Throws std::runtime_error when
// mpirun started several but this build has no MPI plugin.
std::unique_ptr<ProcessGroup> open_launched_processes(int* argc, char*** argv);

}  // namespace fabricsim
