#include "costmodel/cluster_presets.hpp"

#include <utility>

#include "costmodel/kernel_presets.hpp"

namespace parasim::cost {
namespace {

// Assumptions shared by all presets (not datasheet figures):
//
// Kernel efficiencies (the fractions of these peaks that kernels reach) are measurements, one
// KernelPreset per device with a source per field: kernel_presets.cpp.
//
// Kernel launch overhead, 4 us per kernel: host-side launch plus GPU dispatch on one stream
// without CUDA graphs, a commonly quoted few-microsecond figure. Replace by calibration.
constexpr double kLaunchOverheadUs = 4.0;
// One-hop latency inside a node (NVLink / Infinity Fabric), 1 us. ASTRA-sim's validated HGX-H100
// network uses 936.25 ns per hop (examples/network/analytical/HGX-H100-validated.yml); NCCL's
// per-hop NVLink latency is 0.6 us (LL) to 1.9 us (LL128) (src/graph/tuning.cc). Per-collective
// base latencies (6.6-8.4 us in NCCL) belong to the collective model, not to the link.
constexpr double kIntraNodeLatencyUs = 1.0;
// One-hop latency between nodes through the NIC, 5 us: NCCL's per-hop NET latency is 2.7 us (Ring
// LL) to 5 us (Tree LL), 4-8.5 us for LL128 (src/graph/tuning.cc). Assumed the same for
// InfiniBand, RoCE and Slingshot.
constexpr double kInterNodeLatencyUs = 5.0;

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;

constexpr const char* kSharedAssumptions =
    "Assumptions (not datasheet): kernel launch overhead 4 us; one-hop latency 1 us inside a node "
    "(ASTRA-sim HGX-H100-validated 936.25 ns; NCCL NVLink per-hop 0.6-1.9 us) and 5 us between "
    "nodes (NCCL NET per-hop 2.7-5 us for LL); sizes read as decimal GB.";

LinkSpec link(double gb_per_s, double latency_us) {
  return LinkSpec{Bandwidth{gb_per_s * kGiga}, sim::Time::us(latency_us)};
}

// A100 SXM4 80GB. Datasheet (nvidia.com/en-us/data-center/a100/): dense BF16/FP16 312 TFLOP/s,
// TF32 156, FP32 19.5, 80 GB HBM2e at 2,039 GB/s, NVLink 600 GB/s (12 links, both directions).
// No FP8. 108 SMs and the 1,410 MHz boost clock: NVIDIA A100 Tensor Core GPU Architecture
// whitepaper (108 SMs x 4 tensor cores x 512 FLOP/clock x 1.41 GHz = 311.9 TFLOP/s). 400 W.
DeviceSpec a100_sxm4_80gb() {
  DeviceSpec d;
  d.name = "A100-SXM4-80GB";
  d.peak_fp32 = FlopRate{19.5 * kTera};
  d.peak_tf32 = FlopRate{156.0 * kTera};
  d.peak_bf16 = FlopRate{312.0 * kTera};
  d.peak_fp16 = FlopRate{312.0 * kTera};
  d.peak_fp8 = FlopRate{0.0};
  d.hbm_capacity = Bytes{80.0 * kGiga};
  d.hbm_bandwidth = Bandwidth{2039.0 * kGiga};
  d.kernel_launch_overhead = sim::Time::us(kLaunchOverheadUs);
  d.sm_count = 108;
  d.architecture = Architecture::kAmpere;
  d.peak_clock_mhz = 1410;  // whitepaper boost: 108 SMs x 4 x 512 FLOP/clock x 1.41 GHz = 312 T
  d.tdp_watts = 400;        // datasheet, A100 SXM
  return d;
}

// A100 SXM4 40GB (the DGX A100 320GB system). Datasheet (nvidia.com/en-us/data-center/a100/):
// the same GA100 compute as the 80 GB part (312 TFLOP/s BF16/FP16 dense, 108 SMs), 40 GB HBM2 at
// 1,555 GB/s.
DeviceSpec a100_sxm4_40gb() {
  DeviceSpec d = a100_sxm4_80gb();
  d.name = "A100-SXM4-40GB";
  d.hbm_capacity = Bytes{40.0 * kGiga};
  d.hbm_bandwidth = Bandwidth{1555.0 * kGiga};
  return d;
}

// H100 SXM5 80GB. Datasheet (nvidia.com/en-us/data-center/h100/) gives sparse figures; the dense
// ones are half: BF16/FP16 989.4, TF32 494.7, FP8 1978.9 TFLOP/s (glennklockwood.com/garden/
// processors/h100: 528 tensor cores x 1024 FLOP/clock x 1.83 GHz). FP32 66.9 TFLOP/s, 80 GB HBM3
// at 3.35 TB/s, NVLink4 900 GB/s (18 links, both directions). 132 SMs: NVIDIA H100 Tensor Core
// GPU Architecture whitepaper (SXM5). Boost clock 1,830 MHz, the clock of the peaks above
// (528 x 1024 x 1.83 GHz = 989.4 TFLOP/s, glennklockwood.com as above); up to 700 W (datasheet).
DeviceSpec h100_sxm5_80gb() {
  DeviceSpec d;
  d.name = "H100-SXM5-80GB";
  d.peak_fp32 = FlopRate{66.9 * kTera};
  d.peak_tf32 = FlopRate{494.7 * kTera};
  d.peak_bf16 = FlopRate{989.4 * kTera};
  d.peak_fp16 = FlopRate{989.4 * kTera};
  d.peak_fp8 = FlopRate{1978.9 * kTera};
  d.hbm_capacity = Bytes{80.0 * kGiga};
  d.hbm_bandwidth = Bandwidth{3350.0 * kGiga};
  d.kernel_launch_overhead = sim::Time::us(kLaunchOverheadUs);
  d.sm_count = 132;
  d.architecture = Architecture::kHopper;
  d.peak_clock_mhz = 1830;
  d.tdp_watts = 700;
  return d;
}

// H800 SXM5 80GB: the export variant of H100 SXM5, the same GH100 compute and HBM3 (peaks, 132
// SMs, 80 GB at 3.35 TB/s) with NVLink cut to 400 GB/s bidirectional (NVIDIA H800 SXM5
// specifications); DeepSeek-V3's cluster (arXiv 2412.19437, sec. 3.1).
DeviceSpec h800_sxm5_80gb() {
  DeviceSpec d = h100_sxm5_80gb();
  d.name = "H800-SXM5-80GB";
  return d;
}

// H200 SXM 141GB. Datasheet (nvidia.com/en-us/data-center/h200/): 141 GB HBM3e at 4.8 TB/s; the
// same GH100 compute as H100 SXM5 (same dense peaks, 132 SMs, so the same 1,830 MHz clock of
// the peaks), NVLink4 900 GB/s, up to 700 W.
DeviceSpec h200_sxm_141gb() {
  DeviceSpec d = h100_sxm5_80gb();
  d.name = "H200-SXM-141GB";
  d.hbm_capacity = Bytes{141.0 * kGiga};
  d.hbm_bandwidth = Bandwidth{4800.0 * kGiga};
  return d;
}

// B200 SXM (DGX B200 / HGX B200, 1,000 W). DGX B200 datasheet (nvidia.com/en-us/data-center/
// dgx-b200/): 8 GPUs with 1,440 GB HBM3e in all (180 GB each) at 64 TB/s (8 TB/s each), NVLink5
// 14.4 TB/s in all (1.8 TB/s per GPU, both directions); the dense peaks are half its sparse
// figures: BF16/FP16 2.25, TF32 1.125, FP8 4.5 PFLOP/s. FP32 80 TFLOP/s (HGX B200 at 1,000 W,
// glennklockwood.com/garden/processors/B200). 148 SMs (FlashAttention-4, arXiv 2603.05451
// section 2.2: 148 SMs x 8192 FLOP/clock x 1850 MHz = 2.25 PFLOP/s, the clock of the peaks).
// Dense FP4 9 PFLOP/s (18 sparse, the datasheet's 144 PFLOP/s for 8 GPUs). 1,000 W.
DeviceSpec b200_sxm_180gb() {
  DeviceSpec d;
  d.name = "B200-SXM-180GB";
  d.peak_fp32 = FlopRate{80.0 * kTera};
  d.peak_tf32 = FlopRate{1125.0 * kTera};
  d.peak_bf16 = FlopRate{2250.0 * kTera};
  d.peak_fp16 = FlopRate{2250.0 * kTera};
  d.peak_fp8 = FlopRate{4500.0 * kTera};
  d.hbm_capacity = Bytes{180.0 * kGiga};
  d.hbm_bandwidth = Bandwidth{8000.0 * kGiga};
  d.kernel_launch_overhead = sim::Time::us(kLaunchOverheadUs);
  d.peak_fp4 = FlopRate{9000.0 * kTera};
  d.sm_count = 148;
  d.architecture = Architecture::kBlackwell;
  d.peak_clock_mhz = 1850;
  d.tdp_watts = 1000;
  return d;
}

// GB200's Blackwell GPU (GB200 NVL72, up to 1,200 W). NVIDIA's GB200 NVL72 datasheet
// (nvidia.com/en-us/data-center/gb200-nvl72/) gives rack figures for 72 GPUs, sparse where
// sparsity applies: FP16/BF16 360 PFLOP/s, TF32 180, FP8 720, FP64 3,240 TFLOP/s; HBM3e up to
// 13.4 TB at 576 TB/s; NVLink 130 TB/s. Per GPU, dense = half: BF16 2.5 PFLOP/s, TF32 1.25, FP8
// 5; 186 GB at 8 TB/s (MLCommons' GB200-NVL72 system description lists 186 GB). FP32 90 TFLOP/s
// [derived: twice the FP64 45 TFLOP/s, as B200's 80 against its 40]. Others quote 2.25 PFLOP/s
// BF16 for GB200 (torchao's roofline_utils.py) : a scenario may give device.peak_bf16. SMs as
// B200's 148. FP4 10 PFLOP/s dense (rack 1,440 sparse / 72 / 2). The clock of these peaks is
// not published (2.5 PFLOP/s is not 148 SMs x 8192 x B200's 1,850 MHz): unknown, 0. 1,200 W.
DeviceSpec gb200_186gb() {
  DeviceSpec d = b200_sxm_180gb();
  d.name = "GB200-186GB";
  d.peak_fp32 = FlopRate{90.0 * kTera};
  d.peak_tf32 = FlopRate{1250.0 * kTera};
  d.peak_bf16 = FlopRate{2500.0 * kTera};
  d.peak_fp16 = FlopRate{2500.0 * kTera};
  d.peak_fp8 = FlopRate{5000.0 * kTera};
  d.peak_fp4 = FlopRate{10000.0 * kTera};
  d.hbm_capacity = Bytes{186.0 * kGiga};
  d.hbm_bandwidth = Bandwidth{8000.0 * kGiga};
  d.peak_clock_mhz = 0;
  d.tdp_watts = 1200;
  return d;
}

// MI300X OAM 192GB. Datasheet (amd.com/en/products/accelerators/instinct/mi300/mi300x.html):
// dense BF16/FP16 1307.4 TFLOP/s, TF32 653.7, FP32 (matrix) 163.4, FP8 2614.9, 192 GB HBM3 at
// 5.3 TB/s, 304 compute units (used as sm_count), Infinity Fabric 128 GB/s per link (both
// directions), 7 links to the 7 peers of an 8-GPU platform. Peak engine clock 2,100 MHz, the
// clock of the peaks (304 CUs x 2048 FLOP/clock x 2.1 GHz = 1307.4 TFLOP/s bf16); 750 W.
DeviceSpec mi300x_oam_192gb() {
  DeviceSpec d;
  d.name = "MI300X-OAM-192GB";
  d.peak_fp32 = FlopRate{163.4 * kTera};
  d.peak_tf32 = FlopRate{653.7 * kTera};
  d.peak_bf16 = FlopRate{1307.4 * kTera};
  d.peak_fp16 = FlopRate{1307.4 * kTera};
  d.peak_fp8 = FlopRate{2614.9 * kTera};
  d.hbm_capacity = Bytes{192.0 * kGiga};
  d.hbm_bandwidth = Bandwidth{5300.0 * kGiga};
  d.kernel_launch_overhead = sim::Time::us(kLaunchOverheadUs);
  d.sm_count = 304;
  d.architecture = Architecture::kCdna3;
  d.peak_clock_mhz = 2100;
  d.tdp_watts = 750;
  return d;
}

// B300 SXM (HGX B300 / DGX B300, Blackwell Ultra, 1,100 W). NVIDIA's HGX B300 figures for 8 GPUs,
// sparse where sparsity applies (glennklockwood.com/garden/processors/B300, which tabulates
// them; NVIDIA HGX platform page): FP16/BF16 36 PFLOP/s, TF32 18, FP8 72, FP4 144 sparse and
// 105 dense, FP32 600 TFLOP/s; up to 2.3 TB HBM3e. Per GPU, dense: BF16 2.25 PFLOP/s, TF32 1.125,
// FP8 4.5, FP4 13.125, FP32 75 TFLOP/s; 288 GB (8 stacks of 12-high HBM3e) at 8 TB/s
// (glennklockwood.com; torchao's roofline_utils.py, "B300 SXM6 AC", 8 TB/s). Others quote FP4 14
// PFLOP/s, 270 GB usable and 7.7 TB/s, 1.1 kW (verda.com/blog/gb300-nvl72-architecture): a
// scenario may give device.peak.fp4 or device.hbm_capacity. SMs: Blackwell Ultra's 160 (NVIDIA
// "Inside NVIDIA Blackwell Ultra" technical blog, as reported); how many a B300 enables is not
// published [assumption: all]. The clock of the peaks is not published: 0.
DeviceSpec b300_sxm_288gb() {
  DeviceSpec d;
  d.name = "B300-SXM-288GB";
  d.peak_fp32 = FlopRate{75.0 * kTera};
  d.peak_tf32 = FlopRate{1125.0 * kTera};
  d.peak_bf16 = FlopRate{2250.0 * kTera};
  d.peak_fp16 = FlopRate{2250.0 * kTera};
  d.peak_fp8 = FlopRate{4500.0 * kTera};
  d.peak_fp4 = FlopRate{13125.0 * kTera};
  d.hbm_capacity = Bytes{288.0 * kGiga};
  d.hbm_bandwidth = Bandwidth{8000.0 * kGiga};
  d.kernel_launch_overhead = sim::Time::us(kLaunchOverheadUs);
  d.sm_count = 160;
  d.architecture = Architecture::kBlackwell;
  d.peak_clock_mhz = 0;
  d.tdp_watts = 1100;
  return d;
}

// GB300's Blackwell Ultra GPU (GB300 NVL72, 1,400 W). NVIDIA's GB300 NVL72 datasheet
// (nvidia.com/en-us/data-center/gb300-nvl72/) gives rack figures for 72 GPUs, sparse where
// sparsity applies: FP4 1,440 PFLOP/s sparse and 1,080 dense, FP8/FP6 720, FP16/BF16 360, TF32
// 180; HBM3e up to 21 TB (72 x 288 GB = 20.7 TB) at 576 TB/s; NVLink 130 TB/s. Per GPU, dense:
// FP4 15 PFLOP/s, FP8 5, BF16 2.5, TF32 1.25; 288 GB at 8 TB/s. FP32 80 TFLOP/s and 1.4 kW per
// GPU: verda.com/blog/gb300-nvl72-architecture (secondary; it reports 279 GB usable). SMs and
// the unknown clock as B300's.
DeviceSpec gb300_288gb() {
  DeviceSpec d = b300_sxm_288gb();
  d.name = "GB300-288GB";
  d.peak_fp32 = FlopRate{80.0 * kTera};
  d.peak_tf32 = FlopRate{1250.0 * kTera};
  d.peak_bf16 = FlopRate{2500.0 * kTera};
  d.peak_fp16 = FlopRate{2500.0 * kTera};
  d.peak_fp8 = FlopRate{5000.0 * kTera};
  d.peak_fp4 = FlopRate{15000.0 * kTera};
  d.tdp_watts = 1400;
  return d;
}

// H100 NVL 94GB (PCIe card; pairs joined by NVLink bridges). Datasheet (nvidia.com/en-us/
// data-center/h100/, H100 NVL column) gives sparse figures; dense = half: BF16/FP16 835.5 TFLOP/s
// (1,671 sparse), TF32 417.5 (835), FP8 1670.5 (3,341); FP32 60 TFLOP/s; 94 GB HBM3 at 3.9 TB/s;
// NVLink 600 GB/s (bridge, both directions), PCIe Gen5 128 GB/s; 350-400 W configurable (400 W
// here). 132 SMs (the full GH100 configuration of the SXM5 part, TechPowerUp GPU database,
// secondary). The clock of the peaks is not published: 0.
DeviceSpec h100_nvl_94gb() {
  DeviceSpec d;
  d.name = "H100-NVL-94GB";
  d.peak_fp32 = FlopRate{60.0 * kTera};
  d.peak_tf32 = FlopRate{417.5 * kTera};
  d.peak_bf16 = FlopRate{835.5 * kTera};
  d.peak_fp16 = FlopRate{835.5 * kTera};
  d.peak_fp8 = FlopRate{1670.5 * kTera};
  d.hbm_capacity = Bytes{94.0 * kGiga};
  d.hbm_bandwidth = Bandwidth{3900.0 * kGiga};
  d.kernel_launch_overhead = sim::Time::us(kLaunchOverheadUs);
  d.sm_count = 132;
  d.architecture = Architecture::kHopper;
  d.peak_clock_mhz = 0;
  d.tdp_watts = 400;
  return d;
}

// MI325X OAM 256GB. Datasheet (amd.com/en/products/accelerators/instinct/mi300/mi325x.html): the
// MI300X's CDNA 3 compute (304 CUs, 2,100 MHz peak engine clock, the same dense peaks: BF16/FP16
// 1307.4, TF32 653.7, FP32 matrix 163.4, FP8 2614.9 TFLOP/s), 256 GB HBM3E at 6 TB/s, Infinity
// Fabric as MI300X's (7 links x 128 GB/s both directions), 1,000 W.
DeviceSpec mi325x_oam_256gb() {
  DeviceSpec d = mi300x_oam_192gb();
  d.name = "MI325X-OAM-256GB";
  d.hbm_capacity = Bytes{256.0 * kGiga};
  d.hbm_bandwidth = Bandwidth{6000.0 * kGiga};
  d.tdp_watts = 1000;
  return d;
}

// MI355X OAM 288GB (CDNA 4, 1,400 W). Datasheet (amd.com/en/products/accelerators/instinct/mi350/
// mi355x.html): 256 CUs at a 2,400 MHz peak engine clock; dense BF16/FP16 2516.6 TFLOP/s, FP8
// and MXFP8 5033.2, MXFP6 and MXFP4 10066.3, FP32 157.3; 288 GB HBM3E at 8 TB/s; Infinity Fabric
// 7 links x 153.6 GB/s both directions. Each is 256 CUs x FLOP/clock x 2.4 GHz (FP8 8192
// FLOP/clock per CU: AMD at ISSCC 2026, as reported; BF16 4096, FP4 16384, FP32 256). CDNA 4 has
// no TF32 matrix rate (the datasheet lists none): a tf32 GEMM is priced at the FP32 rate
// [assumption].
DeviceSpec mi355x_oam_288gb() {
  DeviceSpec d;
  d.name = "MI355X-OAM-288GB";
  d.peak_fp32 = FlopRate{157.3 * kTera};
  d.peak_tf32 = FlopRate{157.3 * kTera};
  d.peak_bf16 = FlopRate{2516.6 * kTera};
  d.peak_fp16 = FlopRate{2516.6 * kTera};
  d.peak_fp8 = FlopRate{5033.2 * kTera};
  d.peak_fp4 = FlopRate{10066.3 * kTera};
  d.hbm_capacity = Bytes{288.0 * kGiga};
  d.hbm_bandwidth = Bandwidth{8000.0 * kGiga};
  d.kernel_launch_overhead = sim::Time::us(kLaunchOverheadUs);
  d.sm_count = 256;
  d.architecture = Architecture::kCdna4;
  d.peak_clock_mhz = 2400;
  d.tdp_watts = 1400;
  return d;
}

ClusterSpec node(std::string name, DeviceSpec device, int gpus_per_node, double intra_gb_per_s,
                 double inter_gb_per_s) {
  ClusterSpec c;
  c.name = std::move(name);
  c.device = std::move(device);
  c.gpus_per_node = gpus_per_node;
  c.nodes = 1;
  c.intra_node = link(intra_gb_per_s, kIntraNodeLatencyUs);
  c.inter_node = link(inter_gb_per_s, kInterNodeLatencyUs);
  return c;
}

ClusterPreset preset(std::string name, std::string description, std::string source,
                     DeviceSpec device, const KernelPreset& kernels, int gpus_per_node,
                     double intra_gb_per_s, double inter_gb_per_s) {
  device.kernels = kernels.kernels;
  ClusterSpec spec = node(name, std::move(device), gpus_per_node, intra_gb_per_s, inter_gb_per_s);
  return ClusterPreset{std::move(name), std::move(description),
                       std::move(source) + " " + kSharedAssumptions, std::move(spec),
                       kernels.sources};
}

std::vector<ClusterPreset> build_presets() {
  std::vector<ClusterPreset> presets;
  presets.push_back(preset(
      "dgx-a100-80gb",
      "NVIDIA DGX A100: 8x A100 SXM4 80GB, NVLink3 300 GB/s per direction, 8x HDR 200 Gb/s",
      "Datasheet nvidia.com/en-us/data-center/a100/: 312 TFLOP/s BF16/FP16 dense, 156 TF32, 19.5 "
      "FP32, 80 GB HBM2e, 2,039 GB/s, NVLink 600 GB/s bidirectional = 300 GB/s per direction. "
      "108 SMs: A100 architecture whitepaper. NICs: DGX A100 datasheet, 8x ConnectX-6 HDR "
      "200 Gb/s, one per GPU = 25 GB/s per GPU per direction.",
      a100_sxm4_80gb(), a100_kernels(true), 8, 300.0, 25.0));
  presets.push_back(preset(
      "dgx-a100-40gb",
      "NVIDIA DGX A100 (320GB): 8x A100 SXM4 40GB, NVLink3 300 GB/s per direction, 8x HDR 200 Gb/s",
      "Datasheet nvidia.com/en-us/data-center/a100/: compute as the 80 GB part (312 TFLOP/s "
      "BF16/FP16 dense, 156 TF32, 19.5 FP32, 108 SMs), 40 GB HBM2 at 1,555 GB/s, NVLink 600 GB/s "
      "bidirectional = 300 GB/s per direction. NICs: DGX A100 datasheet, 8x ConnectX-6 HDR "
      "200 Gb/s, one per GPU = 25 GB/s per GPU per direction.",
      a100_sxm4_40gb(), a100_kernels(false), 8, 300.0, 25.0));
  presets.push_back(preset(
      "dgx-h100",
      "NVIDIA DGX H100: 8x H100 SXM5 80GB, NVLink4 450 GB/s per direction, 8x NDR 400 Gb/s",
      "Datasheet nvidia.com/en-us/data-center/h100/: dense = half the sparse figures, 989.4 "
      "TFLOP/s BF16/FP16, 494.7 TF32, 1978.9 FP8 (glennklockwood.com/garden/processors/h100), "
      "66.9 FP32, 80 GB HBM3, 3.35 TB/s, NVLink 900 GB/s bidirectional = 450 GB/s per direction. "
      "132 SMs: H100 architecture whitepaper. NICs: DGX H100 datasheet, 8x ConnectX-7 400 Gb/s, "
      "one per GPU = 50 GB/s per GPU per direction.",
      h100_sxm5_80gb(), h100_sxm_kernels(), 8, 450.0, 50.0));
  presets.push_back(preset(
      "dgx-h800",
      "H800 node: 8x H800 SXM5 80GB, NVLink 200 GB/s per direction, 8x InfiniBand 400 Gb/s",
      "H800 SXM5: compute and HBM as H100 SXM5 (the same GH100), NVLink 400 GB/s bidirectional = "
      "200 GB/s per direction (NVIDIA H800 SXM5 specifications). DeepSeek-V3 technical report, "
      "arXiv:2412.19437, sec. 3.1-3.2.2: 8 GPUs per node over NVLink and NVSwitch, InfiniBand "
      "between nodes at 50 GB/s per GPU (one 400 Gb/s NIC each); it measures NVLink at about "
      "160 GB/s. Kernel efficiencies: H100 SXM5's (the same silicon).",
      h800_sxm5_80gb(), h100_sxm_kernels(), 8, 200.0, 50.0));
  presets.push_back(preset(
      "hgx-h200",
      "NVIDIA HGX H200: 8x H200 SXM 141GB, NVLink4 450 GB/s per direction, 400 Gb/s NIC per GPU",
      "Datasheet nvidia.com/en-us/data-center/h200/: 141 GB HBM3e, 4.8 TB/s, NVLink 900 GB/s "
      "bidirectional (MLCommons system H200-SXM-141GBx8: \"18x 4th Gen NVLink, 900GB/s\"); "
      "compute peaks and 132 SMs as H100 SXM5. NIC: assumption, one ConnectX-7 400 Gb/s per GPU "
      "(50 GB/s) as in DGX H100; HGX boards leave the NIC choice to the system vendor.",
      h200_sxm_141gb(), h200_sxm_kernels(), 8, 450.0, 50.0));
  presets.push_back(preset(
      "dgx-b200",
      "NVIDIA DGX B200: 8x B200 SXM 180GB, NVLink5 900 GB/s per direction, 8x NDR 400 Gb/s",
      "Datasheet nvidia.com/en-us/data-center/dgx-b200/: 8 GPUs, 1,440 GB HBM3e (180 GB each) "
      "at 64 TB/s (8 TB/s each), NVLink5 14.4 TB/s aggregate = 1.8 TB/s per GPU bidirectional = "
      "900 GB/s per direction; dense = half the sparse figures: 2.25 PFLOP/s BF16/FP16, 1.125 "
      "TF32, 4.5 FP8; FP32 80 TFLOP/s (glennklockwood.com/garden/processors/B200, HGX B200 at "
      "1,000 W). 148 SMs: FlashAttention-4 paper (arXiv 2603.05451) section 2.2. NICs: 8x "
      "ConnectX-7 400 Gb/s for the compute fabric, one per GPU = 50 GB/s per GPU per direction.",
      b200_sxm_180gb(), b200_kernels(), 8, 900.0, 50.0));
  presets.push_back(preset(
      "gb200-nvl72",
      "NVIDIA GB200 NVL72 rack: 72 GB200 GPUs in one NVLink5 domain (900 GB/s per direction), 18 "
      "hosts of 4, a 400 Gb/s NIC per GPU",
      "GB200 NVL72 datasheet nvidia.com/en-us/data-center/gb200-nvl72/ (rack: 360 PFLOP/s "
      "BF16, 720 FP8 with sparsity; 13.4 TB HBM3e at 576 TB/s; NVLink 130 TB/s = 1.8 TB/s per "
      "GPU bidirectional = 900 GB/s per direction), per GPU dense as half the sparse figure; "
      "NVIDIA's multi-node NVLink tuning guide (docs.nvidia.com/multi-node-nvlink-systems/): 18 "
      "compute trays of 4 GPUs and 2 Grace CPUs, 9 NVLink switch trays; one 72-GPU NVLink domain "
      "is one parasim node, 4 GPUs per host for the launcher. NIC: assumption, one ConnectX-7 "
      "400 Gb/s per GPU (50 GB/s) as on DGX B200. Kernel efficiencies: B200's (the same "
      "Blackwell silicon). NCCL's figures for the rack are not published: B200's defaults.",
      gb200_186gb(), b200_kernels(), 72, 900.0, 50.0));
  presets.back().spec.gpus_per_host = 4;
  presets.push_back(preset(
      "dgx-b300",
      "NVIDIA DGX B300: 8x B300 SXM 288GB (Blackwell Ultra), NVLink5 900 GB/s per direction, 8x "
      "ConnectX-8 800 Gb/s",
      "HGX B300 figures for 8 GPUs (glennklockwood.com/garden/processors/B300, NVIDIA's HGX "
      "page): dense = half the sparse figures, 2.25 PFLOP/s BF16/FP16, 1.125 TF32, 4.5 FP8, "
      "13.125 FP4 (105 PFLOP/s dense for 8), 75 TFLOP/s FP32; up to 2.3 TB HBM3e = 288 GB per "
      "GPU at 8 TB/s; NVLink5 14.4 TB/s aggregate = 1.8 TB/s per GPU bidirectional = 900 GB/s "
      "per direction; 1,100 W per GPU (verda.com, which also quotes 270 GB usable, 7.7 TB/s and "
      "14 PFLOP/s FP4). 160 SMs: Blackwell Ultra as NVIDIA describes it [assumption: all "
      "enabled]; boost clock not published (device.clock_mhz refused, give device.peak). NICs: "
      "DGX B300, 8 single-port ConnectX-8 at 800 Gb/s, one per GPU = 100 GB/s per GPU per "
      "direction. Kernel efficiencies: B200's measurements, except the bf16 GEMM ceiling from "
      "Transformer Engine's B300 GEMM profile. NCCL's figures for B300: not published, "
      "defaults.",
      b300_sxm_288gb(), b300_kernels(), 8, 900.0, 100.0));
  presets.push_back(preset(
      "gb300-nvl72",
      "NVIDIA GB300 NVL72 rack: 72 Blackwell Ultra GPUs in one NVLink5 domain (900 GB/s per "
      "direction), 18 hosts of 4, a ConnectX-8 800 Gb/s NIC per GPU",
      "GB300 NVL72 datasheet nvidia.com/en-us/data-center/gb300-nvl72/ (rack, sparse: 360 "
      "PFLOP/s BF16, 720 FP8, 1,440 FP4 (1,080 dense), 180 TF32; up to 21 TB HBM3e (288 GB per "
      "GPU) at 576 TB/s; NVLink 130 TB/s = 1.8 TB/s per GPU bidirectional = 900 GB/s per "
      "direction), per GPU dense as half the sparse figure: 2.5 PFLOP/s BF16, 5 FP8, 15 FP4, "
      "1.25 TF32; FP32 80 TFLOP/s and 1.4 kW per GPU from verda.com/blog/gb300-nvl72-architecture "
      "(secondary; it reports 279 GB usable). NVIDIA's NVL72 reference architecture "
      "(docs.nvidia.com/enterprise-reference-architectures/nvl72-ai-factory/, components): "
      "compute tray of 4 GPUs and 2 Grace CPUs with 4 ConnectX-8 HCAs, 18 trays, 9 NVLink switch "
      "trays; one ConnectX-8 800 Gb/s per GPU = 100 GB/s per direction. One 72-GPU NVLink "
      "domain is one parasim node, 4 GPUs per host. Boost clock not published (device.clock_mhz "
      "refused, give device.peak). NO KERNEL MEASUREMENTS OF GB300: HGX B300's kernel "
      "efficiencies (the same Blackwell Ultra silicon at 1.1 kW). NCCL's figures for the rack: "
      "not published, defaults.",
      gb300_288gb(),
      borrowed_kernels(b300_kernels(), "GB300", "B300 (same Blackwell Ultra silicon)"), 72,
      900.0, 100.0));
  presets.back().spec.gpus_per_host = 4;
  presets.push_back(preset(
      "h100-nvl-pair",
      "Two H100 NVL 94GB PCIe cards joined by NVLink bridges (300 GB/s per direction) as one "
      "node; pairs and hosts talk at 400 Gb/s per GPU",
      "Datasheet nvidia.com/en-us/data-center/h100/ (H100 NVL): dense = half the sparse figures, "
      "835.5 TFLOP/s BF16/FP16, 417.5 TF32, 1670.5 FP8, 60 FP32, 94 GB HBM3 at 3.9 TB/s, NVLink "
      "bridge 600 GB/s bidirectional = 300 GB/s per direction between the two cards of a pair, "
      "PCIe Gen5 128 GB/s (64 per direction), 350-400 W (400 here). 132 SMs (TechPowerUp GPU "
      "database, secondary); boost clock not published (device.clock_mhz refused, give "
      "device.peak). Node: one bridged pair (the NVLink domain); between pairs, in the same "
      "server or not, assumption: one 400 Gb/s NIC per GPU (50 GB/s, under PCIe Gen5's 64). NO "
      "KERNEL MEASUREMENTS OF H100 NVL: H100 SXM5's kernel efficiencies (same GH100, at 400 "
      "instead of 700 W: its sustained GEMM rate is likely lower).",
      h100_nvl_94gb(),
      borrowed_kernels(h100_sxm_kernels(), "H100 NVL", "H100 SXM5 (same GH100 die)"), 2, 300.0,
      50.0));
  presets.push_back(preset(
      "mi300x-8x",
      "AMD MI300X platform: 8x MI300X 192GB, Infinity Fabric 448 GB/s per direction, 400 Gb/s NIC "
      "per GPU",
      "Datasheet amd.com/en/products/accelerators/instinct/mi300/mi300x.html: 1307.4 TFLOP/s "
      "BF16/FP16 dense, 653.7 TF32, 163.4 FP32, 2614.9 FP8, 192 GB HBM3, 5.3 TB/s, 304 CUs, "
      "Infinity Fabric 7 peer links x 128 GB/s bidirectional = 896 GB/s, i.e. 448 GB/s per "
      "direction in total but only 64 GB/s per direction to any one peer (fully connected mesh, "
      "no switch). NIC: assumption, one 400 Gb/s NIC per GPU (50 GB/s).",
      mi300x_oam_192gb(), mi300x_kernels(), 8, 448.0, 50.0));
  presets.back().spec.intra_node.peer_bandwidth = Bandwidth{64.0 * kGiga};  // one xGMI link
  presets.push_back(preset(
      "mi325x-8x",
      "AMD MI325X platform: 8x MI325X 256GB, Infinity Fabric 448 GB/s per direction, 400 Gb/s NIC "
      "per GPU",
      "Datasheet amd.com/en/products/accelerators/instinct/mi300/mi325x.html: the MI300X's CDNA 3 "
      "compute (1307.4 TFLOP/s BF16/FP16 dense, 653.7 TF32, 163.4 FP32, 2614.9 FP8, 304 CUs, "
      "2,100 MHz peak engine clock), 256 GB HBM3E at 6 TB/s, 1,000 W; Infinity Fabric as "
      "mi300x-8x (7 peer links x 128 GB/s bidirectional: 448 GB/s per direction in all, 64 to "
      "any one peer). NIC: assumption, one 400 Gb/s NIC per GPU (50 GB/s). NO KERNEL "
      "MEASUREMENTS OF MI325X: MI300X's kernel efficiencies (same CDNA 3 compute; its memory "
      "fraction was measured on HBM3 at 5.3 TB/s).",
      mi325x_oam_256gb(),
      borrowed_kernels(mi300x_kernels(), "MI325X", "MI300X (same CDNA 3 compute)"), 8, 448.0,
      50.0));
  presets.back().spec.intra_node.peer_bandwidth = Bandwidth{64.0 * kGiga};
  presets.push_back(preset(
      "mi355x-8x",
      "AMD MI355X platform: 8x MI355X 288GB (CDNA 4), Infinity Fabric 537.6 GB/s per direction, "
      "400 Gb/s NIC per GPU",
      "Datasheet amd.com/en/products/accelerators/instinct/mi350/mi355x.html: dense 2516.6 "
      "TFLOP/s BF16/FP16, 5033.2 FP8 and MXFP8, 10066.3 MXFP6/MXFP4, 157.3 FP32 (no TF32 matrix "
      "rate: tf32 priced at FP32, assumption), 288 GB HBM3E at 8 TB/s, 256 CUs at a 2,400 MHz "
      "peak engine clock, 1,400 W; Infinity Fabric 7 peer links x 153.6 GB/s bidirectional = "
      "1075.2 GB/s, i.e. 537.6 GB/s per direction in all and 76.8 to any one peer (fully "
      "connected mesh). NIC: assumption, one 400 Gb/s NIC per GPU (50 GB/s). NO KERNEL "
      "MEASUREMENTS OF MI355X: MI300X's kernel efficiencies (the nearest measured AMD device; "
      "CDNA 4 doubles the matrix rate per CU, so these fractions are a guess).",
      mi355x_oam_288gb(),
      borrowed_kernels(mi300x_kernels(), "MI355X", "MI300X (nearest measured AMD device)"), 8,
      537.6, 50.0));
  presets.back().spec.intra_node.peer_bandwidth = Bandwidth{76.8 * kGiga};
  presets.push_back(preset(
      "perlmutter-a100",
      "NERSC Perlmutter GPU node: 4x A100 SXM4 80GB, NVLink3, 4x Slingshot-11 200 Gb/s",
      "A100 figures as dgx-a100-80gb (datasheet nvidia.com/en-us/data-center/a100/). Node layout: "
      "docs.nersc.gov/systems/perlmutter/architecture/, 4 A100 fully connected by NVLink3 (4 "
      "links per pair, 12 per GPU: 300 GB/s per direction per GPU), 4 HPE Slingshot-11 NICs at "
      "200 Gb/s per node = 25 GB/s per GPU per direction. Most Perlmutter GPU nodes carry the "
      "40 GB A100 (1,555 GB/s); this preset models the 80 GB nodes.",
      a100_sxm4_80gb(), a100_kernels(true), 4, 300.0, 25.0));
  presets.back().spec.intra_node.peer_bandwidth = Bandwidth{100.0 * kGiga};  // 4 links x 25 GB/s
  for (ClusterPreset& p : presets) p.spec.fabric = preset_collective_fabric(p.name);
  for (ClusterPreset& p : presets) p.spec.host = preset_host_system(p.name);
  return presets;
}

}  // namespace

const std::vector<ClusterPreset>& cluster_presets() {
  static const std::vector<ClusterPreset> kPresets = build_presets();
  return kPresets;
}

const ClusterPreset* find_cluster_preset(std::string_view name) {
  for (const auto& p : cluster_presets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace parasim::cost
