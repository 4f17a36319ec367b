#include "planner/export/trainer_defaults.hpp"

#include <algorithm>
#include <stdexcept>

#include "strategies/input/scenario.hpp"

namespace parasim::exporter {
namespace {

using nlohmann::json;

// The preset a scenario's framework names ("" for none or a custom one).
std::string framework_preset_of(const json& training) {
  if (!training.is_object() || !training.contains("framework")) return "";
  const json& f = training["framework"];
  if (f.is_string()) return f.get<std::string>();
  if (f.is_object() && f.contains("preset") && f["preset"].is_string()) {
    return f["preset"].get<std::string>();
  }
  return "";
}

}  // namespace

const TrainerDefaults& trainer_defaults(Target trainer) {
  static const TrainerDefaults megatron{"megatron-lm", {"megatron-lm", "megatron-lm-2021"}, true,
                                        false};
  static const TrainerDefaults deepspeed{
      "deepspeed", {"deepspeed", "deepspeed-2021", "megatron-deepspeed"}, false, false};
  static const TrainerDefaults torchtitan{"torchtitan", {"torchtitan"}, true, true};
  switch (trainer) {
    case Target::kMegatron: return megatron;
    case Target::kDeepSpeed: return deepspeed;
    case Target::kTorchtitan: return torchtitan;
    case Target::kShampoo: break;
  }
  throw std::invalid_argument("shampoo is an optimizer library, not a trainer: plan --for takes "
                              "megatron, deepspeed or torchtitan");
}

json with_trainer_defaults(const json& document, Target trainer,
                           std::vector<std::string>* changes) {
  const TrainerDefaults& d = trainer_defaults(trainer);
  json out = document;
  // A missing or malformed training section is left as it is, for the parser to name.
  if (!out.is_object() || !out.contains("training") || !out["training"].is_object()) return out;
  json& training = out["training"];
  const std::string label = target_name(trainer);
  const std::string preset = framework_preset_of(training);
  const auto& family = d.framework_family;
  if (std::find(family.begin(), family.end(), preset) == family.end()) {
    training["framework"] = d.framework_preset;
    if (changes != nullptr) {
      changes->push_back("training.framework: " + d.framework_preset + " (" + label +
                         "'s host loop" +
                         (preset.empty() ? std::string() : ", instead of " + preset) + ")");
    }
  }
  if (!training.contains("grad_precision")) {
    std::string precision =
        training.contains("precision") && training["precision"].is_string()
            ? training["precision"].get<std::string>()
            : cost::dtype_name(strat::TrainingSpec{}.precision);  // the scenario's default
    // FP8 training's gradients are bf16's (the FP8 GEMMs return bf16; Megatron-LM keeps --bf16).
    if (precision == "fp8") precision = "bf16";
    const bool fp32 = (precision == "bf16" && d.fp32_gradients_with_bf16) ||
                      (precision == "fp16" && d.fp32_gradients_with_fp16);
    if (fp32) {
      training["grad_precision"] = "fp32";
      if (changes != nullptr) {
        changes->push_back("training.grad_precision: fp32 (" + label +
                           " accumulates and reduces " + precision + " gradients in fp32)");
      }
    }
  }
  return out;
}

}  // namespace parasim::exporter
