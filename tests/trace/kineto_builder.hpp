#pragma once
// Test helper: a PyTorch profiler (Kineto) trace written event by event, in the shape libkineto's
// output_json.cpp writes ("traceEvents", "deviceProperties", "distributedInfo"), and files of it
// (plain or gzip) in a temporary folder.

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace parasim::test {

class KinetoBuilder {
 public:
  KinetoBuilder(int rank = 0, int world = 1, std::string device = "NVIDIA H100 80GB HBM3") {
    doc_["schemaVersion"] = 1;
    doc_["distributedInfo"] = {{"backend", "nccl"}, {"rank", rank}, {"world_size", world}};
    doc_["deviceProperties"] = nlohmann::json::array({{{"id", 0}, {"name", device}}});
    doc_["traceEvents"] = nlohmann::json::array();
  }
  // A CPU op (cat cpu_op) on thread `tid`, with an External id and record_shapes' fields.
  KinetoBuilder& op(const std::string& name, int tid, double ts, double dur, int external = 0,
                    nlohmann::json dims = nullptr, nlohmann::json types = nullptr) {
    nlohmann::json args = nlohmann::json::object();
    if (external) args["External id"] = external;
    if (!dims.is_null()) args["Input Dims"] = dims;
    if (!types.is_null()) args["Input type"] = types;
    return add({{"ph", "X"},
                {"cat", "cpu_op"},
                {"name", name},
                {"pid", 1},
                {"tid", tid},
                {"ts", ts},
                {"dur", dur},
                {"args", args}});
  }
  KinetoBuilder& annotation(const std::string& name, int tid, double ts, double dur) {
    return add({{"ph", "X"},
                {"cat", "user_annotation"},
                {"name", name},
                {"pid", 1},
                {"tid", tid},
                {"ts", ts},
                {"dur", dur},
                {"args", nlohmann::json::object()}});
  }
  KinetoBuilder& kernel(const std::string& name, double ts, double dur, int external,
                        int stream = 7, nlohmann::json extra = nlohmann::json::object()) {
    nlohmann::json args = {{"device", 0}, {"stream", stream}, {"correlation", external + 100000}};
    if (external) args["External id"] = external;
    for (auto it = extra.begin(); it != extra.end(); ++it) args[it.key()] = it.value();
    return add({{"ph", "X"},
                {"cat", "kernel"},
                {"name", name},
                {"pid", 0},
                {"tid", stream},
                {"ts", ts},
                {"dur", dur},
                {"args", args}});
  }
  KinetoBuilder& launch(double ts, double dur, int external) {
    return add({{"ph", "X"},
                {"cat", "cuda_runtime"},
                {"name", "cudaLaunchKernel"},
                {"pid", 1},
                {"tid", 1},
                {"ts", ts},
                {"dur", dur},
                {"args", {{"External id", external}, {"correlation", external + 100000}}}});
  }
  KinetoBuilder& add(nlohmann::json event) {
    doc_["traceEvents"].push_back(std::move(event));
    return *this;
  }
  std::string text() const { return doc_.dump(); }
  nlohmann::json& doc() { return doc_; }

 private:
  nlohmann::json doc_;
};

// NCCL metadata as PyTorch's record_param_comms writes it on the kernel.
inline nlohmann::json collective_args(const std::string& name, long long in, long long out,
                                      int group_size, const std::string& dtype = "BFloat16",
                                      const std::string& group = "0",
                                      const std::string& ranks = "") {
  nlohmann::json a = {{"Collective name", name}, {"In msg nelems", in},
                      {"Out msg nelems", out},   {"Group size", group_size},
                      {"dtype", dtype},          {"Process Group Name", group}};
  if (!ranks.empty()) a["Process Group Ranks"] = ranks;
  return a;
}

inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("parasim-trace-test-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline void write_gzip(const std::filesystem::path& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

}  // namespace parasim::test
