#include "calibrate/progress.hpp"

#include <unistd.h>

#include <algorithm>

namespace parasim::calib {
namespace {
constexpr int kBarWidth = 20;
constexpr std::size_t kLabelWidth = 48;
}  // namespace

bool stream_is_terminal(std::FILE* stream) {
  return stream != nullptr && isatty(fileno(stream)) == 1;
}

Progress::Progress(std::FILE* stream, bool bar, std::size_t total)
    : stream_(stream), bar_(bar), total_(std::max<std::size_t>(total, 1)) {}

void Progress::section(const std::string& what, std::size_t points) {
  if (stream_ == nullptr || bar_ || points == 0) return;
  std::fprintf(stream_, "measuring %zu %s point%s\n", points, what.c_str(), points == 1 ? "" : "s");
  std::fflush(stream_);
}

void Progress::step(const std::string& what) {
  ++done_;
  if (stream_ != nullptr && bar_) draw(what);
}

void Progress::draw(const std::string& what) {
  const int filled = static_cast<int>(kBarWidth * done_ / total_);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kBarWidth, '.');
  std::string label = what.substr(0, kLabelWidth);
  label.resize(kLabelWidth, ' ');
  std::fprintf(stream_, "\r[%s] %4zu/%-4zu %3zu%%  %s", bar.c_str(), done_, total_,
               100 * done_ / total_, label.c_str());
  std::fflush(stream_);
}

void Progress::finish() {
  if (stream_ != nullptr && bar_) {
    std::fputc('\n', stream_);
    std::fflush(stream_);
  }
}

}  // namespace parasim::calib
