#include "workloads/collectives/nccl_protocol.h"

#include <cctype>
#include <string>

namespace fabricsim {

const char* protocol_name(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kSimple: return "Simple";
    case NcclProtocol::kLL: return "LL";
    case NcclProtocol::kLL128: return "LL128";
    case NcclProtocol::kNone: break;
  }
  return "-";
}

std::optional<NcclProtocol> protocol_from_name(std::string_view name) {
  std::string s(name);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "none") return NcclProtocol::kNone;
  if (s == "simple") return NcclProtocol::kSimple;
  if (s == "ll") return NcclProtocol::kLL;
  if (s == "ll128") return NcclProtocol::kLL128;
  return std::nullopt;
}

double protocol_wire_factor(NcclProtocol p) {
  if (p == NcclProtocol::kLL) return 2.0;  // an 8-byte flag beside every 8 bytes of data
  if (p == NcclProtocol::kLL128) return 128.0 / 120.0;
  return 1.0;
}

}  // namespace fabricsim
