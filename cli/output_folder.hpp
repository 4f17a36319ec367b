#pragma once
// parasim::cli::OutputFolder — a folder of outputs (`compare --svg DIR`) that exists only when
// the command succeeded: check() refuses at once a path that cannot become a folder (a file, a
// read-only or missing ancestor), exit code 2 naming it; create() makes the folders that are
// missing and remembers the first one it made; unless keep() is called (after the files were
// committed), the destructor removes the folders it made, so a failing command leaves no empty
// folder behind. A folder that existed before is never removed.

#include <string>

namespace parasim::cli {

class OutputFolder {
 public:
  // `option` names the flag in messages ("--svg").
  OutputFolder(std::string path, std::string option)
      : path_(std::move(path)), option_(std::move(option)) {}
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  ~OutputFolder();

  // Throws OutputError (kExitBadInput) when the path is, or lies under, something other than a
  // folder, or when the folders to make cannot be made (the nearest existing one not writable).
  void check() const;
  // Makes the missing folders (check() first); throws OutputError (kExitFailure) on failure.
  void create();
  // The outputs are in place: what create() made stays.
  void keep() { created_top_.clear(); }

 private:
  std::string path_;
  std::string option_;
  std::string created_top_;  // the outermost folder create() made, removed unless kept
};

}  // namespace parasim::cli
