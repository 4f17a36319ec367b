#pragma once
// parasim::cost::JsonObjectReader — reads one JSON object of an input file field by field,
// collecting every problem into Diagnostics instead of stopping at the first.
//
// Each accessor records the key as known; finish() then reports every key the reader was never
// asked for as unknown (with a "did you mean" suggestion), so typos never pass silently.
// Quantities with units go through the parsers of units.hpp, the one place unit text is read.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "costmodel/diagnostics.hpp"
#include "costmodel/units.hpp"

namespace parasim::cost {

// The range a quantity read from an input file must lie in (bounds included, base units: bytes,
// bytes per second, FLOP per second), and the bounds as unit text for messages and docs
// (docs/scenario.md, Units; docs/profile.md). They are guards against unit slips and overflow
// ("1e308 TB" is infinite bytes), far outside real parts, not physical limits: per GPU, HBM holds
// at most 288 GB (AMD MI355X, NVIDIA B300 datasheets) at up to 8 TB/s (NVIDIA B200 datasheet),
// NVLink 5 carries 900 GB/s per direction, GB300's densest peak is 15 PFLOP/s (dense FP4), SM
// clocks are about 2 GHz (MI355X 2,400 MHz) and boards draw up to 1,400 W. The lower bounds
// of rates are one unit per second: a positive figure too small to simulate is refused by the
// simulator's time range instead (sim/time.hpp, exit 2 with its own hint).
struct QuantityRange {
  std::string_view what;  // "a memory capacity", for "expected a memory capacity between ..."
  double min;
  double max;
  std::string_view min_text;  // min as unit text the parser reads ("1 MB")
  std::string_view max_text;
};
struct QuantityRanges {
  QuantityRange memory_capacity{"a memory capacity", 1e6, 1e15, "1 MB", "1000 TB"};
  QuantityRange buffer_size{"a size", 1.0, 1e15, "1 B", "1000 TB"};
  QuantityRange bandwidth{"a bandwidth", 1.0, 1e15, "1 B/s", "1000 TB/s"};
  QuantityRange flop_rate{"a FLOP rate", 1.0, 1e18, "1 FLOP/s", "1000 PFLOP/s"};
  // A scenario's device peaks: 0 says the device has none for that precision.
  QuantityRange peak_or_none{"a FLOP rate (0 for none)", 0.0, 1e18, "0 FLOP/s", "1000 PFLOP/s"};
  // Plain numbers (JsonObjectReader::number): a device's clock in MHz and its power in watts.
  QuantityRange clock_mhz{"a clock in MHz", 1.0, 1e5, "1", "100000"};
  QuantityRange power_watts{"a power in watts", 1.0, 1e6, "1", "1000000"};
};
// The one table of ranges (scenario_parser.cpp and profile.cpp read their quantities with it).
inline constexpr QuantityRanges kRanges{};

class JsonObjectReader {
 public:
  // `path` is the JSON Pointer of `node`; a non-object node is reported once and reads nothing.
  JsonObjectReader(const nlohmann::json& node, std::string path, Diagnostics& diagnostics);

  bool valid() const { return valid_; }
  bool has(std::string_view key) const;
  const std::string& path() const { return path_; }
  std::string child_path(std::string_view key) const;

  std::optional<std::int64_t> integer(std::string_view key, bool required, std::int64_t min,
                                      std::int64_t max);
  // A plain JSON number (integer or not) in [min, max].
  std::optional<double> number(std::string_view key, bool required, double min, double max);
  std::optional<bool> boolean(std::string_view key, bool required);
  std::optional<std::string> string(std::string_view key, bool required);
  // A string that must be one of `allowed`.
  std::optional<std::string> choice(std::string_view key, bool required,
                                    std::initializer_list<std::string_view> allowed);
  // Quantities with a unit, refused outside `range` ("expected a size between 1 B and ...").
  std::optional<Bytes> bytes(std::string_view key, bool required, const QuantityRange& range);
  std::optional<Bandwidth> bandwidth(std::string_view key, bool required,
                                     const QuantityRange& range);
  std::optional<FlopRate> flop_rate(std::string_view key, bool required,
                                    const QuantityRange& range);
  // A duration of at most `max` (per-event costs: latencies, launch and host overheads).
  std::optional<sim::Time> time(std::string_view key, bool required, sim::Time max);
  // The raw child (any type), marked known; nullptr when absent (reported when required).
  const nlohmann::json* child(std::string_view key, bool required);

  // Reports unknown keys. Call once, after every accessor.
  void finish();

 private:
  const nlohmann::json* lookup(std::string_view key, bool required);
  template <typename T, typename Parse>
  std::optional<T> quantity(std::string_view key, bool required, Parse parse);
  // A unit quantity (in base units) inside `range`; the problem otherwise.
  template <typename Parse>
  std::optional<double> bounded(std::string_view key, bool required, Parse parse,
                                const QuantityRange& range);

  const nlohmann::json& node_;
  std::string path_;
  Diagnostics& diagnostics_;
  bool valid_ = true;
  std::set<std::string, std::less<>> known_;
};

// The largest per-event duration a file may set (a latency, a launch or host overhead): a guard
// against typos ("4 s" for "4 us"); sim::Time's own range is checked separately.
inline constexpr sim::Time kMaxPerEventDuration = sim::Time::seconds(1);

// The largest input file (scenario or profile) parasim reads: 16 MiB of JSON. A shipped scenario
// is under 4 kB and a full `parasim calibrate` profile under 1 MB; the cap refuses a file before
// reading it (a 200 MB profile took 15 s and 5.3 GB of memory to be rejected without one).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{16} << 20;

// Reads the whole file at `path`, a `kind` such as "scenario" or "profile" for the messages. On
// failure (cannot open, not a regular file: a folder, a FIFO, a device, over `max_bytes`) adds
// one problem at "/" and returns std::nullopt; the file is opened without blocking and judged
// by what was opened, and its size is checked before anything is read, so no input can hang
// the reader or make it read without bound.
std::optional<std::string> read_input_file(const std::string& path, std::size_t max_bytes,
                                           std::string_view kind, Diagnostics& diagnostics);

// "a folder", "a FIFO (named pipe), which parasim does not read", ...: a stat mode's file kind.
const char* file_kind_text(unsigned mode);

// The deepest nesting of arrays and objects in a JSON text (strings skipped), counting stops once
// past `stop_above`. Linear, no recursion.
std::size_t json_nesting_depth(std::string_view text, std::size_t stop_above);

// The deepest nesting any input may have: the readers and re-serialisers of nlohmann::json
// recurse once per level, so a document 100,000 levels deep would overflow the stack. A
// scenario nests fewer than 10 levels, a validation file with its scenarios fewer than 15.
inline constexpr std::size_t kMaxJsonDepth = 64;

// The problem of a text over `max_bytes`, as read_input_file words it (for parsers given text).
std::string file_too_large_message(std::size_t size, std::size_t max_bytes, std::string_view kind);

// Parses a whole input file as JSON. On failure adds one problem at "/" (nested deeper than
// kMaxJsonDepth; "invalid JSON at byte N: ..." for a syntax error, "invalid JSON: a number beyond the range of a double ..." for a literal
// such as 9e308, which nlohmann::json refuses with out_of_range rather than parse_error) and
// returns std::nullopt; it never throws a JSON exception.
std::optional<nlohmann::json> parse_json_document(std::string_view text, Diagnostics& diagnostics);

// "an integer", "a string", ...: a JSON value's type for messages.
std::string json_type_name(const nlohmann::json& j);

// Closest candidate by edit distance, for "did you mean" hints; empty when nothing is close.
std::string closest_match(std::string_view word, const std::set<std::string, std::less<>>& options);

}  // namespace parasim::cost
