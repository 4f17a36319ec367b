#include "cli/trace_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "cli/commands.hpp"
#include "costmodel/units.hpp"

namespace parasim::cli {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (std::size_t begin = 0;;) {
    const std::size_t end = text.find(separator, begin);
    parts.push_back(trimmed(text.substr(begin, end - begin)));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

bool parse_rank(std::string_view s, int& rank) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), rank);
  return ec == std::errc() && end == s.data() + s.size() && rank >= 0;
}

}  // namespace

std::vector<RankRange> parse_rank_list(std::string_view text) {
  std::vector<RankRange> ranges;
  for (std::string_view part : split(text, ',')) {
    RankRange r;
    const std::size_t dash = part.find('-');
    const bool ok = dash == std::string_view::npos
                        ? parse_rank(part, r.first) && (r.last = r.first, true)
                        : parse_rank(trimmed(part.substr(0, dash)), r.first) &&
                              parse_rank(trimmed(part.substr(dash + 1)), r.last) &&
                              r.first <= r.last;
    if (!ok) {
      throw CommandLineError(fmt::format(
          "--trace-ranks \"{}\": \"{}\" is not a rank or a range; expected global ranks "
          "(integers from 0) and inclusive ranges, comma-separated, e.g. 0-7,64",
          text, part));
    }
    ranges.push_back(r);
  }
  return ranges;
}

std::pair<sim::Time, sim::Time> parse_time_window(std::string_view text) {
  const std::vector<std::string_view> parts = split(text, ',');
  std::string why;
  auto fail = [&](const std::string& detail) {
    throw CommandLineError(fmt::format(
        "--trace-window \"{}\": {}; expected START,END, two durations with units, e.g. "
        "\"0.5 s,1.2 s\" or \"200 ms,450 ms\"",
        text, detail));
  };
  if (parts.size() != 2) fail("not two times separated by a comma");
  std::pair<sim::Time, sim::Time> window;
  sim::Time* ends[2] = {&window.first, &window.second};
  for (int i = 0; i < 2; ++i) {
    const auto t = cost::parse_time(parts[i], &why);
    if (!t) fail(why);
    if (*t < sim::Time::zero()) fail(fmt::format("\"{}\" is negative", parts[i]));
    *ends[i] = *t;
  }
  if (window.second <= window.first) fail("END must come after START");
  return window;
}

std::string format_rank_list(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string text;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(ranks[i]);
    if (j > i) {
      text += '-';
      text += std::to_string(ranks[j]);
    }
    i = j + 1;
  }
  return text;
}

std::string trace_size_notice(const sim::TraceSize& size, const std::string& path) {
  if (size.bytes <= kTraceNoticeBytes) return {};
  return fmt::format(
      "trace: writing {} ({} events) to {}; --trace-ranks and --trace-window write a part of it",
      cost::format_bytes_si(cost::Bytes{static_cast<double>(size.bytes)}), size.events, path);
}

sim::TraceFilter make_trace_filter(const strat::BuiltWorkload& built, int total_gpus,
                                   const std::vector<RankRange>& ranks,
                                   std::vector<std::string>* notes) {
  sim::TraceFilter filter;
  if (ranks.empty()) return filter;
  for (const RankRange& r : ranks) {
    if (r.last >= total_gpus) {
      throw CommandLineError(fmt::format(
          "--trace-ranks: rank {} does not exist (the scenario has {} GPUs, ranks 0-{})", r.last,
          total_gpus, total_gpus - 1));
    }
  }
  auto listed = [&](int rank) {
    return std::any_of(ranks.begin(), ranks.end(),
                       [&](const RankRange& r) { return rank >= r.first && rank <= r.last; });
  };
  filter.devices.assign(built.devices.size(), false);
  std::vector<int> simulated;
  std::size_t kept = 0;
  for (std::size_t d = 0; d < built.devices.size(); ++d) {
    const int rank = built.devices[d].global_rank;
    simulated.push_back(rank);
    if (listed(rank)) {
      filter.devices[d] = true;
      ++kept;
    }
  }
  if (kept == 0) {
    throw CommandLineError(fmt::format(
        "--trace-ranks: none of the ranks listed is simulated; the symmetric simulation runs one "
        "GPU per stage, ranks {} (--full simulates every GPU)",
        format_rank_list(simulated)));
  }
  // Ranks listed but not simulated (symmetric mode), for a note. Every listed rank is below
  // total_gpus (checked above), so the marks are bounded by the cluster's size.
  if (notes != nullptr && !built.full) {
    std::vector<bool> is_listed(static_cast<std::size_t>(total_gpus), false);
    for (const RankRange& r : ranks) {
      std::fill(is_listed.begin() + r.first, is_listed.begin() + r.last + 1, true);
    }
    std::vector<int> traced;
    for (std::size_t d = 0; d < built.devices.size(); ++d) {
      if (filter.devices[d]) {
        traced.push_back(built.devices[d].global_rank);
        is_listed[static_cast<std::size_t>(built.devices[d].global_rank)] = false;
      }
    }
    std::vector<int> missing;
    for (int rank = 0; rank < total_gpus; ++rank) {
      if (is_listed[static_cast<std::size_t>(rank)]) missing.push_back(rank);
    }
    if (!missing.empty()) {
      notes->push_back(fmt::format(
          "trace: ranks {} are not simulated (symmetric: one GPU per stage; --full simulates "
          "every GPU); tracing {}",
          format_rank_list(missing), format_rank_list(traced)));
    }
  }
  return filter;
}

}  // namespace parasim::cli
