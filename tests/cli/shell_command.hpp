#pragma once
// Shell commands from the CLI tests that run the executable: quoting and running a command line.

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <utility>

namespace parasim::test {

// `s` as one single-quoted shell word.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a shell command line; its exit code and what it printed on standard output.
inline std::pair<int, std::string> run_shell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE_MESSAGE(pipe != nullptr, "cannot run " << command);
  std::string output;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  REQUIRE_MESSAGE(WIFEXITED(status), command << " did not exit normally");
  return {WEXITSTATUS(status), output};
}

}  // namespace parasim::test
