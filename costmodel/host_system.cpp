#include "costmodel/host_system.hpp"

namespace parasim::cost {
namespace {

constexpr double kGB = 1e9;
// PCIe Gen4/Gen5 x16: 16 / 32 GT/s per lane x 16 lanes x 128b/130b encoding / 8 bits = 31.51 /
// 63.02 GB/s per direction (PCI-SIG, PCIe 4.0 / 5.0 base specifications). A DMA copy moves
// 256-byte payloads (the maximum payload size GPU root ports negotiate) each with 26 bytes of
// transaction and link layer overhead (16-byte 4DW header for 64-bit addresses, 2-byte sequence
// number, 4-byte LCRC, 4-byte framing token, 128b/130b framing): 256 / 282 = 0.908 of the raw
// rate [derived; an upper bound: flow-control DLLPs and the root complex take more, so a measured
// pinned-memory bandwidthTest figure given as cluster.host_link_bandwidth is better].
constexpr double kPcieGen4Raw = 16.0 * 16 * 128.0 / 130.0 / 8.0 * kGB;
constexpr double kPcieGen5Raw = 2 * kPcieGen4Raw;
constexpr double kTlpEfficiency = 256.0 / 282.0;

}  // namespace

const std::vector<HostLinkPreset>& host_link_presets() {
  static const std::vector<HostLinkPreset> kLinks = {
      {"pcie-gen4-x16", Bandwidth{kPcieGen4Raw * kTlpEfficiency},
       "PCIe 4.0 x16: 31.5 GB/s raw per direction x 256/282 payload efficiency (derived)"},
      {"pcie-gen5-x16", Bandwidth{kPcieGen5Raw * kTlpEfficiency},
       "PCIe 5.0 x16: 63.0 GB/s raw per direction x 256/282 payload efficiency (derived)"},
      // NVIDIA GH200 Grace Hopper Superchip datasheet: NVLink-C2C 900 GB/s bidirectional between
      // the Grace CPU and the Hopper GPU, 450 GB/s per direction (the datasheet rate; no protocol
      // efficiency published).
      {"nvlink-c2c", Bandwidth{450.0 * kGB},
       "NVLink-C2C (GH200 datasheet): 900 GB/s bidirectional, 450 GB/s per direction"},
  };
  return kLinks;
}

const HostLinkPreset* find_host_link(std::string_view name) {
  for (const auto& l : host_link_presets()) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

HostSpec preset_host_system(std::string_view preset_name) {
  HostSpec h;
  auto with_link = [&h](const char* link) {
    h.link = link;
    h.link_bandwidth = find_host_link(link)->bandwidth;
  };
  if (preset_name == "dgx-a100-80gb" || preset_name == "dgx-a100-40gb") {
    // NVIDIA DGX A100 datasheet: system memory 2 TB (DGX A100 640GB) / 1 TB (320GB); 2x AMD EPYC
    // 7742; GPUs on PCIe Gen4 switches. EPYC 7742 (AMD product page): 8 channels of DDR4-3200 per
    // socket, 8 x 3200 MT/s x 8 B = 204.8 GB/s per socket, 409.6 GB/s per node.
    h.memory = Bytes{(preset_name == "dgx-a100-80gb" ? 2000.0 : 1000.0) * kGB};
    h.memory_bandwidth = Bandwidth{2 * 204.8 * kGB};
    with_link("pcie-gen4-x16");
  } else if (preset_name == "perlmutter-a100") {
    // docs.nersc.gov/systems/perlmutter/architecture/: one AMD EPYC 7763 with 256 GB DDR4-3200
    // (8 channels: 204.8 GB/s), A100s on PCIe 4.0.
    h.memory = Bytes{256.0 * kGB};
    h.memory_bandwidth = Bandwidth{204.8 * kGB};
    with_link("pcie-gen4-x16");
  } else if (preset_name == "dgx-h100") {
    // NVIDIA DGX H100 datasheet: 2 TB system memory, 2x Intel Xeon Platinum 8480C; GPUs on PCIe
    // Gen5. Xeon 8480C (Sapphire Rapids, Intel ARK for the 8480+): 8 channels DDR5-4800 per
    // socket, 8 x 4800 x 8 B = 307.2 GB/s, 614.4 GB/s per node.
    h.memory = Bytes{2000.0 * kGB};
    h.memory_bandwidth = Bandwidth{2 * 307.2 * kGB};
    with_link("pcie-gen5-x16");
  } else if (preset_name == "dgx-b200") {
    // NVIDIA DGX B200 datasheet: 2 TB system memory (up to 4 TB), 2x Intel Xeon Platinum 8570
    // (Emerald Rapids, Intel ARK: 8 channels DDR5-5600, 358.4 GB/s per socket); PCIe Gen5.
    h.memory = Bytes{2000.0 * kGB};
    h.memory_bandwidth = Bandwidth{2 * 358.4 * kGB};
    with_link("pcie-gen5-x16");
  } else if (preset_name == "gb200-nvl72") {
    // GB200 NVL72 datasheet: 36 Grace CPUs with up to 17 TB LPDDR5X (480 GB each) at up to
    // 18.4 TB/s (512 GB/s each); one parasim node is the 72-GPU rack. Each Grace reaches its two
    // Blackwell GPUs over one 900 GB/s NVLink-C2C: 225 GB/s per GPU per direction
    // [assumption: both GPUs copying at once share it evenly].
    h.memory = Bytes{36 * 480.0 * kGB};
    h.memory_bandwidth = Bandwidth{36 * 512.0 * kGB};
    h.link = "nvlink-c2c";
    h.link_bandwidth = Bandwidth{225.0 * kGB};
  }
  return h;
}

sim::Time host_copy_time(const HostSpec& host, double bytes) {
  if (!(host.link_bandwidth.bytes_per_s > 0) || !(bytes > 0)) return sim::Time::zero();
  return host.link_latency + sim::Time::seconds(bytes / host.link_bandwidth.bytes_per_s);
}

}  // namespace parasim::cost
