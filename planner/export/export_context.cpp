#include "planner/export/export_context.hpp"

#include <fmt/format.h>

#include "costmodel/diagnostics.hpp"

namespace parasim::exporter {

const char* target_name(Target t) {
  switch (t) {
    case Target::kMegatron:
      return "megatron";
    case Target::kDeepSpeed:
      return "deepspeed";
    case Target::kTorchtitan:
      return "torchtitan";
    case Target::kShampoo:
      return "shampoo";
  }
  return "?";
}

bool target_from_name(const std::string& name, Target* out) {
  for (Target t : kAllTargets) {
    if (name == target_name(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

const char* field_use_name(FieldUse u) {
  switch (u) {
    case FieldUse::kMapped:
      return "mapped";
    case FieldUse::kStated:
      return "stated";
    case FieldUse::kNotTrainer:
      return "not a trainer setting";
    case FieldUse::kUnused:
      return "unused";
    case FieldUse::kApproximated:
      return "approximated";
  }
  return "?";
}

void ExportContext::mapped(std::string path, std::string key) {
  ledger_.push_back({std::move(path), FieldUse::kMapped, std::move(key)});
}

void ExportContext::stated(std::string path, std::string note) {
  notes_.push_back(note);
  ledger_.push_back({std::move(path), FieldUse::kStated, std::move(note)});
}

void ExportContext::not_trainer(std::string path, std::string why) {
  ledger_.push_back({std::move(path), FieldUse::kNotTrainer, std::move(why)});
}

void ExportContext::unused(std::string path, std::string why) {
  ledger_.push_back({std::move(path), FieldUse::kUnused, std::move(why)});
}

void ExportContext::part_of_refused(std::string path, std::string why) {
  ledger_.push_back({std::move(path), FieldUse::kApproximated, std::move(why)});
}

void ExportContext::cannot(std::string path, std::string feature, std::string supported_by,
                           std::string closest) {
  ledger_.push_back({path, FieldUse::kApproximated, feature});
  differences_.push_back(
      {std::move(path), std::move(feature), std::move(supported_by), std::move(closest)});
}

std::string difference_text(const Difference& d, const std::string& target_label) {
  return fmt::format(
      "{}: {} is not expressible in {}; supported by: {}; --allow-approximate "
      "writes {}",
      d.path, d.feature, target_label, d.supported_by, d.closest);
}

ExportResult ExportContext::finish(std::string text) const {
  if (!differences_.empty() && !allow_approximate_) {
    cost::Diagnostics diagnostics(file_);
    for (const Difference& d : differences_) {
      diagnostics.add(prefix_ + d.path,
                      fmt::format("{} is not expressible in {}; supported by: {}; "
                                  "--allow-approximate writes {}",
                                  d.feature, label_, d.supported_by, d.closest));
    }
    throw cost::InputError(std::move(diagnostics));
  }
  ExportResult result;
  result.text = std::move(text);
  result.target_label = label_;
  result.notes = notes_;
  result.differences = differences_;
  result.ledger = ledger_;
  return result;
}

}  // namespace parasim::exporter
