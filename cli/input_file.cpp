#include "cli/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "costmodel/diagnostics.hpp"
#include "costmodel/json_fields.hpp"

namespace parasim::cli {

void check_input_file(const std::string& path) {
  std::string problem;
  // O_NONBLOCK: a FIFO opens without waiting for a writer, and is refused by its kind.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    problem = std::string("cannot read: ") + std::strerror(errno);
  } else {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
      problem = S_ISDIR(st.st_mode)
                    ? "cannot read: it is a folder (expected a JSON file)"
                    : fmt::format("cannot read: it is {} (expected a regular JSON file)",
                                  cost::file_kind_text(st.st_mode));
    }
    ::close(fd);
  }
  if (problem.empty()) return;
  cost::Diagnostics d(path.empty() ? std::string("\"\" (an empty file name)") : path);
  d.add("", problem);
  throw cost::InputError(std::move(d));
}

}  // namespace parasim::cli
