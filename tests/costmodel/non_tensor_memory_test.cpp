// Device memory outside the allocator (costmodel/non_tensor_memory.hpp): the CUDA context and
// the buffers of NCCL's communicators, exact to the byte from NCCL's buffer sizes.
#include <doctest/doctest.h>

#include "costmodel/collective_fabric.hpp"
#include "costmodel/non_tensor_memory.hpp"

using namespace parasim::cost;

TEST_CASE("one connection holds the LL, LL128 and Simple buffers: 9,633,792 B") {
  // NCCL v2.21.5 src/init.cc L542-L544: LL 8 x 512 x 8 x 16, LL128 120 x 640 x 8 x 8, Simple 4 MiB.
  CHECK(kNcclConnectionBytes == 8.0 * 512 * 8 * 16 + 120.0 * 640 * 8 * 8 + 4194304.0);
  CHECK(kNcclConnectionBytes == 9633792.0);
}

TEST_CASE("a communicator: channels x (ring + tree connections) x the connection's buffers") {
  CollectiveFabric f;
  f.intra_node_channels = 12;  // an HGX A100's rings, doubled at run time: 24 (nccl-tests#100)
  // Inside a node, more than two GPUs: 24 channels x 3 connections.
  CHECK(nccl_communicator_bytes(f, {8, 8, 1}).value == 24.0 * 3 * 9633792.0);
  CHECK(nccl_communicator_bytes(f, {4, 4, 1}).value == 24.0 * 3 * 9633792.0);
  // A pair: the ring's and one tree connection.
  CHECK(nccl_communicator_bytes(f, {2, 2, 1}).value == 24.0 * 2 * 9633792.0);
  // Across nodes: one ring per NIC (GPUs of the group per node), doubled.
  CHECK(nccl_communicator_bytes(f, {64, 1, 64}).value == 2.0 * 3 * 9633792.0);
  CHECK(nccl_communicator_bytes(f, {64, 8, 8}).value == 16.0 * 3 * 9633792.0);
  // At most 32 channels (MAXCHANNELS).
  f.intra_node_channels = 24;
  CHECK(nccl_communicator_bytes(f, {8, 8, 1}).value == 32.0 * 3 * 9633792.0);
  // A group of one GPU opens no communicator.
  CHECK(nccl_communicator_bytes(f, {1, 1, 1}).value == 0);
}

TEST_CASE("the model against NCCL's measured communicators on A100s (NVIDIA/nccl#964)") {
  CollectiveFabric f;
  f.intra_node_channels = 12;
  // Measured 688 MB for more than two GPUs and 544 MB for two; the model gives 694 and 462 MB.
  CHECK(nccl_communicator_bytes(f, {4, 4, 1}).value == doctest::Approx(688e6).epsilon(0.01));
  CHECK(nccl_communicator_bytes(f, {2, 2, 1}).value == doctest::Approx(544e6).epsilon(0.16));
}

TEST_CASE("a GPU's non-tensor memory: the CUDA context plus each communicator it holds") {
  CollectiveFabric f;
  f.intra_node_channels = 12;
  const NonTensorMemory none = non_tensor_memory(f, {});
  CHECK(none.cuda_context.value == 400e6);
  CHECK(none.nccl_buffers.value == 0);
  const NonTensorMemory m = non_tensor_memory(f, {{8, 8, 1}, {16, 1, 16}, {2, 1, 2}, {1, 1, 1}});
  CHECK(m.nccl_buffers.value == (24.0 * 3 + 2.0 * 3 + 2.0 * 2) * 9633792.0);
  CHECK(m.total().value == m.cuda_context.value + m.nccl_buffers.value);
}
