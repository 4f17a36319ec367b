#pragma once
// parasim::cli::OutputFile — an output that appears only when the whole command succeeded.
//
// Text is written to "PATH.tmp-parasim" and renamed onto PATH by commit(); a command that fails
// before commit() leaves no partial file behind. "-" means standard output.

#include <ostream>
#include <string>

namespace parasim::cli {

class OutputFile {
 public:
  explicit OutputFile(std::string path) : path_(std::move(path)) {}
  bool is_stdout() const { return path_ == "-"; }
  const std::string& path() const { return path_; }
  // Stages `text`; throws std::runtime_error naming the path when it cannot be written.
  void stage(const std::string& text);
  // Throws std::runtime_error naming the path when commit() could not put the file in place
  // (the target is a folder). Check every output before committing any, so that a command
  // leaves all its files or none.
  void check_target() const;
  // Moves the staged text into place (or writes it to `standard_output` for "-").
  void commit(std::ostream& standard_output);
  ~OutputFile();

 private:
  std::string path_;
  std::string staged_text_;
  std::string temp_path_;
  bool committed_ = false;
};

}  // namespace parasim::cli
