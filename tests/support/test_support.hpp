#pragma once
// Helpers shared by the test suites: repository paths, file I/O, temporary folders and the
// expectations of the malformed scenarios in tests/data/bad (EXPECTED.txt).

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace parasim::test {

namespace fs = std::filesystem;

inline const fs::path kSourceDir{PARASIM_SOURCE_DIR};

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  REQUIRE_MESSAGE(out.good(), "cannot write " << path.string());
  out << text;
}

// The *.json files of a folder, sorted by name.
inline std::vector<fs::path> json_files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Parses JSON or fails the test naming `what`.
inline nlohmann::json parse_json(const std::string& text, const std::string& what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    FAIL(what << " is not valid JSON: " << e.what());
  }
  return {};
}

// EXPECTED.txt of tests/data/bad: file -> (JSON path, message substring), in file order.
using ExpectedProblems = std::map<std::string, std::vector<std::pair<std::string, std::string>>>;
inline ExpectedProblems expected_problems(const fs::path& dir) {
  ExpectedProblems expected;
  std::istringstream lines(read_text(dir / "EXPECTED.txt"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab1 = line.find('\t');
    const auto tab2 = tab1 == std::string::npos ? tab1 : line.find('\t', tab1 + 1);
    REQUIRE_MESSAGE(tab2 != std::string::npos, "malformed EXPECTED.txt line: " << line);
    expected[line.substr(0, tab1)].emplace_back(line.substr(tab1 + 1, tab2 - tab1 - 1),
                                                line.substr(tab2 + 1));
  }
  return expected;
}

// A fresh, empty directory, removed with everything in it at the end of the scope.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    for (int attempt = 0; attempt < 100; ++attempt) {
      const fs::path p = fs::temp_directory_path() /
                         ("parasim-test-" + std::to_string(rd()) + std::to_string(attempt));
      if (fs::create_directory(p)) {
        path_ = p;
        return;
      }
    }
    FAIL("cannot create a temporary directory");
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

}  // namespace parasim::test
