// Golden exports: every shipped scenario and the hand-written plan, to every target, compared
// byte for byte with tests/data/exports/ (a refusal with its message). Re-written on purpose with
// scripts/export/update_goldens.sh, the reason in the commit (tests/data/README.md).
#include <doctest/doctest.h>

#include <cstdlib>

#include "export_test_support.hpp"

using namespace parasim::test;
using parasim::exporter::Target;

namespace {

const fs::path kGoldenDir = kSourceDir / "tests/data/exports";

std::string extension(const TargetCase& t) {
  switch (t.target) {
    case Target::kDeepSpeed:
      return ".json";
    case Target::kTorchtitan:
      return t.version == "0.2" ? ".toml" : ".txt";
    case Target::kShampoo:
      return ".py";
    default:
      return ".txt";
  }
}

bool updating() {
  return std::getenv("PARASIM_UPDATE_EXPORTS") != nullptr;
}

void check_golden(const fs::path& expected_file, const fs::path& other_file,
                  const std::string& actual) {
  if (updating()) {
    write_text(expected_file, actual);
    if (fs::exists(other_file)) fs::remove(other_file);
    return;
  }
  REQUIRE_MESSAGE(fs::exists(expected_file),
                  "no golden " << expected_file.string() << " (scripts/export/update_goldens.sh)");
  CHECK_MESSAGE(!fs::exists(other_file), "stale golden " << other_file.string());
  CHECK_MESSAGE(read_text(expected_file) == actual, "export differs from " << expected_file.string()
                                                                           << ":\n"
                                                                           << actual);
}

}  // namespace

TEST_CASE("every shipped scenario and the plan export to every target as the goldens say") {
  int exported = 0, refused = 0;
  for (const ExportCase& c : export_cases()) {
    const auto in = input_of(c);
    for (const TargetCase& t : target_cases()) {
      CAPTURE(c.display);
      CAPTURE(t.tag);
      const Outcome o = run_export(in, t, false);
      const fs::path ok_file = kGoldenDir / (c.name + "." + t.tag + extension(t));
      const fs::path refused_file = kGoldenDir / (c.name + "." + t.tag + ".refused.txt");
      if (o.result) {
        ++exported;
        check_golden(ok_file, refused_file, o.result->text);
      } else {
        ++refused;
        check_golden(refused_file, ok_file, o.refusal);
      }
    }
  }
  // 36 inputs (the shipped scenarios, the hand-written plans, planner outputs) x 5 targets; the
  // refusals are the features the trainers lack (docs/export.md).
  CHECK(exported + refused == 180);
  CHECK(exported > 0);
  CHECK(refused > 0);
}

TEST_CASE("approximate exports carry their differences in the header, as the goldens say") {
  struct Approx {
    const char* scenario;
    TargetCase target;
  };
  const Approx cases[] = {{"gpt2-medium-gpipe", {Target::kMegatron, "", "megatron"}},
                          {"llama2-7b-dgx-h100", {Target::kTorchtitan, "", "torchtitan"}},
                          {"llama2-7b-dgx-h100", {Target::kDeepSpeed, "", "deepspeed"}}};
  for (const Approx& a : cases) {
    ExportCase c{a.scenario, std::string("scenarios/") + a.scenario + ".json",
                 kSourceDir / "scenarios" / (std::string(a.scenario) + ".json")};
    const Outcome o = run_export(input_of(c), a.target, true);
    REQUIRE(o.result);
    CHECK_FALSE(o.result->differences.empty());
    if (a.target.target == Target::kDeepSpeed) {  // plain JSON: the differences under _parasim
      const auto j = nlohmann::json::parse(o.result->text);
      CHECK(j.at("_parasim").at("approximate").size() == o.result->differences.size());
    } else {
      CHECK(o.result->text.find("APPROXIMATE") != std::string::npos);
    }
    const fs::path file =
        kGoldenDir / (c.name + "." + a.target.tag + ".approximate" + extension(a.target));
    check_golden(file, kGoldenDir / "none", o.result->text);
  }
}
