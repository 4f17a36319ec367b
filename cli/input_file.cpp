#include "cli/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "costmodel/diagnostics.hpp"

namespace parasim::cli {

void check_input_file(const std::string& path) {
  std::string problem;
  // O_NONBLOCK: a FIFO opens without waiting for a writer; its parser reads it (or refuses it).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    problem = std::string("cannot read: ") + std::strerror(errno);
  } else {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      problem = "cannot read: it is a folder (expected a JSON file)";
    }
    ::close(fd);
  }
  if (problem.empty()) return;
  cost::Diagnostics d(path.empty() ? std::string("\"\" (an empty file name)") : path);
  d.add("", problem);
  throw cost::InputError(std::move(d));
}

}  // namespace parasim::cli
