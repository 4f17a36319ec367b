#include "cli/output_folder.hpp"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "cli/commands.hpp"
#include "cli/output_file.hpp"

namespace parasim::cli {
namespace fs = std::filesystem;

OutputFolder::~OutputFolder() {
  if (created_top_.empty()) return;
  std::error_code ec;
  fs::remove_all(created_top_, ec);  // only folders this command made, and what it put there
}

void OutputFolder::check() const {
  auto refuse = [this](const std::string& why) {
    throw OutputError("cannot write into " + option_ + " " + path_ + ": " + why, kExitBadInput);
  };
  if (path_.empty()) refuse("an empty folder name");
  std::error_code ec;
  fs::path p = fs::absolute(path_, ec);
  if (ec) refuse(ec.message());
  // The path itself, or its nearest existing ancestor, must be a folder we may write in.
  for (fs::path at = p;; at = at.parent_path()) {
    const fs::file_status st = fs::status(at, ec);
    if (fs::exists(st)) {
      if (!fs::is_directory(st)) {
        refuse(at == p ? "it is a file, not a folder; give a folder name (parasim writes one "
                         "SVG per variant into it)"
                       : at.string() + " is a file, not a folder");
      }
      if (::access(at.c_str(), W_OK | X_OK) != 0) {
        refuse(at == p ? "no permission to write files in it"
                       : "no permission to create a folder in " + at.string());
      }
      return;
    }
    if (at == at.parent_path()) refuse("no part of the path exists");
  }
}

void OutputFolder::create() {
  check();
  std::error_code ec;
  const fs::path p = fs::absolute(path_, ec);
  fs::path top;
  for (fs::path at = p; !fs::exists(at, ec) && at != at.parent_path(); at = at.parent_path()) {
    top = at;
  }
  fs::create_directories(p, ec);
  if (ec) {
    throw OutputError("cannot write into " + option_ + " " + path_ + ": " + ec.message(),
                      kExitFailure);
  }
  if (!top.empty()) created_top_ = top.string();
}

}  // namespace parasim::cli
