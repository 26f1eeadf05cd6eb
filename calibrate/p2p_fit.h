#pragma once
// NCCL's p2p kernel from one node's AllToAll (workloads/collectives/nccl_p2p.h): each size
// takes launch + batches x (the batch's fixed cost + its sends' bytes / the channel's rate
// [+ Simple's drain bytes / the drain rate]), its batches, bytes and protocol from NCCL's
// plan. The launch is given; LL's rate and fixed cost, and Simple's rate, fixed cost and
// drain rate, are fitted by least squares of the relative error, which is linear in the
// fixed costs and the inverse rates.
#include <vector>

#include "calibrate/fit.h"

namespace fabricsim {

struct P2pFitPoint {
  bool ll = false;
  double batches = 1;
  double send_bytes = 0;   // one batch's sends on the busiest channel: sends x part bytes
  double drain_bytes = 0;  // Simple: the last step of a part (min(part, step))
  double time_us = 0;
};

struct P2pFit {
  double channel_GBps = 0, ll_channel_GBps = 0, drain_GBps = 0;
  double batch_us = 0, ll_batch_us = 0;
  FitResiduals residuals;  // per point, as measured
};

// Throws std::invalid_argument with fewer than two LL points or three Simple points of
// different sizes, or where a rate comes out not positive.
P2pFit fit_p2p_kernel(const std::vector<P2pFitPoint>& points, double launch_us);

}  // namespace fabricsim
