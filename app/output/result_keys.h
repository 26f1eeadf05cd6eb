#pragma once
// results.json's keys that are written in one place and read in another (compare,
// whatif, the sweeps): one spelling each.
namespace fabricsim::result_key {

inline constexpr const char* kComplete = "complete";
inline constexpr const char* kSimTimePs = "sim_time_ps";
inline constexpr const char* kCollective = "collective";
inline constexpr const char* kRows = "rows";
inline constexpr const char* kSizeBytes = "size_bytes";
inline constexpr const char* kTimeUs = "time_us";
inline constexpr const char* kBusbwGBps = "busbw_GBps";
inline constexpr const char* kAlgbwGBps = "algbw_GBps";
inline constexpr const char* kTraining = "training";
inline constexpr const char* kIterationTimeUs = "iteration_time_us";
inline constexpr const char* kExposedCommunicationFraction = "exposed_communication_fraction";
inline constexpr const char* kWorkload = "workload";
inline constexpr const char* kFctUs = "fct_us";
inline constexpr const char* kSlowdown = "slowdown";
inline constexpr const char* kP50 = "p50";
inline constexpr const char* kP99 = "p99";
inline constexpr const char* kLinks = "links";
inline constexpr const char* kDrops = "drops";
inline constexpr const char* kPausesSent = "pauses_sent";
inline constexpr const char* kUtilization = "utilization";
inline constexpr const char* kEndpoints = "endpoints";
inline constexpr const char* kWallSeconds = "wall_seconds";

}  // namespace fabricsim::result_key
