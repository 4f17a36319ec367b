#include "cli/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>

#include "cli/commands.hpp"
#include "cli/staged_files.hpp"

namespace parasim::cli {
namespace {

namespace fs = std::filesystem;

std::string error_text(int error) { return std::strerror(error); }

// The descriptor a path names without a file system look-up: /dev/stdout, /dev/stderr,
// /dev/stdin, /dev/fd/N, /proc/self/fd/N.
std::optional<int> descriptor_of(std::string_view path) {
  if (path == "/dev/stdin") return 0;
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (std::string_view prefix : {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/")}) {
    if (path.substr(0, prefix.size()) != prefix) continue;
    const std::string_view digits = path.substr(prefix.size());
    int fd = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
    if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty()) return fd;
  }
  return std::nullopt;
}

std::string parent_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// Writes all of `data` to `fd`; returns 0 or the errno of the failed write.
int write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

mode_t current_umask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

}  // namespace

OutputFile::Target OutputFile::resolve() const {
  Target t;
  if (path_.empty()) return t;
  if (path_ == "-") {
    t.mode = Mode::kStandardOutput;
    return t;
  }
  std::string p = path_;
  for (int hop = 0; hop < 40; ++hop) {
    if (const auto fd = descriptor_of(p)) {
      t.mode = *fd == 1 ? Mode::kStandardOutput : Mode::kDescriptor;
      t.descriptor = *fd;
      t.path = p;
      return t;
    }
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    char link[4096];
    const ssize_t n = ::readlink(p.c_str(), link, sizeof link - 1);
    if (n < 0) break;
    const std::string to(link, static_cast<std::size_t>(n));
    p = fs::path(to).is_absolute() ? to : (fs::path(parent_of(p)) / to).string();
  }
  t.path = p;
  struct stat st {};
  const bool in_place =
      ::stat(p.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
  t.mode = in_place ? Mode::kInPlace : Mode::kReplace;
  return t;
}

bool OutputFile::is_stdout() const { return resolve().mode == Mode::kStandardOutput; }

bool OutputFile::replaces_file() const { return resolve().mode == Mode::kReplace; }

void OutputFile::check_target() const {
  const Target t = resolve();
  if (t.mode == Mode::kNone || t.mode == Mode::kStandardOutput) return;
  const std::string& p = t.path;
  const std::string shown = p == path_ ? path_ : path_ + " (a link to " + p + ")";
  auto refuse = [&](const std::string& why) {
    throw OutputError("cannot write " + shown + ": " + why, kExitBadInput);
  };
  if (t.mode == Mode::kDescriptor) {
    const int flags = ::fcntl(t.descriptor, F_GETFL);
    if (flags < 0) refuse("descriptor " + std::to_string(t.descriptor) + " is not open");
    if ((flags & O_ACCMODE) == O_RDONLY) {
      refuse("descriptor " + std::to_string(t.descriptor) + " is open for reading only");
    }
    return;
  }
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) {
    const int error = errno;
    if (error == ELOOP) refuse("too many levels of symbolic links");
    if (error != ENOENT) refuse(error_text(error));
    // A new file: its folder must exist and take new entries.
    const std::string dir = parent_of(p);
    struct stat ds {};
    if (::stat(dir.c_str(), &ds) != 0 || !S_ISDIR(ds.st_mode)) {
      refuse("the folder " + dir + " does not exist");
    }
    if (::access(dir.c_str(), W_OK | X_OK) != 0) {
      refuse("no permission to create files in " + dir);
    }
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    refuse("it is a folder; give a file name, e.g. " + (fs::path(path_) / "result.json").string());
  }
  if (S_ISBLK(st.st_mode)) refuse("it is a block device (a disk); parasim does not write to one");
  if (S_ISSOCK(st.st_mode)) refuse("it is a socket");
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    if (::access(p.c_str(), W_OK) != 0) refuse("no permission to write it");
    return;
  }
  // A regular file. Root may write any file, so the write bits are checked as well: a file
  // nobody may write is one its owner protected.
  if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) {
    refuse("it is read-only; parasim does not replace it (make it writable or choose another "
           "name)");
  }
  if (::access(p.c_str(), W_OK) != 0) refuse("no permission to replace it");
  if (::access(parent_of(p).c_str(), W_OK | X_OK) != 0) {
    refuse("no permission to create files in " + parent_of(p) +
           " (parasim replaces a file by renaming a new one onto it)");
  }
}

void OutputFile::stage(std::string text) {
  if (path_.empty()) return;
  check_target();
  target_ = resolve();
  staged_ = true;
  if (target_.mode != Mode::kReplace) {
    staged_text_ = std::move(text);
    return;
  }
  struct stat st {};
  target_.exists = ::stat(target_.path.c_str(), &st) == 0;
  const fs::path final_path(target_.path);
  std::string leaf = ".";  // hidden, beside the target, unique (mkstemp fills the X)
  leaf += final_path.filename().string();
  leaf += ".parasim-XXXXXX";
  std::string name = (final_path.parent_path() / leaf).string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    throw OutputError("cannot write " + path_ + ": cannot create a temporary file in " +
                          parent_of(target_.path) + ": " + error_text(errno),
                      kExitFailure);
  }
  temp_path_ = name;
  temp_slot_ = register_staged_file(temp_path_);
  // mkstemp creates the file 0600; give it the replaced file's bits, or what a new file gets.
  const mode_t mode = target_.exists ? (st.st_mode & 07777) : (0666 & ~current_umask());
  int error = write_all(fd, text);
  if (error == 0 && ::fchmod(fd, mode) != 0) error = errno;
  if (target_.exists && ::geteuid() == 0) {
    if (::fchown(fd, st.st_uid, st.st_gid) != 0) {
      // Best effort: the file stays root's, which is what a new file of root's would be.
    }
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    std::remove(temp_path_.c_str());
    temp_path_.clear();
    release_staged_file(std::exchange(temp_slot_, -1));
    throw OutputError("cannot write " + path_ + ": " + error_text(error), kExitFailure);
  }
}

void OutputFile::commit(std::ostream& standard_output) { commit_outputs({this}, standard_output); }

OutputFile::~OutputFile() {
  if (!committed_ && !temp_path_.empty()) std::remove(temp_path_.c_str());
  release_staged_file(temp_slot_);
}

void OutputFile::check_not_input(const std::string& input, std::string_view role) const {
  const Target t = resolve();
  if (t.mode != Mode::kReplace || input.empty()) return;
  struct stat out_st {}, in_st {};
  if (::stat(t.path.c_str(), &out_st) != 0 || ::stat(input.c_str(), &in_st) != 0) return;
  if (out_st.st_dev == in_st.st_dev && out_st.st_ino == in_st.st_ino) {
    throw OutputError("cannot write " + path_ + ": it is the command's " + std::string(role) +
                          " (" + input + "), which the output would replace; choose another "
                          "name",
                      kExitBadInput);
  }
}

void check_outputs_not_inputs(const std::vector<const OutputFile*>& outputs,
                              const std::vector<std::pair<std::string, std::string>>& inputs) {
  for (const OutputFile* f : outputs) {
    for (const auto& [path, role] : inputs) f->check_not_input(path, role);
  }
}

void commit_outputs(const std::vector<OutputFile*>& files, std::ostream& standard_output) {
  using Mode = OutputFile::Mode;
  std::vector<OutputFile*> active;
  for (OutputFile* f : files) {
    if (f == nullptr || f->empty()) continue;
    if (!f->staged_) {
      throw OutputError("internal error: " + f->path_ + " committed before it was staged",
                        kExitFailure);
    }
    f->check_target();  // the file system may have changed since stage()
    active.push_back(f);
  }
  // Two outputs to one place would overwrite each other.
  std::vector<std::pair<std::string, const OutputFile*>> places;
  for (const OutputFile* f : active) {
    std::string place;
    switch (f->target_.mode) {
      case Mode::kStandardOutput: place = "standard output"; break;
      case Mode::kDescriptor: place = "descriptor " + std::to_string(f->target_.descriptor); break;
      default: {
        std::error_code ec;
        const fs::path canonical = fs::weakly_canonical(fs::absolute(f->target_.path), ec);
        place = ec ? f->target_.path : canonical.string();
      }
    }
    for (const auto& [other_place, other] : places) {
      if (other_place == place) {
        throw OutputError(other->path_ + " and " + f->path_ + " would both write to " + place +
                              "; give each output its own place",
                          kExitBadInput);
      }
    }
    places.emplace_back(place, f);
  }

  // Outputs written in place are opened before anything is renamed: a FIFO that no process reads
  // refuses a non-blocking open (ENXIO) instead of blocking the command after the files were
  // put in place. The descriptors are written to last, in blocking mode.
  struct Opened {
    int fd = -1;
    ~Opened() {
      if (fd >= 0) ::close(fd);
    }
  };
  std::vector<Opened> opened(active.size());
  for (std::size_t i = 0; i < active.size(); ++i) {
    const OutputFile* f = active[i];
    if (f->target_.mode != Mode::kInPlace) continue;
    const int fd = ::open(f->target_.path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      const int error = errno;
      throw OutputError("cannot write " + f->path_ + ": " +
                            (error == ENXIO ? std::string("it is a FIFO that no process is reading "
                                                          "(start its reader first)")
                                            : error_text(error)) +
                            "; no output was written",
                        error == ENXIO ? kExitBadInput : kExitFailure);
    }
    opened[i].fd = fd;
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }

  // Regular files first, each replaced file kept as a backup until everything is in place.
  struct Placed {
    OutputFile* file;
    std::string backup;  // empty: the file did not exist before
    int backup_slot = -1;
  };
  std::vector<Placed> placed;
  auto roll_back = [&]() -> std::string {
    std::string trouble;
    for (auto it = placed.rbegin(); it != placed.rend(); ++it) {
      const std::string& target = it->file->target_.path;
      const int failed = it->backup.empty() ? ::unlink(target.c_str())
                                            : ::rename(it->backup.c_str(), target.c_str());
      if (failed != 0) {
        trouble += "; " + target + " could not be restored (" + error_text(errno) + ")" +
                   (it->backup.empty() ? "" : ", its old content is in " + it->backup);
      }
    }
    for (const Placed& p : placed) release_staged_file(p.backup_slot);
    placed.clear();
    return trouble;
  };
  auto fail = [&](const std::string& message) {
    const std::string trouble = roll_back();
    throw OutputError(message + (trouble.empty() ? "; no output was written" : trouble),
                      kExitFailure);
  };
  for (OutputFile* f : active) {
    if (f->target_.mode != Mode::kReplace) continue;
    const std::string& target = f->target_.path;
    std::string backup;
    int backup_slot = -1;
    struct stat st {};
    if (::lstat(target.c_str(), &st) == 0) {
      backup = f->temp_path_ + ".old";
      // A hard-linked backup may go on a signal (the target still holds the content); one the
      // old file was moved to may not.
      if (::link(target.c_str(), backup.c_str()) == 0) {
        backup_slot = register_staged_file(backup);
      } else if (::rename(target.c_str(), backup.c_str()) != 0) {
        fail("cannot put " + f->path_ + " in place: cannot keep a backup of the old file (" +
             error_text(errno) + ")");
      }
    }
    if (::rename(f->temp_path_.c_str(), target.c_str()) != 0) {
      const int error = errno;
      if (!backup.empty() && ::rename(backup.c_str(), target.c_str()) != 0) {
        release_staged_file(backup_slot);  // the backup holds the old content: keep it
        fail("cannot put " + f->path_ + " in place (" + error_text(error) + "), and its old " +
             "content is left in " + backup);
      }
      release_staged_file(backup_slot);
      fail("cannot put " + f->path_ + " in place: " + error_text(error));
    }
    f->temp_path_.clear();
    release_staged_file(std::exchange(f->temp_slot_, -1));
    placed.push_back({f, backup, backup_slot});
  }
  // Then the outputs written in place, standard output last.
  for (std::size_t i = 0; i < active.size(); ++i) {
    OutputFile* f = active[i];
    if (f->target_.mode == Mode::kInPlace) {
      const int fd = std::exchange(opened[i].fd, -1);
      int error = write_all(fd, f->staged_text_);
      if (::close(fd) != 0 && error == 0) error = errno;
      if (error != 0) fail("cannot write " + f->path_ + ": " + error_text(error));
    } else if (f->target_.mode == Mode::kDescriptor) {
      if (const int error = write_all(f->target_.descriptor, f->staged_text_)) {
        fail("cannot write " + f->path_ + ": " + error_text(error));
      }
    }
  }
  for (OutputFile* f : active) {
    if (f->target_.mode != Mode::kStandardOutput) continue;
    standard_output << f->staged_text_;
    standard_output.flush();
    if (!standard_output) {
      fail(f->path_ == "-" ? std::string("cannot write standard output")
                           : "cannot write " + f->path_ + " (standard output)");
    }
  }
  for (const Placed& p : placed) {
    if (!p.backup.empty()) ::unlink(p.backup.c_str());
    release_staged_file(p.backup_slot);
  }
  for (OutputFile* f : active) f->committed_ = true;
}

}  // namespace parasim::cli
