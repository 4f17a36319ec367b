#include "calibrate/trace/trace_file.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <cstring>
#include <stdexcept>

#include "calibrate/trace/kineto_reader.hpp"
#include "calibrate/trace/nsys_reader.hpp"
#include "costmodel/diagnostics.hpp"
#include "costmodel/json_fields.hpp"

namespace parasim::calib::trace {

std::string gunzip(const std::string& data, std::size_t max_bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw std::runtime_error("zlib failed to start");
  std::string out;
  char buffer[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  // avail_in is 32 bits: feed the input in pieces of at most 1 GiB.
  std::size_t fed = data.size() > (std::size_t{1} << 30) ? (std::size_t{1} << 30) : data.size();
  zs.avail_in = static_cast<uInt>(fed);
  int status = Z_OK;
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(buffer);
    zs.avail_out = sizeof buffer;
    status = inflate(&zs, Z_NO_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR) break;
    out.append(buffer, sizeof buffer - zs.avail_out);
    if (out.size() > max_bytes) {
      inflateEnd(&zs);
      throw std::runtime_error(fmt::format(
          "over {} GiB once inflated: the limit for one trace (profile fewer steps, or fewer "
          "ranks per file)",
          max_bytes >> 30));
    }
    if (zs.avail_in == 0 && fed < data.size()) {
      const std::size_t more = std::min(data.size() - fed, std::size_t{1} << 30);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + fed));
      zs.avail_in = static_cast<uInt>(more);
      fed += more;
    }
    if (status == Z_STREAM_END) {
      // Another gzip member follows, or the rest is padding, which gzip(1) also ignores.
      if (zs.avail_in < 2 || zs.next_in[0] != 0x1f || zs.next_in[1] != 0x8b) break;
      if (inflateReset(&zs) != Z_OK) break;
      continue;
    }
    if (status == Z_BUF_ERROR && zs.avail_in == 0) break;  // input ended mid-stream
  }
  inflateEnd(&zs);
  if (status != Z_STREAM_END) {
    throw std::runtime_error(
        status == Z_BUF_ERROR || status == Z_OK
            ? "the gzip stream is truncated (was the file copied whole?)"
            : fmt::format("the gzip stream is corrupt ({})", zs.msg ? zs.msg : "zlib error"));
  }
  return out;
}

std::vector<RankTrace> read_trace_file(const std::string& path) {
  cost::Diagnostics diagnostics(path);
  // SQLite is read in place by the library; its header is enough to tell.
  if (looks_like_sqlite(path)) {
    std::vector<RankTrace> ranks = read_nsys_export(path, diagnostics);
    if (!diagnostics.ok()) throw cost::InputError(diagnostics);
    return ranks;
  }
  std::optional<std::string> bytes =
      cost::read_input_file(path, kMaxTraceFileBytes, "trace", diagnostics);
  if (!bytes) throw cost::InputError(diagnostics);
  std::string text;
  if (bytes->size() >= 2 && static_cast<unsigned char>((*bytes)[0]) == 0x1f &&
      static_cast<unsigned char>((*bytes)[1]) == 0x8b) {
    try {
      text = gunzip(*bytes, kMaxTraceTextBytes);
    } catch (const std::runtime_error& e) {
      diagnostics.add("", std::string("gzip: ") + e.what());
      throw cost::InputError(diagnostics);
    }
  } else {
    text = std::move(*bytes);
  }
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') {
    diagnostics.add("",
                    "not a trace parasim reads: expected a PyTorch profiler trace (JSON, "
                    "optionally gzip-compressed) or an Nsight Systems SQLite export "
                    "(nsys export --type sqlite)");
    throw cost::InputError(diagnostics);
  }
  RankTrace trace = read_kineto_trace(text, path, diagnostics);
  if (!diagnostics.ok()) throw cost::InputError(diagnostics);
  return {std::move(trace)};
}

}  // namespace parasim::calib::trace
