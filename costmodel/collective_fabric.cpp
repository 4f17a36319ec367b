#include "costmodel/collective_fabric.hpp"

namespace parasim::cost {
namespace {

// DGX A100 (and Azure NDm A100 v4, the same 8x A100 SXM4 + NVSwitch + 8x HDR node).
//   NVLink: 235.65 GB/s busbw of all_reduce_perf at 8 GiB over 8 GPUs, the average of 729 nodes
//     (microsoft/superbench-results v0.4.0, Azure-NDmv4-A100/baseline.json), of 300 GB/s: 0.786
//     (other runs: 231.58 at 8 GiB, Azure/AI-benchmarking-guide ND_A100_v4_results.md; 232.54,
//     NVIDIA/nccl-tests issue 175).
//   HDR NIC: 23.94 GB/s per 200 Gb/s port, ib_write from 1 MiB up (same superbench dataset), of
//     25 GB/s: 0.958; NVIDIA: "8x200Gbit/s IB cards and we measure 192GB/s AllReduce BusBW"
//     (NVIDIA/nccl issue 812) = 8 x 24 GB/s.
//   CPU: dual AMD Rome 7742 (DGX A100 datasheet). Channels: NCCL's search finds 6 rings at 40 GB/s
//     on a DGX A100 and duplicates them to 12 x 20 (NVIDIA/nccl v2.21.5-1 src/graph/search.cc
//     838-856), 24 after the runtime doubling, as logged in NVIDIA/nccl-tests issue 100.
//   No NVLink SHARP on A100's NVSwitch (second generation).
CollectiveFabric dgx_a100() {
  CollectiveFabric f;
  f.intra_node_efficiency = 235.65 / 300.0;
  f.inter_node_efficiency = 23.94 / 25.0;
  f.arch = NcclGpuArch::kAmpere;
  f.cpu = HostCpuVendor::kAmd;
  f.intra_node_channels = 12;
  f.published = true;
  return f;
}

// DGX H100.
//   NVLink: "360 GB/s is exactly what we'd expect on H100" for all_gather / all_reduce from
//     128 MB to 16 GB (sjeaugey, NVIDIA/nccl-tests issue 326), of 450 GB/s: 0.80 (370 GB/s "with
//     the protocol overhead (~20%)", issue 212).
//   NDR NIC: "CX-7 NICs at NDR rate (400Gbps) should achieve up to 48-49GB/s per NIC"
//     (NVIDIA/nccl-tests issue 267), of 50 GB/s: 0.97.
//   NVLS all-reduce: "peak busBw of ~480GB/s (algbw ~275GB/s)" (sjeaugey, NVIDIA/nccl-tests issue
//     212; Azure ND H100 v5 measures 478.87 GB/s at 8 GiB, Azure/AI-benchmarking-guide): 480/450.
//   CPU: dual Intel Xeon Platinum 8480C (DGX H100 datasheet). Channels: 6 rings at 60 GB/s
//     duplicated to 12 x 30 = 360 GB/s (search.cc as above; the 360 GB/s busbw above).
CollectiveFabric dgx_h100() {
  CollectiveFabric f;
  f.intra_node_efficiency = 360.0 / 450.0;
  f.inter_node_efficiency = 48.5 / 50.0;
  f.arch = NcclGpuArch::kHopper;
  f.cpu = HostCpuVendor::kIntel;
  f.intra_node_channels = 12;
  f.nvls = true;
  f.nvls_allreduce_busbw_share = 480.0 / 450.0;
  f.published = true;
  return f;
}

// DGX B200 (8x B200, NVLink5 at 900 GB/s per direction, fifth-generation NVSwitch with NVLink
// SHARP, ConnectX-7 NDR).
//   NVLink: all_reduce_perf at 8 GiB over 8 B200 with NVLS off (ring): busbw 682.2 GB/s, NCCL
//     2.27.7 (stas00/ml-engineering @ 744d01e network/README.md, AWS p6-b200), of 900: 0.758;
//     GB200's NVLink5 ring on Azure ND GB200 v6 gives 679.6 (Azure/AI-benchmarking-guide
//     @ 2a370be).
//   NVLS all-reduce: the same sweep with NCCL's default choice (NVLS from 6 GPUs up): 838.0 GB/s,
//     of 900.
//   NDR NIC: the same ConnectX-7 as DGX H100 (no B200 InfiniBand busbw found): H100's 0.97.
//   Channels: NCCL's search takes 8 rings at 90 GB/s on NVLink5 (SM100 speeds) and duplicates
//     them to 16 (NVIDIA/nccl @ 5067397 src/graph/search.cc) [from the code, not a log].
//   Tuning row: Hopper's, NCCL's newest parasim carries (NCCL 2.30 has a Blackwell row).
//   CPU: dual Intel Xeon Platinum 8570 (DGX B200 datasheet).
CollectiveFabric dgx_b200() {
  CollectiveFabric f;
  f.intra_node_efficiency = 682.2 / 900.0;
  f.inter_node_efficiency = 48.5 / 50.0;
  f.arch = NcclGpuArch::kHopper;
  f.cpu = HostCpuVendor::kIntel;
  f.intra_node_channels = 16;
  f.nvls = true;
  f.nvls_allreduce_busbw_share = 838.0 / 900.0;
  f.published = true;
  return f;
}

}  // namespace

CollectiveFabric preset_collective_fabric(std::string_view preset_name) {
  if (preset_name == "dgx-b200") return dgx_b200();
  if (preset_name == "dgx-a100-80gb") return dgx_a100();
  if (preset_name == "dgx-h100") return dgx_h100();
  if (preset_name == "hgx-h200") {
    // The same GH100 NVLink4, third-generation NVSwitch and ConnectX-7 NDR as DGX H100 (the
    // preset's NIC is that assumption); the host CPU is the system vendor's choice: NCCL's
    // default (non-AMD) row.
    return dgx_h100();
  }
  if (preset_name == "dgx-h800") {
    // H800: the GH100 NVLink4 with 8 of its 18 links (400 GB/s bidirectional) and the same
    // ConnectX-7 NDR; no published nccl-tests run at hand, so H100's shares are assumed and NVLS
    // (not documented for H800) is left off.
    CollectiveFabric f = dgx_h100();
    f.nvls = false;
    f.published = false;
    return f;
  }
  if (preset_name == "perlmutter-a100") {
    // A100 NVLink3 (the DGX A100 share assumed for its mesh), Slingshot-11 with no published
    // NCCL figure at hand (the HDR share assumed); AMD EPYC 7763 hosts
    // (docs.nersc.gov/systems/perlmutter/architecture/).
    CollectiveFabric f = dgx_a100();
    f.published = false;
    return f;
  }
  if (preset_name == "gb200-nvl72" || preset_name == "gb300-nvl72") {
    // One NVLink domain of 72 GPUs (multi-node NVLink): NCCL 2.25.2+ runs NVLink SHARP over the
    // whole domain ("GB200 MNNVL is supported in NCCL version 2.25.2 and later", NVIDIA's
    // multi-node NVLink tuning guide; sjeaugey, NVIDIA/nccl#1286: on MNNVL systems "the full
    // features of NVLink will be available to all GPUs ... including NVLink SHARP"; NCCL 2.30
    // src/transport/nvls.cc builds the multicast group over the clique's ranks). No published
    // NVL72 nccl-tests figures at hand beyond one tray: NVLink5's ring share as Azure ND GB200 v6
    // measures it (all_reduce_perf, ring, in place, 4 GPUs, 8 GiB: busbw 679.61 GB/s of 900,
    // NCCL 2.25.1; Azure/AI-benchmarking-guide @ 2a370be), the default NIC share, and DGX H100's
    // NVLS busbw share (480 / 450) assumed for the domain's NVSwitches.
    CollectiveFabric f;
    f.intra_node_efficiency = 679.61 / 900.0;
    f.arch = NcclGpuArch::kHopper;  // NCCL's newest tuning row parasim carries (Hopper's)
    f.nvls = true;
    f.nvls_allreduce_busbw_share = 480.0 / 450.0;
    f.published = false;
    return f;
  }
  // mi300x-8x (RCCL has its own tuning tables, not modelled) and written-out clusters: defaults.
  return CollectiveFabric{};
}

}  // namespace parasim::cost
