#pragma once
// What the probe executables share: their exit codes and the progress line on a terminal.
// The probes are executables of their own so that `fabricsim` never loads CUDA or verbs.
#include <unistd.h>

#include <cstdio>
#include <string>

namespace fabricsim {

constexpr int kExitProbeBadInput = 2;
constexpr int kExitNoDevice = 3;

inline void probe_progress(const std::string& line) {
  if (!isatty(STDERR_FILENO)) return;
  std::fprintf(stderr, "\r\033[K  %s", line.c_str());
  std::fflush(stderr);
}

inline void end_progress() {
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\r\033[K");
}

}  // namespace fabricsim
