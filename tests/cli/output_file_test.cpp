// Outputs never damage what their path names (cli/output_file.hpp): special files are written in
// place, folders, read-only files and block devices are refused, a full device is an error, and
// several outputs are placed all or none.
//
// Character devices are private copies made with mknod in a temporary folder when the tests run
// as root (root could replace the real /dev/null; a user cannot, so a user's tests use /dev/null
// and /dev/full themselves).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <optional>
#include <sstream>
#include <string>

#include "../support/test_support.hpp"
#include "command_run.hpp"
#include "cli/commands.hpp"
#include "cli/output_file.hpp"

namespace parasim::cli {
namespace {

using namespace parasim::test;

const fs::path kScenario = kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json";

Run simulate(const std::string& json, const std::string& trace = "") {
  SimulateOptions o;
  o.scenario = kScenario.string();
  o.json = json;
  o.trace = trace;
  return run_command([&](std::ostream& out, std::ostream& err) { return run_simulate(o, out, err); });
}

// A character device (1, minor) that the test may write: a private node when root, else the
// system's own (name "null" or "full"). nullopt when root may not create device nodes here.
std::optional<std::string> character_device(const TempDir& tmp, const std::string& name,
                                            unsigned minor) {
  if (::geteuid() != 0) return "/dev/" + name;
  const std::string path = tmp.file(name);
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minor)) != 0) return std::nullopt;
  return path;
}

bool is_character_device(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

mode_t permission_bits(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("output to a character device is written in place; the device stays a device") {
  TempDir tmp;
  const auto null = character_device(tmp, "null", 3);
  if (!null) {
    MESSAGE("root may not create device nodes here (no CAP_MKNOD): skipped");
    return;
  }
  const Run r = simulate(*null, *null == "/dev/null" ? "" : tmp.file("trace.json"));
  CHECK_MESSAGE(r.code == kExitOk, r.err);
  CHECK_MESSAGE(is_character_device(*null), *null << " was replaced");
}

TEST_CASE("a full device is an error (exit 1) and the other output is not placed") {
  TempDir tmp;
  const auto full = character_device(tmp, "full", 7);
  if (!full) {
    MESSAGE("root may not create device nodes here (no CAP_MKNOD): skipped");
    return;
  }
  const std::string json = tmp.file("result.json");
  write_text(json, "the user's old result\n");
  const Run r = simulate(json, *full);
  CHECK(r.code == kExitFailure);
  CHECK_MESSAGE(r.err.find("cannot write " + *full + ": No space left on device") !=
                    std::string::npos,
                r.err);
  CHECK(r.out.empty());
  CHECK(is_character_device(*full));
  // The result was renamed into place before the device write failed: it is put back.
  CHECK(read_text(json) == "the user's old result\n");
  std::vector<std::string> expected{"result.json"};
  if (*full != "/dev/full") expected = {"full", "result.json"};
  CHECK_MESSAGE(tmp.entries() == expected, "left behind or missing: " << tmp.entries().size());

  // Alone, and as the only output.
  const Run alone = simulate(*full);
  CHECK(alone.code == kExitFailure);
  CHECK(is_character_device(*full));
}

TEST_CASE("output to a FIFO is written into the pipe; the FIFO stays") {
  TempDir tmp;
  const std::string fifo = tmp.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Opened for reading and writing, the FIFO has a reader without blocking; the result JSON
  // (a few KiB) fits in the pipe's buffer.
  const int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  REQUIRE(fd >= 0);
  const Run r = simulate(fifo);
  CHECK_MESSAGE(r.code == kExitOk, r.err);
  std::string received;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) received.append(buffer, n);
  ::close(fd);
  struct stat st {};
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK_MESSAGE(S_ISFIFO(st.st_mode), "the FIFO was replaced by a file");
  REQUIRE_MESSAGE(!received.empty(), "nothing came through the FIFO");
  CHECK(parse_json(received, "what the FIFO carried").at("scenario") == "llama2-7b-dgx-h100");
}

TEST_CASE("/dev/stdout is standard output: the JSON on the out stream, the report on err") {
  const Run r = simulate("/dev/stdout");
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  CHECK(parse_json(r.out, "the out stream").at("scenario") == "llama2-7b-dgx-h100");
  CHECK(r.err.find("parasim simulate: llama2-7b-dgx-h100") != std::string::npos);
}

TEST_CASE("a folder or a link to one is refused (exit 2) before the work, nothing written") {
  TempDir tmp;
  fs::create_directory(tmp.path() / "folder");
  fs::create_directory_symlink(tmp.path() / "folder", tmp.path() / "link");
  for (const char* name : {"folder", "link"}) {
    CAPTURE(name);
    const Run r = simulate(tmp.file(name), tmp.file("trace.json"));
    CHECK(r.code == kExitBadInput);
    CHECK_MESSAGE(r.err.find("cannot write " + tmp.file(name)) != std::string::npos, r.err);
    CHECK(r.err.find("it is a folder") != std::string::npos);
    CHECK(r.out.empty());
    CHECK(fs::is_empty(tmp.path() / "folder"));
    CHECK(tmp.entries() == std::vector<std::string>{"folder", "link"});
  }
}

TEST_CASE("a read-only file is refused (exit 2) and kept, also as root") {
  TempDir tmp;
  const std::string json = tmp.file("result.json");
  write_text(json, "keep me\n");
  fs::permissions(json, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const Run r = simulate(json, tmp.file("trace.json"));
  CHECK(r.code == kExitBadInput);
  CHECK_MESSAGE(r.err.find("cannot write " + json + ": it is read-only") != std::string::npos,
                r.err);
  CHECK(read_text(json) == "keep me\n");
  CHECK(tmp.entries() == std::vector<std::string>{"result.json"});
}

TEST_CASE("a link to a regular file: the file is replaced, the link stays, the bits are kept") {
  TempDir tmp;
  fs::create_directory(tmp.path() / "real");
  const std::string target = (tmp.path() / "real" / "result.json").string();
  write_text(target, "old\n");
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_symlink(target, tmp.path() / "link.json");
  const Run r = simulate(tmp.file("link.json"));
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  CHECK(fs::is_symlink(tmp.path() / "link.json"));
  CHECK(parse_json(read_text(target), "the link's target").at("scenario") ==
        "llama2-7b-dgx-h100");
  CHECK(permission_bits(target) == 0640);
  CHECK(tmp.entries() == std::vector<std::string>{"link.json", "real"});
  CHECK(fs::directory_iterator(tmp.path() / "real")->path().filename() == "result.json");

  // A link to nothing creates the file it names.
  fs::create_symlink(tmp.path() / "real" / "new.json", tmp.path() / "dangling.json");
  REQUIRE(simulate(tmp.file("dangling.json")).code == kExitOk);
  CHECK(fs::is_regular_file(tmp.path() / "real" / "new.json"));
  CHECK(fs::is_symlink(tmp.path() / "dangling.json"));
}

TEST_CASE("a new file gets the umask's bits, not a temporary file's 0600") {
  TempDir tmp;
  const mode_t old = ::umask(022);
  const Run r = simulate(tmp.file("result.json"));
  ::umask(old);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  CHECK(permission_bits(tmp.file("result.json")) == 0644);
}

TEST_CASE("two outputs naming one file are refused before anything is written") {
  TempDir tmp;
  const Run r = simulate(tmp.file("same.json"), tmp.file("same.json"));
  CHECK(r.code == kExitBadInput);
  CHECK_MESSAGE(r.err.find("would both write to") != std::string::npos, r.err);
  CHECK(tmp.entries().empty());

  const Run stdout_twice = simulate("-", "/dev/stdout");
  CHECK(stdout_twice.code == kExitBadInput);
  CHECK(stdout_twice.out.empty());
}

TEST_CASE("commit_outputs: a failed rename puts back every file placed before it") {
  TempDir tmp;
  const std::string first = tmp.file("first.json");
  write_text(first, "first, old\n");
  fs::create_directory(tmp.path() / "sub");
  const std::string second = (tmp.path() / "sub" / "second.json").string();
  OutputFile a(first), b(second);
  a.stage("first, new\n");
  b.stage("second, new\n");
  // The second's staged temporary file disappears before the commit: its rename fails after
  // the first file was renamed into place.
  for (const auto& e : fs::directory_iterator(tmp.path() / "sub")) fs::remove(e.path());
  std::ostringstream out;
  CHECK_THROWS_AS(commit_outputs({&a, &b}, out), OutputError);
  CHECK(read_text(first) == "first, old\n");
  CHECK(tmp.entries() == std::vector<std::string>{"first.json", "sub"});
  CHECK(fs::is_empty(tmp.path() / "sub"));
  // Without the interference, both land.
  OutputFile c(first), d(second);
  c.stage("first, new\n");
  d.stage("second, new\n");
  commit_outputs({&c, &d}, out);
  CHECK(read_text(first) == "first, new\n");
  CHECK(read_text(second) == "second, new\n");
  CHECK(tmp.entries() == std::vector<std::string>{"first.json", "sub"});
  CHECK(fs::directory_iterator(tmp.path() / "sub")->path().filename() == "second.json");
}

TEST_CASE("a staged output is removed when SIGINT, SIGTERM or SIGHUP ends the command") {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    CAPTURE(signal_number);
    TempDir tmp;
    const std::string target = tmp.file("r.json");
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {  // stages an output as a command does, then is interrupted before commit
      for (int s : {SIGINT, SIGTERM, SIGHUP}) std::signal(s, SIG_DFL);  // a process's start
      OutputFile file(target);
      file.stage("{}\n");
      ::raise(signal_number);
      ::_exit(0);  // not reached: the signal's default action ends the process
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == signal_number);
    const std::vector<std::string> left = tmp.entries();
    CHECK_MESSAGE(left.empty(), "left behind: " << (left.empty() ? "" : left.front()));
  }
}

}  // namespace parasim::cli
