#include "planner/export/exporter.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "planner/export/deepspeed_export.hpp"
#include "planner/export/export_context.hpp"
#include "planner/export/megatron_export.hpp"
#include "planner/export/shampoo_export.hpp"
#include "planner/export/target_versions.hpp"
#include "planner/export/torchtitan_export.hpp"

namespace parasim::exporter {
namespace {

std::string header(const ExportInput& in, const std::string& label, const Rendered& r,
                   const ExportContext& c) {
  const bool approximate = !c.differences().empty();
  if (r.comment.empty() || (!r.header_always && !approximate)) return {};
  const std::string& p = r.comment;
  std::string out = p + fmt::format("parasim export of scenario \"{}\" for {}{}\n",
                                    in.scenario.name, label, in.is_plan ? " (from a plan)" : "");
  for (const std::string& n : c.notes()) out += p + "note: " + n + "\n";
  if (approximate) {
    out += p + "APPROXIMATE: the scenario asks for what " + label +
           " cannot express; written instead:\n";
    for (const Difference& d : c.differences()) out += p + "  " + difference_text(d, label) + "\n";
  }
  return out + (r.header_always ? "\n" : "");
}

// A JSON body with the header as its `embed_key` object: what was exported, for what, the notes
// and every difference written closest (--allow-approximate).
std::string embedded_header(const ExportInput& in, const std::string& label, const Rendered& r,
                            const ExportContext& c) {
  nlohmann::ordered_json body = nlohmann::ordered_json::parse(r.body);
  nlohmann::ordered_json notes = nlohmann::ordered_json::array();
  for (const std::string& n : c.notes()) notes.push_back(n);
  nlohmann::ordered_json approximate = nlohmann::ordered_json::array();
  for (const Difference& d : c.differences()) approximate.push_back(difference_text(d, label));
  body[r.embed_key] = nlohmann::ordered_json{
      {"exported_by", fmt::format("parasim export of scenario \"{}\"{}", in.scenario.name,
                                  in.is_plan ? " (from a plan)" : "")},
      {"target", label},
      {"notes", notes},
      {"approximate", approximate}};
  return body.dump(2) + "\n";
}

}  // namespace

ExportResult export_scenario(const ExportInput& input, const ExportOptions& options) {
  const strat::Scenario& s = input.scenario;
  const bool dash = s.optimizer.kind == strat::OptimizerKind::kDash;
  const TargetVersion& version = resolve_version(options.target, options.version, dash);
  ExportContext c(input.file, input.path_prefix, version.label, options.allow_approximate);
  c.note("written for " + version.label + ": every key is one that version's own source accepts");
  Rendered r;
  switch (options.target) {
    case Target::kMegatron:
      r = write_megatron(s, options, c);
      break;
    case Target::kDeepSpeed:
      r = write_deepspeed(s, options, c);
      break;
    case Target::kTorchtitan:
      r = write_torchtitan(s, options, version.version, c);
      break;
    case Target::kShampoo:
      r = write_shampoo(s, options, c);
      break;
  }
  if (!r.embed_key.empty()) return c.finish(embedded_header(input, version.label, r, c));
  return c.finish(header(input, version.label, r, c) + r.body);
}

}  // namespace parasim::exporter
