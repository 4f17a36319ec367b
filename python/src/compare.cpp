// compare: the scenario's variants along one axis (cli/runs/compare_run.hpp), returned as the
// rows JSON `parasim compare --json` writes and the table it prints, with each row's pictures
// when asked for.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <tuple>
#include <vector>

#include "cli/runs/compare_run.hpp"
#include "python/src/bindings.hpp"
#include "report/compare/compare_pictures.hpp"

namespace nb = nanobind;

namespace parasim::python {
namespace {

// The axis lists, by CompareOptions member: what `compare --schedules ...` and its siblings take.
void set_axis(cli::CompareOptions& o, const std::string& axis, const std::string& list) {
  const std::map<std::string, std::string cli::CompareOptions::*> axes{
      {"schedules", &cli::CompareOptions::schedules},
      {"placements", &cli::CompareOptions::placements},
      {"layouts", &cli::CompareOptions::layouts},
      {"seq_lens", &cli::CompareOptions::seq_lens},
      {"optimizers", &cli::CompareOptions::optimizers},
      {"ep", &cli::CompareOptions::ep},
      {"dispatchers", &cli::CompareOptions::dispatchers},
      {"precisions", &cli::CompareOptions::precisions},
      {"shardings", &cli::CompareOptions::shardings},
      {"tp_overlaps", &cli::CompareOptions::tp_overlaps},
      {"cp_variants", &cli::CompareOptions::cp_variants},
      {"recomputes", &cli::CompareOptions::recomputes},
      {"compiles", &cli::CompareOptions::compiles}};
  const auto it = axes.find(axis);
  if (it == axes.end()) throw cli::CommandLineError("compare has no axis \"" + axis + "\"");
  o.*(it->second) = list;
}

// (rows JSON, table text, [(label, timeline SVG, memory SVG) per row that ran, when pictures],
// the profile's and the cost model's warnings).
using Comparison = std::tuple<std::string, std::string,
                              std::vector<std::tuple<std::string, std::string, std::string>>,
                              std::vector<std::string>>;

Comparison compare(const std::string& name, const std::optional<std::string>& text,
                   const std::map<std::string, std::string>& axes, int chunks,
                   const std::optional<std::string>& profile_name,
                   const std::optional<std::string>& profile_text, bool allow_foreign_profile,
                   bool pictures) {
  nb::gil_scoped_release release;
  return naming_time_errors(name, [&]() -> Comparison {
    cli::CompareOptions o;
    o.scenario = name;
    o.chunks = chunks;
    for (const auto& [axis, list] : axes) set_axis(o, axis, list);
    const strat::Scenario base = read_scenario({name, text}).scenario;
    std::vector<std::string> warnings;
    const std::optional<cost::Profile> profile = read_checked_profile(
        profile_name, profile_text, base.cluster, allow_foreign_profile, warnings);
    const cli::CompareRun run =
        cli::run_comparison(base, o, profile ? &*profile : nullptr, pictures);
    warnings.insert(warnings.end(), run.warnings.begin(), run.warnings.end());
    std::vector<std::tuple<std::string, std::string, std::string>> svgs;
    if (pictures) {
      const double span = cli::shared_span_s(run.rows);
      for (const cli::CompareRow& row : run.rows) {
        if (!row.ran()) continue;
        svgs.emplace_back(row.variant.label, cli::compare_timeline_svg(row, span),
                          cli::compare_memory_svg(row, span));
      }
    }
    return {cli::compare_json_text(base, run.rows), cli::compare_text(base, run), std::move(svgs),
            std::move(warnings)};
  });
}

}  // namespace

void bind_compare(nb::module_& m) {
  m.def("compare", &compare, nb::arg("name"), nb::arg("text").none(), nb::arg("axes"),
        nb::arg("chunks"), nb::arg("profile_name").none(), nb::arg("profile_text").none(),
        nb::arg("allow_foreign_profile"), nb::arg("pictures"),
        "Compares variants; axes maps an axis (schedules, ...) to its comma-separated list.");
}

}  // namespace parasim::python
