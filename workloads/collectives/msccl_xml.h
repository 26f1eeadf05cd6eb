#pragma once
// MSCCL algorithm files: <algo ngpus nchunksperloop coll ...> holding <gpu id i_chunks
// o_chunks s_chunks>, each holding thread blocks <tb id send recv chan> of <step s type
// srcbuf srcoff dstbuf dstoff cnt depid deps hasdep/> run in order. Step types: s, r,
// rrc, rrs, rcs, rrcs, cpy, re, nop. Compiled into the same per-rank programs as the
// built-in algorithms; compound steps become a receive plus a send (and a copy where
// the source and destination differ, or into a hidden slot for rrs, which keeps nothing).
#include <cstdint>
#include <string>

#include "workloads/collectives/collective.h"

namespace fabricsim {

// `bytes` is the nccl-tests size (see build_collective). Throws std::runtime_error
// "NAME:LINE: what" on malformed XML or an algorithm that does not fit together.
CollectiveProgram load_msccl_xml(const std::string& path, std::int64_t bytes);
CollectiveProgram parse_msccl_xml(const std::string& text, const std::string& name, std::int64_t bytes);

}  // namespace fabricsim
