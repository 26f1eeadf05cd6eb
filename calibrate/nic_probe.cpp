#include "calibrate/nic_probe.h"

#include <infiniband/verbs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>

namespace fabricsim {
namespace {

constexpr int kTxDepth = 128;  // outstanding writes in the bandwidth test (perftest's default)

// What the two sides tell each other over TCP, as perftest does: enough to address the
// peer's queue pair and write into its buffer.
struct Endpoint {
  std::uint16_t lid = 0;
  std::uint32_t qpn = 0, psn = 0, rkey = 0;
  std::uint64_t addr = 0;
  std::uint8_t gid[16] = {};
};

std::string encode(const Endpoint& e) {
  char buf[128];
  int at = std::snprintf(buf, sizeof buf, "%04x:%06x:%06x:%08x:%016" PRIx64 ":", e.lid, e.qpn, e.psn, e.rkey, e.addr);
  for (int i = 0; i < 16; ++i) at += std::snprintf(buf + at, sizeof buf - static_cast<std::size_t>(at), "%02x", e.gid[i]);
  return std::string(buf, static_cast<std::size_t>(at));
}

Endpoint decode(const std::string& s) {
  Endpoint e;
  unsigned lid = 0, qpn = 0, psn = 0, rkey = 0;
  std::uint64_t addr = 0;
  char gid_hex[33] = {};
  if (std::sscanf(s.c_str(), "%4x:%6x:%6x:%8x:%16" SCNx64 ":%32s", &lid, &qpn, &psn, &rkey, &addr, gid_hex) != 6) {
    throw std::runtime_error("side channel: malformed peer details '" + s + "'");
  }
  e.lid = static_cast<std::uint16_t>(lid), e.qpn = qpn, e.psn = psn, e.rkey = rkey, e.addr = addr;
  for (int i = 0; i < 16; ++i) {
    unsigned byte = 0;
    std::sscanf(gid_hex + 2 * i, "%2x", &byte);
    e.gid[i] = static_cast<std::uint8_t>(byte);
  }
  return e;
}

class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

  void send_all(const void* data, std::size_t n) const {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t k = ::send(fd_, p, n, MSG_NOSIGNAL);
      if (k <= 0) throw std::runtime_error("side channel: the peer went away");
      p += k, n -= static_cast<std::size_t>(k);
    }
  }
  void recv_all(void* data, std::size_t n) const {
    char* p = static_cast<char*>(data);
    while (n > 0) {
      const ssize_t k = ::recv(fd_, p, n, 0);
      if (k <= 0) throw std::runtime_error("side channel: the peer went away");
      p += k, n -= static_cast<std::size_t>(k);
    }
  }
  // Fixed-size text records keep the protocol trivial.
  void send_line(const std::string& s) const {
    char buf[128] = {};
    std::snprintf(buf, sizeof buf, "%s", s.c_str());
    send_all(buf, sizeof buf);
  }
  std::string recv_line() const {
    char buf[128];
    recv_all(buf, sizeof buf);
    buf[sizeof buf - 1] = '\0';
    return buf;
  }
  void barrier() const {
    const char c = 's';
    char got = 0;
    send_all(&c, 1);
    recv_all(&got, 1);
  }

 private:
  int fd_;
};

Socket accept_one(int port) {
  Socket listener(::socket(AF_INET6, SOCK_STREAM, 0));
  if (listener.fd() < 0) throw std::runtime_error("side channel: cannot open a socket");
  const int yes = 1, no = 0;
  ::setsockopt(listener.fd(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  ::setsockopt(listener.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no);
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_any;
  addr.sin6_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(listener.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener.fd(), 1) != 0) {
    throw std::runtime_error("side channel: cannot listen on port " + std::to_string(port) + ": " + std::strerror(errno));
  }
  Socket s(::accept(listener.fd(), nullptr, nullptr));
  if (s.fd() < 0) throw std::runtime_error("side channel: accept failed");
  ::setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  return s;
}

Socket connect_to(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found) {
    throw std::runtime_error("side channel: cannot resolve '" + host + "'");
  }
  std::string why = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype, a->ai_protocol));
    if (s.fd() >= 0 && ::connect(s.fd(), a->ai_addr, a->ai_addrlen) == 0) {
      ::freeaddrinfo(found);
      const int yes = 1;
      ::setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      return s;
    }
    why = std::strerror(errno);
  }
  ::freeaddrinfo(found);
  throw std::runtime_error("side channel: cannot connect to " + host + ":" + std::to_string(port) + ": " + why);
}

// The verbs objects of one side, released in reverse order.
struct Verbs {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  char* buffer = nullptr;  // [0, region): where the peer writes; [region, 2 region): what we send
  std::size_t region = 0;
  ibv_port_attr port{};

  ~Verbs() {
    if (qp) ibv_destroy_qp(qp);
    if (mr) ibv_dereg_mr(mr);
    if (cq) ibv_destroy_cq(cq);
    if (pd) ibv_dealloc_pd(pd);
    if (ctx) ibv_close_device(ctx);
    std::free(buffer);
  }
};

void need(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what + (errno ? std::string(": ") + std::strerror(errno) : std::string()));
}

void bring_up(Verbs& v, const NicProbeOptions& o, const Endpoint& local, const Endpoint& remote) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = static_cast<std::uint8_t>(o.ib_port);
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  need(ibv_modify_qp(v.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0, "queue pair to INIT");

  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = v.port.active_mtu;
  a.dest_qp_num = remote.qpn;
  a.rq_psn = remote.psn;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.dlid = remote.lid;
  a.ah_attr.sl = 0;
  a.ah_attr.port_num = static_cast<std::uint8_t>(o.ib_port);
  if (o.gid_index >= 0) {
    a.ah_attr.is_global = 1;
    std::memcpy(a.ah_attr.grh.dgid.raw, remote.gid, 16);
    a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(o.gid_index);
    a.ah_attr.grh.hop_limit = 64;
  }
  need(ibv_modify_qp(v.qp, &a,
                     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == 0,
       "queue pair to RTR (wrong --gid-index? RoCE needs one)");

  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.sq_psn = local.psn;
  a.max_rd_atomic = 1;
  need(ibv_modify_qp(v.qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                   IBV_QP_MAX_QP_RD_ATOMIC) == 0,
       "queue pair to RTS");
}

void post_write(Verbs& v, const Endpoint& remote, std::size_t bytes, std::uint64_t id) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(v.buffer + v.region);
  sge.length = static_cast<std::uint32_t>(bytes);
  sge.lkey = v.mr->lkey;
  ibv_send_wr wr{};
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote.addr;
  wr.wr.rdma.rkey = remote.rkey;
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(v.qp, &wr, &bad) != 0) throw std::runtime_error("ibv_post_send failed");
}

int poll(Verbs& v, int max) {
  ibv_wc wc[16];
  const int n = ibv_poll_cq(v.cq, std::min(max, 16), wc);
  if (n < 0) throw std::runtime_error("ibv_poll_cq failed");
  for (int i = 0; i < n; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS) {
      throw std::runtime_error(std::string("work completion failed: ") + ibv_wc_status_str(wc[i].status));
    }
  }
  return n;
}

// Bandwidth of `iterations` writes of `bytes` with up to kTxDepth outstanding, in Gb/s.
double bandwidth(Verbs& v, const Endpoint& remote, std::size_t bytes, int iterations) {
  int posted = 0, done = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (done < iterations) {
    while (posted < iterations && posted - done < kTxDepth) post_write(v, remote, bytes, static_cast<std::uint64_t>(posted++));
    done += poll(v, kTxDepth);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<double>(bytes) * iterations * 8 / seconds * 1e-9;
}

// Ping-pong by RDMA WRITE: each side watches the last byte of its receive region for the
// next sequence value, then writes back. Returns the one-way latency in microseconds.
double ping_pong(Verbs& v, const Endpoint& remote, std::size_t bytes, int iterations, int warmup, bool starts) {
  volatile char* inbox = v.buffer + bytes - 1;  // zeroed by the caller before the barrier
  char* outbox = v.buffer + v.region + bytes - 1;
  std::chrono::steady_clock::time_point t0;
  for (int i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) t0 = std::chrono::steady_clock::now();
    const char value = static_cast<char>(i % 127 + 1);
    if (starts) {
      *outbox = value;
      post_write(v, remote, bytes, static_cast<std::uint64_t>(i));
      while (*inbox != value) {
      }
    } else {
      while (*inbox != value) {
      }
      *outbox = value;
      post_write(v, remote, bytes, static_cast<std::uint64_t>(i));
    }
    while (poll(v, 1) == 0) {
    }
  }
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return us / iterations / 2;
}

}  // namespace

NicProbeResult run_nic_probe(const NicProbeOptions& o, const std::function<void(const std::string&)>& progress) {
  NicProbeResult r;
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list || n == 0) {
    if (list) ibv_free_device_list(list);
    r.message = "no RDMA device: libibverbs found none (is rdma-core's provider for this NIC installed and the driver loaded?)";
    return r;
  }
  ibv_device* chosen = nullptr;
  std::string names;
  for (int i = 0; i < n; ++i) {
    const std::string name = ibv_get_device_name(list[i]);
    names += (names.empty() ? "" : ", ") + name;
    if (!chosen && (o.device.empty() || o.device == name)) chosen = list[i];
  }
  if (!chosen) {
    ibv_free_device_list(list);
    r.message = "no RDMA device named '" + o.device + "' (present: " + names + ")";
    return r;
  }
  r.outcome = NicProbeResult::Outcome::kMeasured;
  r.device = ibv_get_device_name(chosen);
  Verbs v;
  errno = 0;
  v.ctx = ibv_open_device(chosen);
  ibv_free_device_list(list);
  need(v.ctx != nullptr, "ibv_open_device(" + r.device + ")");
  need(ibv_query_port(v.ctx, static_cast<std::uint8_t>(o.ib_port), &v.port) == 0, "ibv_query_port");
  r.link_layer = v.port.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
  NicProbeOptions opts = o;
  if (opts.gid_index < 0 && v.port.link_layer == IBV_LINK_LAYER_ETHERNET) opts.gid_index = 0;  // RoCE needs a GID

  v.region = static_cast<std::size_t>(o.max_bytes);
  need(posix_memalign(reinterpret_cast<void**>(&v.buffer), 4096, 2 * v.region) == 0, "buffer");
  std::memset(v.buffer, 0, 2 * v.region);
  v.pd = ibv_alloc_pd(v.ctx);
  need(v.pd != nullptr, "ibv_alloc_pd");
  v.mr = ibv_reg_mr(v.pd, v.buffer, 2 * v.region, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  need(v.mr != nullptr, "ibv_reg_mr");
  v.cq = ibv_create_cq(v.ctx, 2 * kTxDepth, nullptr, nullptr, 0);
  need(v.cq != nullptr, "ibv_create_cq");
  ibv_qp_init_attr init{};
  init.send_cq = v.cq;
  init.recv_cq = v.cq;
  init.cap.max_send_wr = kTxDepth;
  init.cap.max_recv_wr = 1;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.qp_type = IBV_QPT_RC;
  v.qp = ibv_create_qp(v.pd, &init);
  need(v.qp != nullptr, "ibv_create_qp");

  Endpoint local;
  local.lid = v.port.lid;
  local.qpn = v.qp->qp_num;
  local.psn = std::random_device{}() & 0xffffff;
  local.rkey = v.mr->rkey;
  local.addr = reinterpret_cast<std::uint64_t>(v.buffer);
  if (opts.gid_index >= 0) {
    ibv_gid gid{};
    need(ibv_query_gid(v.ctx, static_cast<std::uint8_t>(o.ib_port), opts.gid_index, &gid) == 0, "ibv_query_gid");
    std::memcpy(local.gid, gid.raw, 16);
  }

  progress(std::string(o.server ? "waiting for a client on port " : "connecting to ") + (o.server ? "" : o.host + ":") +
           std::to_string(o.port));
  const Socket peer = o.server ? accept_one(o.port) : connect_to(o.host, o.port);
  // The client's sweep settings travel with its details, so the server needs none.
  char settings[96];
  std::snprintf(settings, sizeof settings, "%" PRId64 " %" PRId64 " %d %d %d", static_cast<std::int64_t>(o.min_bytes),
                static_cast<std::int64_t>(o.max_bytes), o.bandwidth_iterations, o.latency_iterations, o.warmup);
  NicProbeOptions run = opts;
  if (o.server) {
    long long lo = 0, hi = 0;
    if (std::sscanf(peer.recv_line().c_str(), "%lld %lld %d %d %d", &lo, &hi, &run.bandwidth_iterations, &run.latency_iterations,
                    &run.warmup) != 5 ||
        hi > o.max_bytes) {
      throw std::runtime_error("side channel: the client's settings do not fit this server");
    }
    run.min_bytes = lo, run.max_bytes = hi;
  } else {
    peer.send_line(settings);
  }
  peer.send_line(encode(local));
  const Endpoint remote = decode(peer.recv_line());
  bring_up(v, run, local, remote);
  peer.barrier();

  r.bandwidth.name = r.device + " RDMA WRITE bandwidth";
  r.bandwidth.kind = PerftestLog::Kind::kBandwidth;
  r.latency.name = r.device + " RDMA WRITE latency";
  r.latency.kind = PerftestLog::Kind::kLatency;
  if (!o.server) {
    for (std::int64_t bytes = run.min_bytes; bytes <= run.max_bytes; bytes *= 2) {
      const int iterations = static_cast<int>(std::min<std::int64_t>(run.bandwidth_iterations, std::max<std::int64_t>(100, (4LL << 30) / bytes)));
      bandwidth(v, remote, static_cast<std::size_t>(bytes), std::min(iterations, run.warmup));  // warm-up
      PerftestSample s;
      s.bytes = bytes;
      s.bandwidth_Gbps = bandwidth(v, remote, static_cast<std::size_t>(bytes), iterations);
      r.bandwidth.samples.push_back(s);
      progress("bandwidth " + std::to_string(bytes) + " B: " + std::to_string(s.bandwidth_Gbps) + " Gb/s");
    }
  }
  peer.barrier();
  for (std::int64_t bytes : {2, 8, 64, 512, 4096}) {
    if (bytes > run.max_bytes) break;
    std::memset(v.buffer, 0, static_cast<std::size_t>(bytes));  // before the peer may write into it
    peer.barrier();
    PerftestSample s;
    s.bytes = bytes;
    s.latency_us = ping_pong(v, remote, static_cast<std::size_t>(bytes), run.latency_iterations, run.warmup, !o.server);
    if (!o.server) {
      r.latency.samples.push_back(s);
      progress("latency " + std::to_string(bytes) + " B: " + std::to_string(s.latency_us) + " us one way");
    }
  }
  peer.barrier();
  return r;
}

}  // namespace fabricsim
