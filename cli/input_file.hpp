#pragma once
// parasim::cli input files: one message, in every command, for an input that cannot be read.
//
// check_input_file(path) throws cost::InputError, printed as
//   PATH: /: cannot read: No such file or directory
//   PATH: /: cannot read: Permission denied
//   PATH: /: cannot read: it is a folder (expected a JSON file)
//   PATH: /: cannot read: it is a FIFO (named pipe), which parasim does not read (expected ...)
// (the "FILE: /json/path: message" form of every input problem; "/" is the whole file). A file
// that opens is left to its parser, which reports what is wrong inside it.

#include <string>

namespace parasim::cli {

void check_input_file(const std::string& path);

}  // namespace parasim::cli
