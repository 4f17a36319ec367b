#include "cli/output_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace parasim::cli {

void OutputFile::stage(const std::string& text) {
  if (is_stdout()) {
    staged_text_ = text;
    return;
  }
  temp_path_ = path_ + ".tmp-parasim";
  std::ofstream out(temp_path_, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path_ + " (is the folder there and writable?)");
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path_ + " (disk full?)");
}

void OutputFile::check_target() const {
  if (is_stdout() || temp_path_.empty()) return;
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec)) {
    throw std::runtime_error("cannot write " + path_ + ": it is a folder");
  }
}

void OutputFile::commit(std::ostream& standard_output) {
  if (is_stdout()) {
    standard_output << staged_text_;
    standard_output.flush();
  } else if (!temp_path_.empty()) {
    std::filesystem::rename(temp_path_, path_);
  }
  committed_ = true;
}

OutputFile::~OutputFile() {
  if (!committed_ && !temp_path_.empty()) std::remove(temp_path_.c_str());
}

}  // namespace parasim::cli
