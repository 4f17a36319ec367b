#include "calibrate/trace/kineto_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <utility>

#include "calibrate/trace/kernel_classes.hpp"
#include "calibrate/trace/op_nesting.hpp"
#include "calibrate/trace/trace_file.hpp"
#include "costmodel/json_fields.hpp"
#include "costmodel/measured_tables.hpp"

namespace parasim::calib::trace {
namespace {

using nlohmann::json;

enum class Category { kKernel, kMemcpy, kMemset, kOp, kAnnotation, kRuntime, kOther };

Category category_of(const json& event) {
  const auto it = event.find("cat");
  if (it == event.end() || !it->is_string()) return Category::kOther;
  std::string c = it->get<std::string>();
  std::transform(c.begin(), c.end(), c.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (c == "kernel") return Category::kKernel;
  if (c == "gpu_memcpy" || c == "memcpy") return Category::kMemcpy;
  if (c == "gpu_memset" || c == "memset") return Category::kMemset;
  if (c == "cpu_op" || c == "operator") return Category::kOp;
  if (c == "user_annotation") return Category::kAnnotation;
  if (c == "cuda_runtime" || c == "runtime" || c == "cuda_driver") return Category::kRuntime;
  return Category::kOther;
}

// A number of microseconds within +-`max_us`, or a problem at its path; numbers written as
// strings ("ts": "123.5", as some exporters do) are read too.
std::optional<double> number_at(const json& object, const char* key, double max_us,
                                const std::string& path, cost::Diagnostics& d) {
  const auto it = object.find(key);
  if (it == object.end()) {
    d.add(path + "/" + key, "missing: expected a number");
    return std::nullopt;
  }
  std::optional<double> v;
  if (it->is_number()) {
    v = it->get<double>();
  } else if (it->is_string()) {
    try {
      std::size_t used = 0;
      const std::string text = it->get<std::string>();
      const double parsed = std::stod(text, &used);
      if (used == text.size()) v = parsed;
    } catch (const std::exception&) {
    }
  }
  if (!v) {
    d.add(path + "/" + key, "expected a number, found " + cost::json_type_name(*it));
    return std::nullopt;
  }
  if (!std::isfinite(*v) || std::fabs(*v) > max_us) {
    d.add(path + "/" + key,
          fmt::format("expected a finite number of microseconds within +-{:g}", max_us));
    return std::nullopt;
  }
  return v;
}

// An integer field; a float only when it is integral and within +-2^53 (exact); else none.
std::optional<std::int64_t> integer_in(const json& args, const char* key) {
  const auto it = args.find(key);
  if (it == args.end()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const auto u = it->get<std::uint64_t>();
    return u <= static_cast<std::uint64_t>(INT64_MAX) ? std::optional(static_cast<std::int64_t>(u))
                                                      : std::nullopt;
  }
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_number()) {
    const double v = it->get<double>();
    if (std::isfinite(v) && std::fabs(v) <= 9007199254740992.0 && std::floor(v) == v) {
      return static_cast<std::int64_t>(v);
    }
  }
  return std::nullopt;
}

// A count field (a rank, a group size, a world size) within [lo, hi]; else `fallback`.
int count_in(const json& args, const char* key, int lo, int hi, int fallback) {
  const auto v = integer_in(args, key);
  return v && *v >= lo && *v <= hi ? static_cast<int>(*v) : fallback;
}

std::string string_in(const json& args, const char* key) {
  const auto it = args.find(key);
  return it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "[0, 1, 2]" (PyTorch writes the ranks as text) -> {0, 1, 2}; empty when it is not a list.
std::vector<int> rank_list(const json& args) {
  std::vector<int> ranks;
  const auto it = args.find("Process Group Ranks");
  if (it == args.end()) return ranks;
  if (it->is_string() && cost::json_nesting_depth(it->get_ref<const std::string&>(), 2) > 1) {
    return ranks;  // not a flat list: nested text is refused before parsing (no deep recursion)
  }
  json parsed = it->is_string() ? json::parse(it->get<std::string>(), nullptr, false) : *it;
  if (!parsed.is_array()) return ranks;
  for (const json& r : parsed) {
    if (!r.is_number_integer() || r.get<std::int64_t>() < 0 ||
        r.get<std::int64_t>() > kMaxTraceRanks) {
      return {};
    }
    ranks.push_back(r.get<int>());
  }
  return ranks;
}

std::optional<TraceCollective> collective_of(const json& args) {
  const std::string name = string_in(args, "Collective name");
  if (name.empty()) return std::nullopt;
  const auto kind = profiler_collective(name);
  if (!kind) return std::nullopt;
  TraceCollective c;
  c.kind = *kind;
  c.in_elements = integer_in(args, "In msg nelems").value_or(0);
  c.out_elements = integer_in(args, "Out msg nelems").value_or(0);
  c.element_bytes = profiler_dtype_bytes(string_in(args, "dtype"));
  c.group_size = count_in(args, "Group size", 1, kMaxTraceRanks, 0);
  c.group = string_in(args, "Process Group Name");
  c.ranks = rank_list(args);
  return c;
}

std::vector<std::vector<std::int64_t>> dims_of(const json& args) {
  std::vector<std::vector<std::int64_t>> dims;
  const auto it = args.find("Input Dims");
  if (it == args.end() || !it->is_array()) return dims;
  for (const json& input : *it) {
    std::vector<std::int64_t> shape;
    if (input.is_array()) {
      for (const json& d : input) {
        if (d.is_number_integer()) shape.push_back(d.get<std::int64_t>());
      }
    }
    dims.push_back(std::move(shape));
  }
  return dims;
}

std::vector<std::string> types_of(const json& args) {
  std::vector<std::string> types;
  const auto it = args.find("Input type");
  if (it == args.end() || !it->is_array()) return types;
  for (const json& t : *it) types.push_back(t.is_string() ? t.get<std::string>() : "");
  return types;
}

std::int64_t thread_of(const json& event) {
  const auto it = event.find("tid");
  if (it != event.end() && it->is_number_integer()) return it->get<std::int64_t>();
  if (it != event.end() && it->is_string()) {
    return static_cast<std::int64_t>(std::hash<std::string>{}(it->get<std::string>()) >> 1);
  }
  return 0;
}

bool is_launch(const std::string& name) {
  return name.rfind("cudaLaunchKernel", 0) == 0 || name.rfind("cuLaunchKernel", 0) == 0 ||
         name.rfind("cudaLaunchCooperativeKernel", 0) == 0;
}

constexpr std::size_t kMaxProblems = 50;

}  // namespace

RankTrace read_kineto_trace(std::string_view json_text, const std::string& file,
                            cost::Diagnostics& diagnostics) {
  RankTrace trace;
  trace.file = file;
  trace.format = "kineto";
  if (cost::json_nesting_depth(json_text, cost::kMaxJsonDepth) > cost::kMaxJsonDepth) {
    diagnostics.add("", fmt::format("JSON nested deeper than {} levels: not a profiler trace",
                                    cost::kMaxJsonDepth));
    return trace;
  }
  // Keep only the events this reader uses, numbered by their place in traceEvents.
  std::int64_t event_index = 0;
  bool in_events = false;
  // Depths as nlohmann's callback counts them: the document's object at 0, the traceEvents
  // array's elements at 2 (a scalar element arrives as a value event at depth 2, an object or
  // array as its end event).
  const json::parser_callback_t keep = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key) {
      in_events = parsed == "traceEvents";
    } else if (depth == 2 && in_events &&
               (event == json::parse_event_t::object_end ||
                event == json::parse_event_t::array_end || event == json::parse_event_t::value)) {
      const std::int64_t index = event_index++;
      if (event != json::parse_event_t::object_end) return false;
      if (category_of(parsed) == Category::kOther) return false;
      parsed["#"] = index;
    }
    return true;
  };
  const json doc = json::parse(json_text.begin(), json_text.end(), keep, false);
  if (doc.is_discarded()) {
    diagnostics.add("", "invalid JSON: not a PyTorch profiler trace (is the file complete?)");
    return trace;
  }
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    diagnostics.add("/traceEvents",
                    "missing: expected the array of events of a PyTorch profiler "
                    "(Kineto) trace");
    return trace;
  }
  if (const auto it = doc.find("distributedInfo"); it != doc.end() && it->is_object()) {
    trace.rank = count_in(*it, "rank", 0, kMaxTraceRanks, 0);
    trace.world_size = count_in(*it, "world_size", 1, kMaxTraceRanks, 1);
  }
  std::map<std::int64_t, std::string> device_names;
  if (const auto it = doc.find("deviceProperties"); it != doc.end() && it->is_array()) {
    trace.visible_devices = static_cast<int>(it->size());
    for (const json& p : *it) {
      if (p.is_object()) device_names[integer_in(p, "id").value_or(0)] = string_in(p, "name");
    }
  }
  if (const auto it = doc.find("baseTimeNanoseconds"); it != doc.end() && it->is_number_integer()) {
    trace.base_time_ns = it->get<std::int64_t>();
  }

  std::unordered_map<std::int64_t, std::int64_t> op_by_external;           // External id -> op
  std::unordered_map<std::int64_t, std::int64_t> external_by_correlation;  // from launches
  struct PendingKernel {
    TraceKernel kernel;
    std::optional<std::int64_t> external, correlation;
    std::int64_t device = 0;
  };
  std::vector<PendingKernel> pending;
  std::size_t problems_left_out = 0;
  for (const json& event : doc["traceEvents"]) {
    if (!event.is_object()) continue;
    const std::string path = fmt::format("/traceEvents/{}", event.value("#", std::int64_t{0}));
    cost::Diagnostics local(file);
    for (const char* key : {"ph", "name"}) {
      const auto it = event.find(key);
      if (it != event.end() && !it->is_string()) {
        local.add(path + "/" + key, "expected a string, found " + cost::json_type_name(*it));
      }
    }
    if (local.ok() && string_in(event, "ph") != "X" && event.contains("ph")) continue;
    const auto ts = number_at(event, "ts", kMaxTraceMicroseconds, path, local);
    // A duration a profile can hold (measured_tables.hpp), so that what is fitted reads back.
    const auto dur = number_at(event, "dur", cost::kMaxMeasuredSeconds * 1e6, path, local);
    if (dur && *dur < 0) local.add(path + "/dur", "expected a duration >= 0");
    if (!local.ok()) {
      for (const auto& p : local.problems()) {
        if (diagnostics.problems().size() < kMaxProblems) {
          diagnostics.add(p.json_path, p.message);
        } else {
          ++problems_left_out;
        }
      }
      continue;
    }
    const json empty = json::object();
    const auto args_it = event.find("args");
    const json& args = args_it != event.end() && args_it->is_object() ? *args_it : empty;
    const std::string name = string_in(event, "name");
    const Category category = category_of(event);
    switch (category) {
      case Category::kKernel:
      case Category::kMemcpy:
      case Category::kMemset: {
        PendingKernel k;
        k.kernel.name = name;
        k.kernel.start_us = *ts;
        k.kernel.duration_us = *dur;
        k.kernel.stream = integer_in(args, "stream").value_or(thread_of(event));
        k.kernel.kind = category == Category::kKernel ? classify_kernel(name) : KernelClass::kCopy;
        if (k.kernel.kind == KernelClass::kCollective) k.kernel.collective = collective_of(args);
        k.external = integer_in(args, "External id");
        k.correlation = integer_in(args, "correlation");
        k.device = integer_in(args, "device").value_or(0);
        pending.push_back(std::move(k));
        break;
      }
      case Category::kOp:
      case Category::kAnnotation: {
        TraceOp op;
        op.name = name;
        op.thread = thread_of(event);
        op.start_us = *ts;
        op.end_us = *ts + *dur;
        op.input_dims = dims_of(args);
        op.input_types = types_of(args);
        const auto external = integer_in(args, "External id");
        if (external && category == Category::kOp) {
          op_by_external[*external] = static_cast<std::int64_t>(trace.ops.size());
        }
        trace.ops.push_back(std::move(op));
        break;
      }
      case Category::kRuntime: {
        const auto correlation = integer_in(args, "correlation");
        const auto external = integer_in(args, "External id");
        if (correlation && external) external_by_correlation[*correlation] = *external;
        if (is_launch(name)) trace.launch_call_us.push_back(*dur);
        break;
      }
      case Category::kOther:
        break;
    }
  }
  if (problems_left_out > 0) {
    diagnostics.add("/traceEvents",
                    fmt::format("{} more problems of the same kind not listed", problems_left_out));
  }
  if (pending.size() > kMaxTraceKernels) {
    diagnostics.add("/traceEvents", fmt::format("{} GPU events: over the limit of {} per rank "
                                                "(profile fewer steps)",
                                                pending.size(), kMaxTraceKernels));
  }
  if (!diagnostics.ok()) return trace;

  // One GPU per rank: the one with the most kernel time.
  std::map<std::int64_t, double> busy_by_device;
  for (const auto& k : pending) busy_by_device[k.device] += k.kernel.duration_us;
  std::int64_t device = 0;
  double most = -1;
  for (const auto& [d, busy] : busy_by_device) {
    if (busy > most) {
      most = busy;
      device = d;
    }
  }
  if (busy_by_device.size() > 1) {
    trace.notes.push_back(
        fmt::format("{}: kernels on {} GPUs; GPU {} (the most kernel time) is read as this rank",
                    cost::printable(file), busy_by_device.size(), device));
  }
  if (const auto it = device_names.find(device); it != device_names.end())
    trace.device = it->second;
  for (auto& k : pending) {
    if (k.device != device) continue;
    std::optional<std::int64_t> external = k.external;
    if (!external && k.correlation) {
      const auto it = external_by_correlation.find(*k.correlation);
      if (it != external_by_correlation.end()) external = it->second;
    }
    if (external) {
      const auto it = op_by_external.find(*external);
      if (it != op_by_external.end()) k.kernel.launch_op = it->second;
    }
    trace.kernels.push_back(std::move(k.kernel));
  }
  finish_rank_trace(trace);
  return trace;
}

}  // namespace parasim::calib::trace
