#include "costmodel/json_fields.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace parasim::cost {
namespace {

// RFC 6901: "~" -> "~0", "/" -> "~1".
std::string escape_pointer(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string file_too_large_message(std::size_t size, std::size_t max_bytes, std::string_view kind) {
  return fmt::format("file is {} bytes, over the limit of {} bytes ({:.0f} MiB) for a {}", size,
                     max_bytes, static_cast<double>(max_bytes) / (1 << 20), kind);
}

std::optional<std::string> read_input_file(const std::string& path, std::size_t max_bytes,
                                           std::string_view kind, Diagnostics& diagnostics) {
  // Opened without waiting (a FIFO with no writer would block a plain open) and judged by what
  // was opened (fstat), so a file swapped after a check cannot slip past it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    diagnostics.add("", fmt::format("cannot open the {} file: {} (does it exist and is it "
                                    "readable?)",
                                    kind, std::strerror(errno)));
    return std::nullopt;
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    diagnostics.add("", fmt::format("not a regular file: it is {} (expected a {} JSON file)",
                                    file_kind_text(st.st_mode), kind));
    return std::nullopt;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > max_bytes) {
    diagnostics.add("", file_too_large_message(size, max_bytes, kind));
    return std::nullopt;
  }
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      diagnostics.add("", fmt::format("cannot read the {} file: {}", kind, std::strerror(errno)));
      return std::nullopt;
    }
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {  // grew while being read
      diagnostics.add("", file_too_large_message(text.size(), max_bytes, kind));
      return std::nullopt;
    }
  }
  return text;
}

const char* file_kind_text(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a folder";
    case S_IFIFO: return "a FIFO (named pipe), which parasim does not read";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    default: return "not a regular file";
  }
}

std::size_t json_nesting_depth(std::string_view text, std::size_t stop_above) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > stop_above) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::optional<nlohmann::json> parse_json_document(std::string_view text, Diagnostics& diagnostics) {
  if (json_nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    diagnostics.add("", fmt::format("JSON nested more than {} levels deep, the limit (a scenario "
                                    "nests fewer than 10)",
                                    kMaxJsonDepth));
    return std::nullopt;
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    diagnostics.add("", fmt::format("invalid JSON at byte {}: {}", e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406: a number literal that overflows a double (|x| > 1.8e308).
    diagnostics.add("", fmt::format("invalid JSON: a number beyond the range of a double "
                                    "(about 1.8e308) or another value the reader cannot hold: {}",
                                    e.what()));
  }
  return std::nullopt;
}

std::string json_type_name(const nlohmann::json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number_integer() || j.is_number_unsigned()) return "an integer";
  if (j.is_number_float()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

std::string closest_match(std::string_view word, const std::set<std::string, std::less<>>& options) {
  // Smallest edit distance wins; on a tie, a candidate that starts like the word ("tpp" -> "tp",
  // not "pp"), since typos are rarer in the first letter.
  std::string best;
  std::size_t best_score = 2 * (std::max<std::size_t>(2, word.size() / 3) + 1);
  for (const auto& o : options) {
    const bool same_start = !word.empty() && !o.empty() && word.front() == o.front();
    const std::size_t score = 2 * edit_distance(word, o) + (same_start ? 0 : 1);
    if (score < best_score) {
      best_score = score;
      best = o;
    }
  }
  return best;
}

JsonObjectReader::JsonObjectReader(const nlohmann::json& node, std::string path,
                                   Diagnostics& diagnostics)
    : node_(node), path_(std::move(path)), diagnostics_(diagnostics) {
  if (!node_.is_object()) {
    diagnostics_.add(path_, "expected an object, got " + json_type_name(node_));
    valid_ = false;
  }
}

bool JsonObjectReader::has(std::string_view key) const {
  return valid_ && node_.contains(std::string(key));
}

std::string JsonObjectReader::child_path(std::string_view key) const {
  return path_ + "/" + escape_pointer(key);
}

const nlohmann::json* JsonObjectReader::lookup(std::string_view key, bool required) {
  known_.emplace(key);
  if (!valid_) return nullptr;
  auto it = node_.find(std::string(key));
  if (it == node_.end()) {
    if (required) diagnostics_.add(child_path(key), "required field is missing");
    return nullptr;
  }
  return &*it;
}

const nlohmann::json* JsonObjectReader::child(std::string_view key, bool required) {
  return lookup(key, required);
}

std::optional<std::int64_t> JsonObjectReader::integer(std::string_view key, bool required,
                                                      std::int64_t min, std::int64_t max) {
  const nlohmann::json* j = lookup(key, required);
  if (j == nullptr) return std::nullopt;
  if (!(j->is_number_integer() || j->is_number_unsigned())) {
    diagnostics_.add(child_path(key),
                     fmt::format("expected an integer, got {}", json_type_name(*j)));
    return std::nullopt;
  }
  if (j->is_number_unsigned() && j->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    diagnostics_.add(child_path(key), fmt::format("expected an integer in [{}, {}], got {}", min,
                                                  max, j->dump()));
    return std::nullopt;
  }
  const auto v = j->get<std::int64_t>();
  if (v < min || v > max) {
    diagnostics_.add(child_path(key),
                     fmt::format("expected an integer in [{}, {}], got {}", min, max, v));
    return std::nullopt;
  }
  return v;
}

std::optional<double> JsonObjectReader::number(std::string_view key, bool required, double min,
                                               double max) {
  const nlohmann::json* j = lookup(key, required);
  if (j == nullptr) return std::nullopt;
  if (!j->is_number() || !(j->get<double>() >= min && j->get<double>() <= max)) {
    diagnostics_.add(child_path(key),
                     fmt::format("expected a number in [{}, {}], got {}", min, max, j->dump()));
    return std::nullopt;
  }
  return j->get<double>();
}

std::optional<bool> JsonObjectReader::boolean(std::string_view key, bool required) {
  const nlohmann::json* j = lookup(key, required);
  if (j == nullptr) return std::nullopt;
  if (!j->is_boolean()) {
    diagnostics_.add(child_path(key), "expected true or false, got " + json_type_name(*j));
    return std::nullopt;
  }
  return j->get<bool>();
}

std::optional<std::string> JsonObjectReader::string(std::string_view key, bool required) {
  const nlohmann::json* j = lookup(key, required);
  if (j == nullptr) return std::nullopt;
  if (!j->is_string()) {
    diagnostics_.add(child_path(key), "expected a string, got " + json_type_name(*j));
    return std::nullopt;
  }
  return j->get<std::string>();
}

std::optional<std::string> JsonObjectReader::choice(std::string_view key, bool required,
                                                    std::initializer_list<std::string_view> allowed) {
  auto s = string(key, required);
  if (!s) return std::nullopt;
  for (auto a : allowed) {
    if (a == *s) return s;
  }
  std::string list;
  for (auto a : allowed) list += (list.empty() ? "\"" : ", \"") + std::string(a) + "\"";
  diagnostics_.add(child_path(key), fmt::format("expected one of {}, got \"{}\"", list, *s));
  return std::nullopt;
}

template <typename T, typename Parse>
std::optional<T> JsonObjectReader::quantity(std::string_view key, bool required, Parse parse) {
  const nlohmann::json* j = lookup(key, required);
  if (j == nullptr) return std::nullopt;
  if (j->is_number()) {
    std::string why;
    parse(j->dump(), &why);  // yields the "bare number" message with an example
    diagnostics_.add(child_path(key), why + "; write it as a string with its unit");
    return std::nullopt;
  }
  if (!j->is_string()) {
    diagnostics_.add(child_path(key),
                     "expected a quantity with a unit as a string, got " + json_type_name(*j));
    return std::nullopt;
  }
  std::string why;
  auto v = parse(j->get<std::string>(), &why);
  if (!v) diagnostics_.add(child_path(key), why);
  return v;
}

template <typename Parse>
std::optional<double> JsonObjectReader::bounded(std::string_view key, bool required, Parse parse,
                                                const QuantityRange& range) {
  const auto v = quantity<double>(key, required, parse);
  if (!v) return std::nullopt;
  if (!(*v >= range.min && *v <= range.max)) {  // also refuses inf ("1e308 TB")
    diagnostics_.add(child_path(key),
                     fmt::format("expected {} between {} and {}, got \"{}\"", range.what,
                                 range.min_text, range.max_text,
                                 node_.at(std::string(key)).get<std::string>()));
    return std::nullopt;
  }
  return v;
}

std::optional<Bytes> JsonObjectReader::bytes(std::string_view key, bool required,
                                             const QuantityRange& range) {
  const auto v = bounded(key, required, [](std::string_view t, std::string* why) {
    const auto b = parse_bytes(t, why);
    return b ? std::optional<double>(b->value) : std::nullopt;
  }, range);
  return v ? std::optional<Bytes>(Bytes{*v}) : std::nullopt;
}
std::optional<Bandwidth> JsonObjectReader::bandwidth(std::string_view key, bool required,
                                                     const QuantityRange& range) {
  const auto v = bounded(key, required, [](std::string_view t, std::string* why) {
    const auto b = parse_bandwidth(t, why);
    return b ? std::optional<double>(b->bytes_per_s) : std::nullopt;
  }, range);
  return v ? std::optional<Bandwidth>(Bandwidth{*v}) : std::nullopt;
}
std::optional<FlopRate> JsonObjectReader::flop_rate(std::string_view key, bool required,
                                                    const QuantityRange& range) {
  const auto v = bounded(key, required, [](std::string_view t, std::string* why) {
    const auto r = parse_flop_rate(t, why);
    return r ? std::optional<double>(r->flop_per_s) : std::nullopt;
  }, range);
  return v ? std::optional<FlopRate>(FlopRate{*v}) : std::nullopt;
}
std::optional<sim::Time> JsonObjectReader::time(std::string_view key, bool required,
                                                sim::Time max) {
  const auto seconds = quantity<double>(key, required, parse_duration_seconds);
  if (!seconds) return std::nullopt;
  if (!(*seconds <= max.to_seconds())) {
    diagnostics_.add(child_path(key), fmt::format("expected a duration of at most {}, got \"{}\"",
                                                  format_time(max), node_.at(std::string(key))
                                                                        .get<std::string>()));
    return std::nullopt;
  }
  return sim::Time::seconds(*seconds);
}

void JsonObjectReader::finish() {
  if (!valid_) return;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (known_.count(it.key()) != 0) continue;
    std::string hint = closest_match(it.key(), known_);
    std::string known_list;
    for (const auto& k : known_) known_list += (known_list.empty() ? "" : ", ") + k;
    diagnostics_.add(child_path(it.key()),
                     hint.empty() ? fmt::format("unknown key (known keys here: {})", known_list)
                                  : fmt::format("unknown key; did you mean \"{}\"?", hint));
  }
}

}  // namespace parasim::cost
