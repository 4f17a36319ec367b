#pragma once
// parasim::kernels NCCL collective benchmark — nccl-tests' method (NVIDIA/nccl-tests src/common.cu),
// one rank per GPU, for calibration across the GPUs of a node or the nodes of a cluster.
//
// Bootstrap: the communicator needs an ncclUniqueId created on rank 0 and known to every rank.
// This library does not link MPI; the caller passes `broadcast_from_root`, which must copy the
// `size` bytes at `data` from rank 0 to every rank (the calibrate harness passes MPI_Bcast).
//
// Message size S follows nccl-tests: bytes per rank for all-reduce, broadcast and send/recv; the
// total gathered size for all-gather, reduce-scatter and all-to-all (count x type size x ranks).
// Data type float (fp32, sum), as nccl-tests' default. Send/recv: every rank sends S to rank+1
// and receives from rank-1 (a ring shift, nccl-tests' sendrecv_perf).
// Timing per sample: one CUDA event pair around the collective on the communicator's stream after
// `warmup` untimed runs; samples are enqueued back to back (no host wait in between, so after the
// first the ranks run in step); the local times are returned, the caller reduces across ranks.
// Correctness: after timing the buffers are filled again with rank-dependent values (outputs
// with a sentinel), the collective runs once more and its result is compared on the device with
// the expected values (repeated in-place all-reduces would grow the values without bound);
// `correct` is false when any element differs by more than 1e-5 relative (sums of small integers
// are exact in fp32).
// Overlap probe: GEMM on its own stream, in-place all-reduce on the communicator's stream; each
// timed alone, then both released together (a short spin kernel holds the GEMM stream while both
// are enqueued, and the all-reduce stream waits on an event after it); medians of each one's own
// events.
// algbw = S / t, busbw = algbw x busbw factor (all-reduce 2(n-1)/n; all-gather, reduce-scatter,
// all-to-all (n-1)/n; broadcast, send/recv 1), computed by the caller (costmodel::busbw).

#include <cstddef>
#include <functional>
#include <memory>

#include "kernels/gemm_bench.hpp"
#include "kernels/timing_stats.hpp"

namespace parasim::kernels {

enum class NcclCollective { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kAllToAll,
                            kSendRecv };

struct CollectiveMeasurement {
  TimingStats time;  // this rank's
  // No element of the checked output was wrong. True without a check (see `checked`), so that
  // "all ranks correct" stays the pass criterion.
  bool correct = false;
  // Whether the output was compared: not for in-place all-to-all and send/recv, where the send
  // and receive regions are the same buffer and the result is undefined (nccl-tests times them
  // and reports no error count either: alltoall.cu, sendrecv.cu "We don't support in-place").
  bool checked = false;
  // S actually moved: the element count is rounded down to a multiple of the ranks (all-gather,
  // reduce-scatter, all-to-all) and to whole fp32 elements, as nccl-tests does.
  std::size_t message_bytes = 0;
};

// GEMM and all-reduce run at once on two streams of one GPU: each one's time alone and together.
struct OverlapMeasurement {
  double gemm_alone_s = 0;
  double gemm_overlapped_s = 0;
  double allreduce_alone_s = 0;
  double allreduce_overlapped_s = 0;
};

class NcclCommunicator {
 public:
  using Broadcast = std::function<void(void* data, std::size_t size)>;
  // Selects CUDA device `device`, creates the communicator of `world` ranks. Throws
  // GpuUnavailable (built without CUDA or NCCL, no device) or GpuError.
  NcclCommunicator(int rank, int world, int device, const Broadcast& broadcast_from_root);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const;
  int world() const;

  // Every rank must call with the same arguments, in the same order. Throws
  // std::invalid_argument when S holds less than one fp32 element per rank, or options are
  // invalid (before any collective call, so all ranks throw alike).
  CollectiveMeasurement measure(NcclCollective kind, std::size_t message_bytes, bool in_place,
                                const TimingOptions& options);
  // The overlap probe: `gemm` (bf16) and an in-place all-reduce of `allreduce_bytes` per rank.
  OverlapMeasurement measure_overlap(const GemmRequest& gemm, std::size_t allreduce_bytes,
                                     const TimingOptions& options);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parasim::kernels
