#pragma once
// parasim::cli::OutputFile — an output that appears only when the whole command succeeded, and
// that never damages what its path names.
//
// What happens depends on what the path names (resolved when checked, staged and committed):
//   "-", /dev/stdout, /dev/fd/1, /proc/self/fd/1
//                    standard output: the text goes to the command's output stream (the text
//                    report then goes to standard error);
//   /dev/stderr, /dev/fd/N, /proc/self/fd/N
//                    that open descriptor, written as the process's own output;
//   nothing yet, or a regular file
//                    written to a temporary file beside it (".NAME.parasim-XXXXXX"), renamed
//                    onto it by commit: atomic, and the old file stays whole until then. A
//                    replaced file keeps its permission bits (and, as root, its owner);
//   a symbolic link  followed: the file it names is replaced (in that file's folder) and the
//                    link stays; a link to nothing creates the file it names;
//   a character device or a FIFO (/dev/null, /dev/tty, a named pipe)
//                    written in place (opened without truncating or creating), never replaced;
//   a folder, a link to one, a read-only file (no write bit set, so root is refused too), a file
//   the user may not write, a block device, a socket, a missing folder
//                    refused: OutputError with kExitBadInput, the path untouched.
// Errors while writing (a full disk, /dev/full, a closed pipe) are OutputError with
// kExitFailure, and nothing is left behind.
//
// A staged temporary file (and a backup kept while committing) is removed when SIGINT, SIGTERM
// or SIGHUP ends the process (staged_files.hpp).
//
// Several outputs of one command go through commit_outputs(), which is all or none: every
// target is checked first, and those written in place opened (a FIFO nobody reads is refused
// with kExitBadInput before anything is put in place); regular files are renamed into place keeping a backup of each
// replaced file (a hard link, else the old file moved aside) and the in-place writes come last;
// when any step fails, every file renamed so far is put back as it was. Bytes already written to
// a device or pipe cannot be taken back; they are written after every rename has succeeded.

#include <initializer_list>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "costmodel/diagnostics.hpp"

namespace parasim::cli {

class OutputError : public std::runtime_error {
 public:
  // The message names paths from the command line: printed printable() (a newline or U+202E in
  // a file name is shown escaped).
  OutputError(const std::string& message, int exit_code)
      : std::runtime_error(cost::printable(message)), exit_code_(exit_code) {}
  // kExitBadInput: the path cannot take an output (fix the command line); kExitFailure: writing
  // failed.
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

class OutputFile {
 public:
  // "" is no output (every member is then a no-op), "-" standard output.
  explicit OutputFile(std::string path) : path_(std::move(path)) {}
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // removes a staged temporary file that was not committed

  bool empty() const { return path_.empty(); }
  // "-" or a name of descriptor 1.
  bool is_stdout() const;
  // A regular file (or nothing yet): replaced by a rename, so it may be rewritten often.
  bool replaces_file() const;
  const std::string& path() const { return path_; }

  // Throws OutputError (kExitBadInput) naming the path when it cannot take an output; call it
  // before long work so that a wrong path fails at once.
  void check_target() const;
  // Throws OutputError (kExitBadInput) when the output would replace `input` (the same file,
  // through any name or link): `role` says which input ("scenario", "plan", "profile").
  void check_not_input(const std::string& input, std::string_view role) const;
  // Stages `text`: into the temporary file for a regular file (OutputError with kExitFailure
  // when it cannot be written in full), in memory otherwise.
  void stage(std::string text);
  // One output alone: commit_outputs({this}, standard_output).
  void commit(std::ostream& standard_output);

 private:
  friend void commit_outputs(const std::vector<OutputFile*>& files,
                             std::ostream& standard_output);
  enum class Mode { kNone, kStandardOutput, kDescriptor, kInPlace, kReplace };
  struct Target {
    Mode mode = Mode::kNone;
    std::string path;  // the file written (symbolic links followed)
    int descriptor = -1;
    bool exists = false;
  };
  Target resolve() const;

  std::string path_;
  Target target_;
  bool staged_ = false;
  std::string staged_text_;  // standard output, descriptor and in-place targets
  std::string temp_path_;    // regular files
  int temp_slot_ = -1;       // its staged_files.hpp slot (removed on SIGINT/SIGTERM/SIGHUP)
  bool committed_ = false;
};

// check_not_input for every output and every (input path, role) pair given: an output may not
// replace any of the command's inputs.
void check_outputs_not_inputs(const std::vector<const OutputFile*>& outputs,
                              const std::vector<std::pair<std::string, std::string>>& inputs);

// Puts every staged output in place, all or none (see above); throws OutputError. Two outputs
// naming the same place are refused (kExitBadInput) before anything is written.
void commit_outputs(const std::vector<OutputFile*>& files, std::ostream& standard_output);

}  // namespace parasim::cli
