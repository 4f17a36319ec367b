// NcclCommunicator: creation and measure() of kernels/collective_bench.hpp (measure_overlap() is
// in collective_overlap.cu). Without NCCL every member throws GpuUnavailable.
#include "kernels/collective_bench.hpp"

#include <stdexcept>
#include <string>

#include "kernels/gpu_error.hpp"
#include "kernels/request_checks.hpp"

#if PARASIM_HAVE_NCCL
#include <nccl.h>

#include <vector>

#include "kernels/collective_data.cuh"
#include "kernels/collective_impl.cuh"
#include "kernels/cuda_check.cuh"
#include "kernels/cuda_resources.cuh"
#include "kernels/event_timing.cuh"
#endif

namespace parasim::kernels {
namespace {

void validate_ranks(int rank, int world) {
  if (world < 1 || rank < 0 || rank >= world) {
    throw std::invalid_argument("NCCL communicator: rank " + std::to_string(rank) +
                                " is not in a world of " + std::to_string(world) + " ranks");
  }
}

}  // namespace

#if PARASIM_HAVE_NCCL
namespace {

constexpr float kSentinel = -1.0f;  // outputs before the checked run (patterns are >= 0)

// One collective of one call to measure(): its NCCL count, buffers and expected output.
struct CollectiveCase {
  NcclCollective kind;
  int rank;
  int world;
  bool in_place;
  std::size_t count;          // the NCCL count argument (per rank / per peer, nccl-tests')
  std::size_t send_elements;  // input buffer size
  std::size_t recv_elements;  // output buffer size
};

std::size_t to_size(int v) { return static_cast<std::size_t>(v); }

// nccl-tests' sizes (collective_bench.hpp): S / 4 elements, split over the ranks where S is the
// gathered total.
CollectiveCase make_case(NcclCollective kind, std::size_t bytes, int rank, int world,
                         bool in_place) {
  const std::size_t n = to_size(world);
  const std::size_t elements = bytes / sizeof(float);
  CollectiveCase c{kind, rank, world, in_place, 0, 0, 0};
  switch (kind) {
    case NcclCollective::kAllReduce:
    case NcclCollective::kBroadcast:
    case NcclCollective::kSendRecv:
      c.count = elements;
      c.send_elements = c.recv_elements = c.count;
      break;
    case NcclCollective::kAllGather:
      c.count = elements / n;
      c.send_elements = c.count;
      c.recv_elements = c.count * n;
      break;
    case NcclCollective::kReduceScatter:
      c.count = elements / n;
      c.send_elements = c.count * n;
      c.recv_elements = c.count;
      break;
    case NcclCollective::kAllToAll:
      c.count = elements / n;
      c.send_elements = c.recv_elements = c.count * n;
      break;
  }
  if (c.count == 0) {
    throw std::invalid_argument("NCCL benchmark: a message of " + std::to_string(bytes) +
                                " bytes holds less than one fp32 element per rank (" +
                                std::to_string(world) + " ranks)");
  }
  return c;
}

bool gathered(NcclCollective kind) {
  return kind == NcclCollective::kAllGather || kind == NcclCollective::kReduceScatter ||
         kind == NcclCollective::kAllToAll;
}

// Where the collective reads and writes. In place, one buffer holds both, at nccl-tests'
// offsets: all-gather's input is the rank's slice of the output, reduce-scatter's output the
// rank's slice of the input; the others use the same pointer for both.
struct CaseBuffers {
  detail::DeviceBuffer main;   // the output (in place: the only buffer)
  detail::DeviceBuffer extra;  // the input when out of place
  float* send = nullptr;
  float* recv = nullptr;

  explicit CaseBuffers(const CollectiveCase& c) {
    if (!c.in_place) {
      main = detail::DeviceBuffer(c.recv_elements * sizeof(float));
      extra = detail::DeviceBuffer(c.send_elements * sizeof(float));
      recv = main.as<float>();
      send = extra.as<float>();
      return;
    }
    const std::size_t slice = c.count * to_size(c.rank);
    if (c.kind == NcclCollective::kReduceScatter) {
      main = detail::DeviceBuffer(c.send_elements * sizeof(float));
      send = main.as<float>();
      recv = send + slice;
    } else if (c.kind == NcclCollective::kAllGather) {
      main = detail::DeviceBuffer(c.recv_elements * sizeof(float));
      recv = main.as<float>();
      send = recv + slice;
    } else {
      main = detail::DeviceBuffer(c.recv_elements * sizeof(float));
      send = recv = main.as<float>();
    }
  }
};

// Rank-dependent inputs (collective_data.cuh), outputs set to the sentinel first.
void fill_inputs(const CollectiveCase& c, const CaseBuffers& b, cudaStream_t stream) {
  if (!c.in_place || c.kind == NcclCollective::kAllGather) {
    detail::fill_constant(b.recv, c.recv_elements, kSentinel, stream);
  }
  if (c.kind == NcclCollective::kBroadcast && c.rank != 0) {
    detail::fill_constant(b.send, c.send_elements, kSentinel, stream);  // only root's counts
  } else {
    detail::fill_pattern(b.send, c.send_elements, c.kind == NcclCollective::kBroadcast ? 0 : c.rank,
                         stream);
  }
}

detail::ExpectedPattern expected_output(const CollectiveCase& c) {
  const double n = c.world;
  detail::ExpectedPattern e;
  e.block = c.count;
  switch (c.kind) {
    case NcclCollective::kAllReduce:  // sum over ranks r of r + (i mod P)
      e.base = n * (n - 1) / 2;
      e.multiplier = n;
      break;
    case NcclCollective::kReduceScatter:  // the rank's slice of the sum
      e.base = n * (n - 1) / 2;
      e.multiplier = n;
      e.offset = c.count * to_size(c.rank);
      break;
    case NcclCollective::kAllGather:  // block p from rank p
      e.block_step = 1;
      break;
    case NcclCollective::kAllToAll:  // block p: rank p's block for this rank
      e.block_step = 1;
      e.offset = c.count * to_size(c.rank);
      break;
    case NcclCollective::kBroadcast:  // root 0's data
      break;
    case NcclCollective::kSendRecv:  // from rank - 1
      e.base = (c.rank + c.world - 1) % c.world;
      break;
  }
  return e;
}

void enqueue_collective(const CollectiveCase& c, const CaseBuffers& b, ncclComm_t comm,
                        cudaStream_t stream) {
  switch (c.kind) {
    case NcclCollective::kAllReduce:
      NCCL_CHECK(ncclAllReduce(b.send, b.recv, c.count, ncclFloat, ncclSum, comm, stream));
      return;
    case NcclCollective::kAllGather:
      NCCL_CHECK(ncclAllGather(b.send, b.recv, c.count, ncclFloat, comm, stream));
      return;
    case NcclCollective::kReduceScatter:
      NCCL_CHECK(ncclReduceScatter(b.send, b.recv, c.count, ncclFloat, ncclSum, comm, stream));
      return;
    case NcclCollective::kBroadcast:
      NCCL_CHECK(ncclBroadcast(b.send, b.recv, c.count, ncclFloat, 0, comm, stream));
      return;
    case NcclCollective::kAllToAll:  // nccl-tests' grouped send/recv (ncclAlltoAll is 2.28+)
    {
      // The group is always closed, even when a call inside it failed; the first failure is
      // reported after ncclGroupEnd.
      NCCL_CHECK(ncclGroupStart());
      ncclResult_t first = ncclSuccess;
      for (int peer = 0; peer < c.world && first == ncclSuccess; ++peer) {
        const std::size_t at = c.count * to_size(peer);
        first = ncclSend(b.send + at, c.count, ncclFloat, peer, comm, stream);
        if (first == ncclSuccess) first = ncclRecv(b.recv + at, c.count, ncclFloat, peer, comm, stream);
      }
      const ncclResult_t ended = ncclGroupEnd();
      NCCL_CHECK(first);
      NCCL_CHECK(ended);
      return;
    }
    case NcclCollective::kSendRecv:  // ring shift: to rank + 1, from rank - 1
    {
      NCCL_CHECK(ncclGroupStart());
      ncclResult_t first = ncclSend(b.send, c.count, ncclFloat, (c.rank + 1) % c.world, comm, stream);
      if (first == ncclSuccess) {
        first = ncclRecv(b.recv, c.count, ncclFloat, (c.rank + c.world - 1) % c.world, comm,
                         stream);
      }
      const ncclResult_t ended = ncclGroupEnd();
      NCCL_CHECK(first);
      NCCL_CHECK(ended);
      return;
    }
  }
}

}  // namespace

NcclCommunicator::NcclCommunicator(int rank, int world, int device,
                                   const Broadcast& broadcast_from_root) {
  validate_ranks(rank, world);
  if (!broadcast_from_root && world > 1) {
    throw std::invalid_argument("NCCL communicator: no broadcast for the unique id");
  }
  REQUIRE_DEVICE(device);
  impl_ = std::make_unique<Impl>(rank, world, device);
  // The id is made on rank 0 and copied to every rank by the caller (collective_bench.hpp).
  ncclUniqueId id{};
  if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  if (broadcast_from_root) broadcast_from_root(&id, sizeof(id));
  NCCL_CHECK(ncclCommInitRank(&impl_->comm_, world, id, rank));
}

NcclCommunicator::~NcclCommunicator() = default;

int NcclCommunicator::rank() const { return impl_->rank_; }
int NcclCommunicator::world() const { return impl_->world_; }

CollectiveMeasurement NcclCommunicator::measure(NcclCollective kind, std::size_t message_bytes,
                                                bool in_place, const TimingOptions& options) {
  detail::validate_timing(options);
  const Impl& s = *impl_;
  const CollectiveCase c = make_case(kind, message_bytes, s.rank_, s.world_, in_place);
  s.activate();
  const cudaStream_t stream = s.stream_.get();
  const CaseBuffers buffers(c);
  fill_inputs(c, buffers, stream);

  const auto run = [&] { enqueue_collective(c, buffers, s.comm_, stream); };
  for (int i = 0; i < options.warmup; ++i) run();
  const std::vector<double> samples =
      detail::sample_event_times(stream, options.iterations, [] {}, run);
  s.check_async();

  CollectiveMeasurement result;
  result.time = summarize(samples);
  result.message_bytes =
      c.count * sizeof(float) * (gathered(kind) ? to_size(s.world_) : std::size_t{1});
  result.checked = !(in_place && (kind == NcclCollective::kAllToAll ||
                                  kind == NcclCollective::kSendRecv));
  result.correct = true;
  if (result.checked) {
    fill_inputs(c, buffers, stream);
    run();
    const detail::DeviceBuffer counter(sizeof(unsigned long long));
    const unsigned long long wrong =
        detail::count_mismatches(buffers.recv, c.recv_elements, expected_output(c),
                                 counter.as<unsigned long long>(), stream);
    s.check_async();
    result.correct = wrong == 0;
  }
  return result;
}

#else  // built with CUDA, without NCCL

struct NcclCommunicator::Impl {};

namespace {
[[noreturn]] void no_nccl() {
  throw GpuUnavailable(
      "parasim was built without NCCL: nccl.h / libnccl were not found when configuring (set "
      "NCCL_ROOT and reconfigure to measure collectives)");
}
}  // namespace

NcclCommunicator::NcclCommunicator(int rank, int world, int /*device*/,
                                   const Broadcast& /*broadcast_from_root*/) {
  validate_ranks(rank, world);
  no_nccl();
}
NcclCommunicator::~NcclCommunicator() = default;
int NcclCommunicator::rank() const { no_nccl(); }
int NcclCommunicator::world() const { no_nccl(); }
CollectiveMeasurement NcclCommunicator::measure(NcclCollective, std::size_t, bool,
                                                const TimingOptions&) {
  no_nccl();
}
OverlapMeasurement NcclCommunicator::measure_overlap(const GemmRequest&, std::size_t,
                                                     const TimingOptions&) {
  no_nccl();
}

#endif

}  // namespace parasim::kernels
