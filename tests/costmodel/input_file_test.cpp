// Reading input files (costmodel/json_fields.hpp): the size cap shared by scenarios and profiles,
// refused before reading; JSON the library cannot hold reported as a problem, never thrown.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <string>

#include "../support/test_support.hpp"
#include "costmodel/json_fields.hpp"
#include "costmodel/profile.hpp"

namespace parasim::cost {

TEST_CASE("a profile over the 16 MiB input cap is refused with the limit named") {
  test::TempDir tmp;
  const std::string path = tmp.file("big.json");
  // Valid JSON one byte over the cap: {"parasim_profile": 1, "source": "xxx..."}.
  const std::string head = R"({"parasim_profile": 1, "source": ")";
  const std::string tail = "\"}";
  test::write_text(path, head + std::string(kMaxInputFileBytes + 1 - head.size() - tail.size(), 'x') +
                             tail);
  try {
    load_profile(path);
    FAIL("no error");
  } catch (const InputError& e) {
    REQUIRE(e.diagnostics().problems().size() == 1);
    CHECK(e.diagnostics().file() == path);
    CHECK(e.diagnostics().problems()[0].json_path.empty());
    CHECK(e.diagnostics().problems()[0].message ==
          "file is 16777217 bytes, over the limit of 16777216 bytes (16 MiB) for a profile");
  }
  // At the cap it is read.
  test::write_text(path, head + std::string(kMaxInputFileBytes - head.size() - tail.size(), 'x') +
                             tail);
  CHECK(load_profile(path).source.size() == kMaxInputFileBytes - head.size() - tail.size());
  // A caller's smaller cap, and the same cap on text given directly.
  CHECK_THROWS_WITH_AS(parse_profile(R"({"parasim_profile": 1})", "p.json", 8),
                       doctest::Contains("over the limit of 8 bytes"), InputError);
}

TEST_CASE("read_input_file: missing file and directory are one problem at the root") {
  test::TempDir tmp;
  Diagnostics missing("m");
  CHECK(!read_input_file(tmp.file("none.json"), 100, "profile", missing));
  REQUIRE(missing.problems().size() == 1);
  CHECK(missing.problems()[0].message.find("cannot open the profile file") != std::string::npos);
  Diagnostics dir("d");
  CHECK(!read_input_file(tmp.path().string(), 100, "scenario", dir));
  REQUIRE(dir.problems().size() == 1);
}

TEST_CASE("parse_json_document reports what nlohmann::json throws, at the root") {
  for (const char* text : {"9e308", "[1, -1e400]", "{\"a\": 1e309}"}) {
    CAPTURE(text);
    Diagnostics d("x.json");
    CHECK(!parse_json_document(text, d));
    REQUIRE(d.problems().size() == 1);
    CHECK(d.problems()[0].json_path.empty());
    CHECK(d.problems()[0].message.find("beyond the range of a double") != std::string::npos);
  }
  Diagnostics syntax("x.json");
  CHECK(!parse_json_document("{", syntax));
  REQUIRE(syntax.problems().size() == 1);
  CHECK(syntax.problems()[0].message.find("invalid JSON at byte ") != std::string::npos);
  Diagnostics fine("x.json");
  CHECK(parse_json_document("1.7e308", fine));
  CHECK(fine.ok());
}

TEST_CASE("read_input_file refuses a FIFO without waiting for a writer, and other non-files") {
  test::TempDir tmp;
  const std::string fifo = tmp.file("f.json");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  Diagnostics d("f");
  CHECK(!read_input_file(fifo, 100, "scenario", d));  // returns at once: nothing writes it
  REQUIRE(d.problems().size() == 1);
  CHECK(d.problems()[0].message ==
        "not a regular file: it is a FIFO (named pipe), which parasim does not read (expected a "
        "scenario JSON file)");
  Diagnostics dev("n");
  CHECK(!read_input_file("/dev/null", 100, "profile", dev));
  REQUIRE(dev.problems().size() == 1);
  CHECK(dev.problems()[0].message.find("a character device") != std::string::npos);
}

TEST_CASE("json_nesting_depth counts arrays and objects outside strings, exactly") {
  CHECK(json_nesting_depth("1", 64) == 0);
  CHECK(json_nesting_depth("{}", 64) == 1);
  CHECK(json_nesting_depth(R"({"a": [1, {"b": []}]})", 64) == 4);
  CHECK(json_nesting_depth(R"(["[[[[", "\"[[", {}])", 64) == 2);  // brackets in strings skipped
  CHECK(json_nesting_depth(std::string(1000, '['), 10) == 11);    // stops once past the limit
}

TEST_CASE("parse_json_document refuses nesting past kMaxJsonDepth at the root, and takes 64") {
  const auto nested = [](std::size_t n) { return std::string(n, '[') + std::string(n, ']'); };
  Diagnostics fine("ok.json");
  CHECK(parse_json_document(nested(kMaxJsonDepth), fine));
  CHECK(fine.ok());
  Diagnostics deep("deep.json");
  CHECK(!parse_json_document(nested(100000), deep));
  REQUIRE(deep.problems().size() == 1);
  CHECK(deep.problems()[0].json_path.empty());
  CHECK(deep.problems()[0].message.find("JSON nested more than 64 levels deep") == 0);
}

}  // namespace parasim::cost
