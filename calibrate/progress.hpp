#pragma once
// parasim::calib Progress — what a calibration run shows while it measures.
//
// On a terminal (the stream is a TTY) a one-line bar redrawn in place:
//   [##########..........]  52/120  43%  gemm 4096x4096x1024 bf16
// Otherwise (a log file, CI) one line per family as it starts ("measuring 48 gemm points"), so
// logs stay readable. Only rank 0 prints; other ranks construct a silent Progress.

#include <cstdio>
#include <string>

namespace parasim::calib {

class Progress {
 public:
  // `stream` null: silent. `bar` true draws the bar (pass stream_is_terminal(stream)).
  Progress(std::FILE* stream, bool bar, std::size_t total);

  // A new family of measurements starts (printed as a line when not drawing a bar).
  void section(const std::string& what, std::size_t points);
  // About to measure one point described by `what`; redraws the bar.
  void step(const std::string& what);
  // Ends the bar line.
  void finish();

  std::size_t done() const { return done_; }

 private:
  void draw(const std::string& what);

  std::FILE* stream_;
  bool bar_;
  std::size_t total_;
  std::size_t done_ = 0;
};

bool stream_is_terminal(std::FILE* stream);

}  // namespace parasim::calib
