#pragma once
// parasim::cost::nccl — the constants of NCCL's own cost model, in one table, as NCCL v2.23.4-1
// has them (github.com/NVIDIA/nccl, tag v2.23.4-1; file:line below). nccl_model.hpp uses them the
// way src/graph/tuning.cc and src/enqueue.cc do. Latencies in microseconds, bandwidths in GB/s
// (1e9 B/s): NCCL's time is lat + bytes / (1000 x bw) us.
//
// Index conventions (NCCL's): protocols LL = 0, LL128 = 1, Simple = 2; architecture rows Volta,
// Ampere, Hopper (NcclGpuArch); node-count columns 1 node, 2 nodes, 3 nodes or more.

namespace parasim::cost::nccl {

inline constexpr int kLL = 0;
inline constexpr int kLL128 = 1;
inline constexpr int kSimple = 2;

// baseLat, tuning.cc:56-59: fixed cost of one collective call by algorithm and protocol.
inline constexpr double kBaseLatencyTree[3] = {6.8, 14.0, 8.4};
inline constexpr double kBaseLatencyRing[3] = {6.6, 14.0, 8.4};
inline constexpr double kBaseLatencyNvls = 0.0;

// hwLat, tuning.cc:65-78: latency of one hop (one step of the algorithm) by link type.
inline constexpr double kNvlinkHopTree[3] = {0.6, 1.25, 4.0};
inline constexpr double kNvlinkHopRing[3] = {0.6, 1.9, 3.4};
inline constexpr double kNvlinkHopNvls = 25.0;  // Simple only
inline constexpr double kNetHopTree[3] = {5.0, 8.5, 14.0};
inline constexpr double kNetHopRing[3] = {2.7, 4.0, 14.0};

// Network post overhead per step of a multi-node ring, tuning.cc:116-125 (getNetOverhead: x86
// Intel 1.0 us, x86 AMD 2.0 us), x3 for Simple (tuning.cc:255); a multi-node ring's intra-node
// hop costs at least this (tuning.cc:257).
inline constexpr double kNetOverheadIntel = 1.0;
inline constexpr double kNetOverheadAmd = 2.0;
inline constexpr double kNetOverheadSimpleFactor = 3.0;

// tuning.cc:86-106. llMaxBws caps the LL busBw: on one node its row is the GPU architecture, on
// several the CPU vendor (row 0 Intel/other, row 1 AMD; tuning.cc:150-151).
inline constexpr double kLlMaxBw[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}};
inline constexpr double kPerChannelMaxRingLL128Bw[3][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}};
inline constexpr double kPerChannelMaxTreeLL128Bw[3][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}};
inline constexpr double kPerChannelMaxTreeBw[3][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};

// Share of the bytes on the wire that are data, by protocol: an LL line carries two 4-byte data
// words and two 4-byte flags (ncclLLFifoLine, src/include/device.h:46-58); an LL128 line of 128
// bytes carries 15 data words of 8 and one flag word (device.h:81-83); Simple sends data only.
inline constexpr double kWireDataShare[3] = {0.5, 120.0 / 128.0, 1.0};

// Protocol and algorithm bandwidth factors, tuning.cc:187-191: ring LL x0.5 (capped by
// llMaxBw), ring LL128 x0.92 (capped per channel), tree x0.92 (capped per channel), then tree LL
// /3.8 (capped by llMaxBw), tree LL128 x7/9 on one node, x120/128 on several (capped per channel).
inline constexpr double kRingLLFactor = 0.5;
inline constexpr double kRingLL128Factor = 0.92;
inline constexpr double kTreeFactor = 0.92;
inline constexpr double kTreeLLDivisor = 3.8;
inline constexpr double kTreeLL128FactorOneNode = 7.0 / 9.0;
inline constexpr double kTreeLL128FactorNodes = 120.0 / 128.0;
// busBw to algorithm bandwidth, tuning.cc:220-227: ring x nRanks / nsteps, NVLS x 5/6, tree x 0.5.
inline constexpr double kTreeAlgorithmRatio = 0.5;

// treeCorrectionFactor, tuning.cc:435-439: tree all-reduce bandwidth multiplied by
// [protocol][log2(bytes / 64)] for 64 B to 256 MiB (tuning.cc:457-458).
inline constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

// "Plateau effect of ring", tuning.cc:459-462: a multi-node ring all-reduce with Simple and at
// least 64 bytes per channel and rank has its latency x1.4 (sm80 and up; x1.9 before).
inline constexpr double kRingPlateauFactor = 1.4;
inline constexpr double kRingPlateauFactorVolta = 1.9;
inline constexpr double kRingPlateauBytes = 64.0;
// The runtime doubles the search's channels, at most MAXCHANNELS = 32 (src/graph/connect.cc:455,
// src/include/device.h:62); the plateau rule counts the runtime channels.
inline constexpr int kMaxChannels = 32;

}  // namespace parasim::cost::nccl
