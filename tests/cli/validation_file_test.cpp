// Tests of validation files with problems: every problem reported at once with the file, the
// JSON path and (for a scenario) the case id; exit code 2 and no output written.
#include "report/validation/validation_file.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"
#include "cli/validate_against_command.hpp"
#include "costmodel/diagnostics.hpp"

namespace parasim::cli {
namespace {

using nlohmann::json;
using namespace parasim::test;

// A valid file: the Megatron-LM 1.7B case as the development set maps it, and one not
// expressible case.
json good_file() {
  const fs::path dev = kSourceDir / "scenarios" / "validation" / "megatron2021-table1.json";
  json doc = parse_json(read_text(dev), dev.string());
  json first = doc.at("cases")[0];
  json other = {{"id", "other"}, {"family", "f"}, {"not_expressible", "needs feature X"}};
  doc["cases"] = json::array({first, other});
  return doc;
}

struct Outcome {
  int code = -1;
  std::string err;
  bool wrote_json = false;
};

Outcome validate(const json& doc) {
  TempDir dir;
  write_text(dir.path() / "set.json", doc.dump(1));
  ValidateAgainstOptions o;
  o.path = dir.file("set.json");
  o.json = dir.file("out.json");
  std::ostringstream out, err;
  Outcome r;
  r.code = run_validate_against(o, out, err);
  r.err = err.str();
  r.wrote_json = fs::exists(o.json);
  // Messages name the file as given; make them independent of the temporary folder.
  for (auto at = r.err.find(o.path); at != std::string::npos; at = r.err.find(o.path)) {
    r.err.replace(at, o.path.size(), "set.json");
  }
  return r;
}

void check_problem(const Outcome& r, const std::string& line) {
  CHECK(r.code == kExitBadInput);
  CHECK_FALSE(r.wrote_json);
  CHECK_MESSAGE(r.err.find(line) != std::string::npos, "expected\n  " << line << "\nin\n" << r.err);
}

TEST_CASE("a good validation file runs") {
  const Outcome r = validate(good_file());
  CHECK_MESSAGE(r.code == kExitOk, r.err);
  CHECK(r.wrote_json);
}

TEST_CASE("validation file: unknown keys and a missing measurement are reported together") {
  json doc = good_file();
  doc["sourcee"] = "x";
  doc["cases"][0]["measurd"] = doc["cases"][0]["measured"];
  doc["cases"][0].erase("measured");
  const Outcome r = validate(doc);
  check_problem(r, "set.json: /sourcee: unknown key; did you mean \"source\"?");
  check_problem(r, "set.json: /cases/0/measured: required field is missing");
  check_problem(r, "set.json: /cases/0/measurd: unknown key; did you mean \"measured\"?");
}

TEST_CASE("validation file: a scenario the parser rejects names the case and the path") {
  json doc = good_file();
  doc["cases"][0]["scenario"]["parallel"]["tp"] = 5;
  doc["cases"][0]["scenario"]["training"]["recompute"] = "most";
  const Outcome r = validate(doc);
  check_problem(r,
                "set.json: /cases/0/scenario/training/recompute: case \"t1_1.7B\": scenario "
                "rejected: expected one of \"none\", \"selective\", \"full\", \"per-op\", "
                "got \"most\"");
}

TEST_CASE("validation file: a scenario's cross-field rule is reported under the case") {
  json doc = good_file();
  doc["cases"][0]["scenario"]["parallel"]["tp"] = 5;
  const Outcome r = validate(doc);
  check_problem(r, "set.json: /cases/0/scenario/parallel: case \"t1_1.7B\": scenario rejected: ");
}

TEST_CASE("validation file: measured.from must name the published figure it was taken from") {
  json doc = good_file();
  doc["cases"][0]["measured"]["step_time_s"] = 3.6;
  check_problem(validate(doc),
                "set.json: /cases/0/measured/from: \"/derived/iteration_s_derived\" in "
                "\"published\" is 3.528 (3.528 s), but measured.step_time_s is 3.6 s");
  doc = good_file();
  doc["cases"][0]["measured"]["from"] = "/measured/tflops_per_gpu";
  check_problem(validate(doc),
                "set.json: /cases/0/measured/from: the key \"tflops_per_gpu\" does "
                "not say that it is a time");
  doc["cases"][0]["measured"]["from"] = "/measured/no_such_s";
  check_problem(validate(doc),
                "set.json: /cases/0/measured/from: \"/measured/no_such_s\" names "
                "nothing in the case's \"published\" record");
  doc["cases"][0]["measured"]["from"] = "derived";
  check_problem(validate(doc), "set.json: /cases/0/measured/from: expected a JSON Pointer");
  doc = good_file();
  doc["cases"][0]["measured"]["step_time_s"] = 0;
  check_problem(validate(doc),
                "set.json: /cases/0/measured/step_time_s: expected a positive "
                "step time in seconds");
}

TEST_CASE("validation file: a measured peak memory names its published figure and unit") {
  json doc = good_file();
  auto& published = doc["cases"][0]["published"];
  published["measured"]["memory_gb"] = 59;
  published["measured"]["memory_gib"] = 59;
  auto& measured = doc["cases"][0]["measured"];
  measured["peak_memory_bytes"] = 59e9;
  measured["memory_from"] = "/measured/memory_gb";
  CHECK_MESSAGE(validate(doc).code == kExitOk, validate(doc).err);
  measured["memory_from"] = "/measured/memory_gib";
  check_problem(validate(doc),
                "set.json: /cases/0/measured/memory_from: \"/measured/memory_gib\" in "
                "\"published\" is 59 (63350767616 B), but measured.peak_memory_bytes is "
                "59000000000 B");
  measured["memory_from"] = "/measured/tflops_per_gpu";
  check_problem(validate(doc),
                "set.json: /cases/0/measured/memory_from: the key \"tflops_per_gpu\" does not "
                "say that it is an amount of memory");
  // A memory figure without its source, a source without the figure, and a zero: each reported.
  measured.erase("memory_from");
  check_problem(validate(doc), "set.json: /cases/0/measured/memory_from: required field is missing");
  measured.erase("peak_memory_bytes");
  measured["memory_from"] = "/measured/memory_gb";
  check_problem(validate(doc),
                "set.json: /cases/0/measured/memory_from: names the figure of peak_memory_bytes, "
                "which is missing");
  measured["peak_memory_bytes"] = 0;
  check_problem(validate(doc),
                "set.json: /cases/0/measured/peak_memory_bytes: expected a positive peak memory");
}

TEST_CASE("validation file: ids are unique; a case is a scenario or a reason, not both") {
  json doc = good_file();
  doc["cases"][1]["id"] = "t1_1.7B";
  check_problem(validate(doc),
                "set.json: /cases/1/id: duplicate case id \"t1_1.7B\" (first at /cases/0)");
  doc = good_file();
  doc["cases"][1]["scenario"] = doc["cases"][0]["scenario"];
  check_problem(validate(doc), "set.json: /cases/1/scenario: a case is either simulated");
  doc = good_file();
  doc["cases"][0].erase("scenario");
  check_problem(validate(doc), "set.json: /cases/0/scenario: required field is missing");
  doc = good_file();
  doc["cases"][1]["not_expressible"] = "";
  check_problem(validate(doc), "set.json: /cases/1/not_expressible: expected a non-empty string");
}

TEST_CASE("validation file: version, shape and JSON syntax") {
  json doc = good_file();
  doc["parasim_validation"] = 2;
  check_problem(validate(doc),
                "set.json: /parasim_validation: expected 1 (the validation format "
                "this parasim reads), got 2");
  doc = good_file();
  doc["cases"] = json::array();
  check_problem(validate(doc), "set.json: /cases: expected at least one case");
  doc = good_file();
  doc.erase("source");
  check_problem(validate(doc), "set.json: /source: required field is missing");

  TempDir dir;
  write_text(dir.path() / "broken.json", "{\"parasim_validation\": 1,");
  ValidateAgainstOptions o;
  o.path = dir.path().string();
  std::ostringstream out, err;
  CHECK(run_validate_against(o, out, err) == kExitBadInput);
  CHECK(err.str().find("broken.json: /: invalid JSON at byte") != std::string::npos);
}

TEST_CASE("validation file: a profile that cannot be used is reported at /profile with its problems") {
  TempDir dir;
  json doc = good_file();
  doc["profile"] = "machine/missing.json";
  doc["cases"][0]["scenario"]["parallel"]["tp"] = 5;  // reported in the same run
  write_text(dir.path() / "set.json", doc.dump(1));
  ValidateAgainstOptions o;
  o.path = dir.file("set.json");
  o.json = dir.file("out.json");
  std::ostringstream out, err;
  CHECK(run_validate_against(o, out, err) == kExitBadInput);
  CHECK_FALSE(fs::exists(o.json));
  const std::string missing = (dir.path() / "machine" / "missing.json").string();
  CHECK(err.str().find(o.path + ": /profile: the profile " + missing + " cannot be used; /: ") !=
        std::string::npos);
  CHECK(err.str().find(o.path + ": /cases/0/scenario/parallel: case \"t1_1.7B\"") !=
        std::string::npos);

  // A profile beside the file with a bad field: its own path and message follow.
  fs::create_directories(dir.path() / "machine");
  write_text(dir.path() / "machine" / "missing.json",
             R"({"parasim_profile": 1, "memory_efficiency": 7})");
  doc["cases"][0]["scenario"]["parallel"]["tp"] = 1;
  write_text(dir.path() / "set.json", doc.dump(1));
  std::ostringstream out2, err2;
  CHECK(run_validate_against(o, out2, err2) == kExitBadInput);
  CHECK(err2.str().find(o.path + ": /profile: the profile " + missing +
                        " cannot be used; /memory_efficiency: ") != std::string::npos);
  doc["profile"] = "";
  write_text(dir.path() / "set.json", doc.dump(1));
  std::ostringstream out3, err3;
  CHECK(run_validate_against(o, out3, err3) == kExitBadInput);
  CHECK(err3.str().find(o.path + ": /profile: ") != std::string::npos);
}

TEST_CASE("validation file: over the size or case limit is refused with the limit named") {
  const std::string text = good_file().dump();
  validation::ValidationLimits limits;
  limits.max_file_bytes = 100;
  try {
    validation::parse_validation_file(text, "set.json", limits);
    FAIL("no error");
  } catch (const cost::InputError& e) {
    CHECK(std::string(e.what()).find("over the limit of 100 bytes") != std::string::npos);
  }
  limits = {};
  limits.max_cases = 1;
  try {
    validation::parse_validation_file(text, "set.json", limits);
    FAIL("no error");
  } catch (const cost::InputError& e) {
    CHECK(std::string(e.what()).find("set.json: /cases: 2 cases, over the limit of 1 cases") !=
          std::string::npos);
  }
}

TEST_CASE("a folder: other JSON files are skipped; none at all, or a missing path, is exit 2") {
  TempDir dir;
  write_text(dir.path() / "guard.json", R"({"parasim_validation_guard": 1})");
  ValidateAgainstOptions o;
  o.path = dir.path().string();
  std::ostringstream out, err;
  CHECK(run_validate_against(o, out, err) == kExitBadInput);
  CHECK(err.str().find("no validation file here") != std::string::npos);

  write_text(dir.path() / "set.json", good_file().dump());
  std::ostringstream out2, err2;
  CHECK_MESSAGE(run_validate_against(o, out2, err2) == kExitOk, err2.str());
  CHECK(out2.str().find("1 file, 2 cases: 1 simulated, 1 not expressible") != std::string::npos);

  o.path = dir.file("missing.json");
  std::ostringstream out3, err3;
  CHECK(run_validate_against(o, out3, err3) == kExitBadInput);
  CHECK(err3.str().find("missing.json: /: cannot open the validation file") != std::string::npos);
}

}  // namespace
}  // namespace parasim::cli
