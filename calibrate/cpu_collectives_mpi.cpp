// CPU collectives over MPI (calibrate/cpu_collectives.hpp).
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate/backend.hpp"
#include "calibrate/cpu_collectives.hpp"

namespace parasim::calib {
namespace {

using cost::CollectiveKind;

void check(int code, const char* call) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string(call) + " failed");
}

// Buffers of one collective: per-rank element count c (fp32) as nccl-tests sizes it.
struct Buffers {
  std::vector<float> send, recv;
  int count = 0;  // elements per rank (per peer block for the gathered kinds)
};

bool gathered(CollectiveKind kind) {
  return kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter ||
         kind == CollectiveKind::kAllToAll;
}

// One run of the collective; in place uses recv as both input and output where MPI allows.
void run(CollectiveKind kind, Buffers& b, bool in_place, int rank, int n) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int c = b.count;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      if (in_place) {
        check(MPI_Allreduce(MPI_IN_PLACE, b.recv.data(), c, MPI_FLOAT, MPI_SUM, comm),
              "MPI_Allreduce");
      } else {
        check(MPI_Allreduce(b.send.data(), b.recv.data(), c, MPI_FLOAT, MPI_SUM, comm),
              "MPI_Allreduce");
      }
      return;
    case CollectiveKind::kAllGather:
      if (in_place) {
        check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_FLOAT, b.recv.data(), c, MPI_FLOAT, comm),
              "MPI_Allgather");
      } else {
        check(MPI_Allgather(b.send.data(), c, MPI_FLOAT, b.recv.data(), c, MPI_FLOAT, comm),
              "MPI_Allgather");
      }
      return;
    case CollectiveKind::kReduceScatter:
      if (in_place) {
        check(MPI_Reduce_scatter_block(MPI_IN_PLACE, b.recv.data(), c, MPI_FLOAT, MPI_SUM, comm),
              "MPI_Reduce_scatter_block");
      } else {
        check(MPI_Reduce_scatter_block(b.send.data(), b.recv.data(), c, MPI_FLOAT, MPI_SUM, comm),
              "MPI_Reduce_scatter_block");
      }
      return;
    case CollectiveKind::kBroadcast:
      check(MPI_Bcast(b.recv.data(), c, MPI_FLOAT, 0, comm), "MPI_Bcast");
      return;
    case CollectiveKind::kAllToAll:
      if (in_place) {
        check(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_FLOAT, b.recv.data(), c, MPI_FLOAT, comm),
              "MPI_Alltoall");
      } else {
        check(MPI_Alltoall(b.send.data(), c, MPI_FLOAT, b.recv.data(), c, MPI_FLOAT, comm),
              "MPI_Alltoall");
      }
      return;
    case CollectiveKind::kSendRecv: {
      const int to = (rank + 1) % n, from = (rank + n - 1) % n;
      if (in_place) {
        check(MPI_Sendrecv_replace(b.recv.data(), c, MPI_FLOAT, to, 0, from, 0, comm,
                                   MPI_STATUS_IGNORE),
              "MPI_Sendrecv_replace");
      } else {
        check(MPI_Sendrecv(b.send.data(), c, MPI_FLOAT, to, 0, b.recv.data(), c, MPI_FLOAT, from,
                           0, comm, MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
      }
      return;
    }
  }
}

// Input of rank r, element i: small integers, so fp32 sums are exact.
float input(int r, std::size_t i) { return static_cast<float>((r + 1) * 10 + static_cast<int>(i % 7)); }

void fill(CollectiveKind kind, Buffers& b, bool in_place, int rank, int n) {
  const std::size_t c = static_cast<std::size_t>(b.count);
  const std::size_t total = gathered(kind) ? c * static_cast<std::size_t>(n) : c;
  b.send.assign(total, 0.0f);
  b.recv.assign(total, 0.0f);
  for (std::size_t i = 0; i < total; ++i) b.send[i] = input(rank, i);
  if (kind == CollectiveKind::kAllGather) {
    // Each rank contributes block `rank`; in place it already sits in the output.
    for (std::size_t i = 0; i < c; ++i) {
      b.send[i] = input(rank, i);
      if (in_place) b.recv[static_cast<std::size_t>(rank) * c + i] = input(rank, i);
    }
    return;
  }
  if (in_place || kind == CollectiveKind::kBroadcast) b.recv = b.send;
}

// Expected output element i of rank r after one run.
float expected(CollectiveKind kind, std::size_t i, std::size_t c, int rank, int n) {
  switch (kind) {
    case CollectiveKind::kAllReduce: {
      float sum = 0;
      for (int r = 0; r < n; ++r) sum += input(r, i);
      return sum;
    }
    case CollectiveKind::kAllGather:
      return input(static_cast<int>(i / c), i % c);
    case CollectiveKind::kReduceScatter: {
      float sum = 0;
      for (int r = 0; r < n; ++r) sum += input(r, static_cast<std::size_t>(rank) * c + i);
      return sum;
    }
    case CollectiveKind::kBroadcast:
      return input(0, i);
    case CollectiveKind::kAllToAll:  // block j of rank r comes from rank j's block r
      return input(static_cast<int>(i / c), static_cast<std::size_t>(rank) * c + i % c);
    case CollectiveKind::kSendRecv:
      return input((rank + n - 1) % n, i);
  }
  return 0;
}

}  // namespace

cost::CollectivePoint measure_cpu_collective(const ProcessGroup& group, CollectiveKind kind,
                                             cost::Bytes message, bool in_place,
                                             const kernels::TimingOptions& options) {
  const int n = group.size(), rank = group.rank();
  const double per_rank_bytes = gathered(kind) ? message.value / n : message.value;
  Buffers b;
  b.count = std::max(1, static_cast<int>(std::floor(per_rank_bytes / sizeof(float))));
  fill(kind, b, in_place, rank, n);
  // Warm-up runs, then a fresh input for the run that is checked, then the timed samples.
  for (int i = 0; i < options.warmup; ++i) run(kind, b, in_place, rank, n);
  fill(kind, b, in_place, rank, n);
  run(kind, b, in_place, rank, n);
  const std::size_t c = static_cast<std::size_t>(b.count);
  const std::size_t out_elements =
      kind == CollectiveKind::kAllGather || kind == CollectiveKind::kAllToAll ? c * n : c;
  bool correct = true;
  for (std::size_t i = 0; i < out_elements; ++i) {
    if (b.recv[i] != expected(kind, i, c, rank, n)) {
      correct = false;
      break;
    }
  }
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(options.iterations));
  for (int i = 0; i < options.iterations; ++i) {
    group.barrier();
    const auto start = std::chrono::steady_clock::now();
    run(kind, b, in_place, rank, n);
    const auto end = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double>(end - start).count());
  }
  cost::CollectivePoint point;
  const double elements = gathered(kind) ? static_cast<double>(c) * n : static_cast<double>(c);
  point.message = cost::Bytes{elements * sizeof(float)};
  point.in_place = in_place;
  point.time = to_measured(kernels::summarize(group.max(samples)));
  point.correct = group.all(correct);
  return point;
}

}  // namespace parasim::calib
