#include "strategies/framework/framework_json.hpp"

#include <fmt/format.h>

#include <set>

#include "costmodel/json_fields.hpp"
#include "strategies/framework/framework_presets.hpp"

namespace parasim::strat {
namespace {

using cost::JsonObjectReader;
using nlohmann::json;

std::string preset_names() {
  std::string out;
  for (const auto& p : framework_presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

// The preset named `name`, or a problem at `at` with the nearest name and the list.
const FrameworkPreset* lookup(const std::string& name, const std::string& at,
                              cost::Diagnostics& d) {
  if (const auto* p = find_framework_preset(name)) return p;
  std::set<std::string, std::less<>> names;
  for (const auto& p : framework_presets()) names.insert(p.name);
  const std::string hint = cost::closest_match(name, names);
  d.add(at, fmt::format("unknown framework preset \"{}\"{} (presets: {})", name,
                        hint.empty() ? "" : fmt::format("; did you mean \"{}\"?", hint),
                        preset_names()));
  return nullptr;
}

template <typename T, typename U>
void assign(T& field, const std::optional<U>& value) {
  if (value) field = static_cast<T>(*value);
}

void read_host(JsonObjectReader& parent, cost::Diagnostics& d, FrameworkHostCosts& h) {
  const json* node = parent.child("host", false);
  if (node == nullptr) return;
  JsonObjectReader r(*node, parent.child_path("host"), d);
  const sim::Time max = cost::kMaxPerEventDuration;
  assign(h.forward_op, r.time("forward_op", false, max));
  assign(h.forward_op_no_grad, r.time("forward_op_no_grad", false, max));
  assign(h.backward_op, r.time("backward_op", false, max));
  assign(h.host_only_op, r.time("host_only_op", false, max));
  assign(h.autograd_function, r.time("autograd_function", false, max));
  assign(h.jit_call, r.time("jit_call", false, max));
  assign(h.collective_call, r.time("collective_call", false, max));
  assign(h.sync, r.time("sync", false, max));
  assign(h.checkpointed_layer, r.time("checkpointed_layer", false, max));
  assign(h.micro_batch, r.time("micro_batch", false, max));
  assign(h.step, r.time("step", false, max));
  assign(h.compiled_kernel, r.time("compiled_kernel", false, max));
  assign(h.compiled_region_forward, r.time("compiled_region_forward", false, max));
  assign(h.compiled_region_backward, r.time("compiled_region_backward", false, max));
  r.finish();
}

void read_counts(JsonObjectReader& parent, cost::Diagnostics& d, FrameworkCounts& c) {
  auto count = [](JsonObjectReader& r, std::string_view key, int& field) {
    assign(field, r.integer(key, false, 0, kMaxFrameworkCount));
  };
  if (const json* node = parent.child("layer", false)) {
    JsonObjectReader r(*node, parent.child_path("layer"), d);
    count(r, "host_only_ops", c.layer_host_only_ops);
    count(r, "autograd_functions", c.layer_autograd_functions);
    count(r, "jit_calls", c.layer_jit_calls);
    count(r, "syncs", c.layer_syncs);
    if (auto g = r.choice("grad_accumulation", false, {"all-tensors", "fused-weights", "none"})) {
      c.grad_accumulation = *g == "none"            ? GradAccumulation::kNone
                            : *g == "fused-weights" ? GradAccumulation::kFusedWeights
                                                    : GradAccumulation::kAllTensors;
    }
    assign(c.grad_accumulation_first_micro_batch,
           r.boolean("grad_accumulation_first_micro_batch", false));
    r.finish();
  }
  if (const json* node = parent.child("micro_batch", false)) {
    JsonObjectReader r(*node, parent.child_path("micro_batch"), d);
    count(r, "kernels", c.micro_batch_kernels);
    count(r, "forward_start_syncs", c.forward_start_syncs);
    assign(c.batch_on_every_stage, r.boolean("batch_on_every_stage", false));
    count(r, "forward_end_syncs", c.forward_end_syncs);
    count(r, "backward_start_syncs", c.backward_start_syncs);
    count(r, "backward_end_syncs", c.backward_end_syncs);
    count(r, "p2p_syncs", c.p2p_syncs);
    r.finish();
  }
  if (const json* node = parent.child("step", false)) {
    JsonObjectReader r(*node, parent.child_path("step"), d);
    count(r, "kernels", c.step_kernels);
    count(r, "kernels_per_tensor", c.step_kernels_per_tensor);
    count(r, "syncs", c.step_syncs);
    count(r, "fp16_syncs_per_tensor", c.fp16_step_syncs_per_tensor);
    count(r, "reduce_passes_before", c.reduce_passes_before);
    assign(c.reduce_copy_back, r.boolean("reduce_copy_back", false));
    assign(c.step_bytes_per_parameter, r.number("bytes_per_parameter", false, 0, 1e4));
    r.finish();
  }
}

void read_fusions(JsonObjectReader& parent, cost::Diagnostics& d, KernelFusions& f) {
  const json* node = parent.child("fusions", false);
  if (node == nullptr) return;
  JsonObjectReader r(*node, parent.child_path("fusions"), d);
  assign(f.bias_gelu, r.boolean("bias_gelu", false));
  assign(f.bias_dropout_add, r.boolean("bias_dropout_add", false));
  assign(f.masked_softmax, r.boolean("masked_softmax", false));
  assign(f.linear_bias_in_gemm, r.boolean("linear_bias_in_gemm", false));
  r.finish();
}

void read_zero3(JsonObjectReader& parent, cost::Diagnostics& d, Zero3Gathering& z3) {
  const json* node = parent.child("zero3", false);
  if (node == nullptr) return;
  JsonObjectReader r(*node, parent.child_path("zero3"), d);
  if (auto g = r.choice("gather", false, {"per-layer", "per-module"})) {
    z3.unit = *g == "per-module" ? Zero3Gather::kPerModule : Zero3Gather::kPerLayer;
  }
  assign(z3.persistence_threshold, r.number("persistence_threshold", false, 0, 1e15));
  assign(z3.prefetch_bucket_size, r.number("prefetch_bucket_size", false, 0, 1e15));
  assign(z3.max_live_parameters, r.number("max_live_parameters", false, 0, 1e15));
  assign(z3.max_reuse_distance, r.number("max_reuse_distance", false, 0, 1e15));
  assign(z3.contiguous_gradients, r.boolean("contiguous_gradients", false));
  assign(z3.prefetch, r.boolean("prefetch", false));
  assign(z3.blocking_fetch, r.boolean("blocking_fetch", false));
  assign(z3.regather_for_recompute, r.boolean("regather_for_recompute", false));
  assign(z3.reduce_per_unit, r.boolean("reduce_per_unit", false));
  r.finish();
}

// `compile`: true / false, or torchtitan's [compile] section {"enable", "components"}.
void read_compile(JsonObjectReader& parent, cost::Diagnostics& d, TorchCompile& out) {
  const json* node = parent.child("compile", false);
  if (node == nullptr) return;
  const std::string path = parent.child_path("compile");
  if (node->is_boolean()) {
    out.enabled = node->get<bool>();
    return;
  }
  if (!node->is_object()) {
    d.add(path, "expected true, false or an object {\"enable\": ..., \"components\": [...]}");
    return;
  }
  JsonObjectReader r(*node, path, d);
  assign(out.enabled, r.boolean("enable", true));
  if (const json* list = r.child("components", false)) {
    const std::string at = r.child_path("components");
    if (!list->is_array()) {
      d.add(at, "expected a list of \"model\" and \"loss\"");
    } else {
      out.model = out.loss = false;
      for (std::size_t i = 0; i < list->size(); ++i) {
        const json& c = (*list)[i];
        const std::string name = c.is_string() ? c.get<std::string>() : std::string();
        if (name == "model") out.model = true;
        else if (name == "loss") out.loss = true;
        else d.add(fmt::format("{}/{}", at, i), "expected \"model\" or \"loss\"");
      }
    }
  }
  r.finish();
}

}  // namespace

void read_framework(const json& node, const std::string& path, cost::Diagnostics& d,
                    FrameworkSpec& out) {
  if (node.is_string()) {
    if (const auto* p = lookup(node.get<std::string>(), path, d)) out = p->spec;
    return;
  }
  JsonObjectReader r(node, path, d);
  if (!r.valid()) return;
  if (auto name = r.string("preset", false)) {
    if (const auto* p = lookup(*name, r.child_path("preset"), d)) out = p->spec;
  } else {
    out = default_framework();
    out.name = "custom";
  }
  assign(out.name, r.string("name", false));
  assign(out.version, r.string("version", false));
  read_host(r, d, out.host);
  read_counts(r, d, out.counts);
  read_fusions(r, d, out.fusions);
  if (auto g = r.choice("gradient_reduction", false, {"overlapped", "after-backward"})) {
    out.gradient_reduction =
        *g == "overlapped" ? GradientReduction::kOverlapped : GradientReduction::kAfterBackward;
  }
  const auto bucket = r.bytes("gradient_bucket", false, cost::kRanges.buffer_size);
  const auto elements = r.number("gradient_bucket_elements", false, 1, 1e15);
  if (bucket && elements) {
    d.add(r.child_path("gradient_bucket_elements"),
          "give the bucket either as a size (gradient_bucket) or as a number of gradients "
          "(gradient_bucket_elements), not both");
  } else if (bucket) {
    out.gradient_bucket = *bucket;
    out.gradient_bucket_elements = 0;
  } else if (elements) {
    out.gradient_bucket_elements = *elements;
    out.gradient_bucket = cost::Bytes{0};
  }
  if (auto p = r.choice("pipeline_transfers", false, {"host-synchronized", "stream-ordered"})) {
    out.pipeline_transfers = *p == "host-synchronized" ? PipelineTransfers::kHostSynchronized
                                                       : PipelineTransfers::kStreamOrdered;
  }
  assign(out.cuda_graphs, r.boolean("cuda_graphs", false));
  if (auto k = r.choice("kernels", false, {"megatron", "torchtitan"})) {
    out.kernels = *k == "torchtitan" ? LayerKernels::kTorchtitan : LayerKernels::kMegatron;
  }
  read_compile(r, d, out.compile);
  read_zero3(r, d, out.zero3);
  r.finish();

  if (out.cuda_graphs && out.counts.layer_syncs > 0) {
    d.add(r.child_path("cuda_graphs"),
          fmt::format("a CUDA graph cannot capture a sync, and this framework syncs {} times per "
                      "layer forward (layer.syncs); set \"layer\": {{\"syncs\": 0}} or "
                      "cuda_graphs false",
                      out.counts.layer_syncs));
  }
  if (out.cuda_graphs && out.zero3.blocking_fetch) {
    d.add(r.child_path("cuda_graphs"),
          "a CUDA graph cannot capture a sync, and zero3.blocking_fetch syncs around every "
          "ZeRO-3 gather; set \"zero3\": {\"blocking_fetch\": false} or cuda_graphs false");
  }
}

}  // namespace parasim::strat
