// The project's docs and code stand alone: none cites a file of the developers' shared
// reference folder, which users do not have (issue 13 item 19). Sources are cited as papers,
// URLs and repository files instead.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../support/test_support.hpp"

using namespace parasim::test;

TEST_CASE("no doc, source, scenario or script cites the developers' shared folder") {
  const std::vector<std::string> extensions{".md", ".hpp", ".cpp", ".cuh", ".cu", ".json",
                                            ".cmake", ".sh", ".txt"};
  // Assembled from parts, so that this file does not cite them itself.
  const std::string shared = std::string("shared") + "/";
  const std::vector<std::string> forbidden{"../" + shared, "/work/" + shared,
                                           shared + "reference", shared + "design",
                                           std::string("seed-papers") + ".md",
                                           std::string("conventions") + ".md"};
  std::size_t files = 0;
  for (auto it = fs::recursive_directory_iterator(kSourceDir); it != fs::end(it); ++it) {
    const std::string name = it->path().filename().string();
    // Build trees (build/, build-asan/, ...) and git's own files are not the project's text.
    if (it->is_directory() && (name.rfind("build", 0) == 0 || name[0] == '.')) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    const std::string ext = it->path().extension().string();
    if (std::find(extensions.begin(), extensions.end(), ext) == extensions.end() &&
        name != "CMakeLists.txt") {
      continue;
    }
    ++files;
    const std::string text = read_text(it->path());
    for (const std::string& f : forbidden) {
      CHECK_MESSAGE(text.find(f) == std::string::npos,
                    fs::relative(it->path(), kSourceDir).string() << " cites " << f);
    }
  }
  CHECK(files > 100);
}
