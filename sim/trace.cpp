#include "sim/trace.hpp"

#include <fmt/format.h>

#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace parasim::sim {
namespace {

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

// Microseconds with picosecond resolution, exact (no floating point).
std::string us(Time t) {
  const std::int64_t ps = t.picoseconds();
  return fmt::format("{}{}.{:06d}", ps < 0 ? "-" : "", (ps < 0 ? -ps : ps) / 1000000,
                     (ps < 0 ? -ps : ps) % 1000000);
}

// Appends the trace text to a string.
class TextSink {
 public:
  explicit TextSink(std::string& text) : text_(text) {}
  void raw(std::string_view s) { text_.append(s); }
  template <typename... T>
  void event(fmt::format_string<T...> format, T&&... args) {
    if (!first_) text_.append(",\n");
    first_ = false;
    fmt::format_to(std::back_inserter(text_), format, std::forward<T>(args)...);
  }

 private:
  std::string& text_;
  bool first_ = true;
};

// Counts what TextSink would append.
class CountingSink {
 public:
  void raw(std::string_view s) { size_.bytes += s.size(); }
  template <typename... T>
  void event(fmt::format_string<T...> format, T&&... args) {
    if (size_.events > 0) size_.bytes += 2;
    ++size_.events;
    size_.bytes += fmt::formatted_size(format, std::forward<T>(args)...);
  }
  TraceSize size() const { return size_; }

 private:
  TraceSize size_;
};

template <typename Sink>
void emit_trace(Sink& sink, const Workload& w, const SimResult& r, const TraceFilter& filter) {
  sink.raw("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  for (DeviceId d = 0; d < w.device_count(); ++d) {
    if (!filter.keeps(d)) continue;
    sink.event(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"{}"}}}})", d,
               json_escape(w.device(d).name));
    sink.event(
        R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
        d, d);
  }
  for (StreamId s = 0; s < w.stream_count(); ++s) {
    const Stream& st = w.stream(s);
    if (!filter.keeps(st.device)) continue;
    sink.event(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})",
               st.device, s, json_escape(st.name));
  }
  // A group member is drawn from the moment the group starts (its last member arrives): the time
  // a member waited at its stream head for the others is not communication.
  const std::vector<Time> group_start = group_start_times(w, r);
  auto drawn_start = [&](OpId o) {
    const Op& op = w.op(o);
    return op.kind == OpKind::kGroupMember ? group_start[op.group] : r.op_start[o];
  };
  auto kept = [&](OpId o) {
    return filter.keeps(w.device_of(o)) && filter.keeps(drawn_start(o), r.op_end[o]);
  };
  for (OpId o = 0; o < w.op_count(); ++o) {
    if (!kept(o)) continue;
    const Op& op = w.op(o);
    const Stream& st = w.stream(op.stream);
    const Time start = drawn_start(o);
    std::string args;
    if (op.kind == OpKind::kGroupMember) {
      const Group& g = w.group(op.group);
      args = fmt::format(R"(,"args":{{"members":{},"bytes_sent":{:.0f}}})", g.members_count,
                         g.bytes_per_member);
    }
    sink.event(R"({{"ph":"X","name":"{}","cat":"{}","pid":{},"tid":{},"ts":{},"dur":{}{}}})",
               json_escape(w.op_name(o)), json_escape(w.text(op.category)), st.device, op.stream,
               us(start), us(r.op_end[o] - start), args);
  }
  // Flow arrows for point-to-point transfers: member 0 sends, member 1 receives.
  for (GroupId g = 0; g < w.group_count(); ++g) {
    if (!w.group(g).point_to_point || w.group(g).members_count != 2) continue;
    const OpId send = w.members(g)[0];
    const OpId recv = w.members(g)[1];
    if (!kept(send) || !kept(recv)) continue;
    const Op& so = w.op(send);
    const Op& ro = w.op(recv);
    sink.event(R"({{"ph":"s","id":{},"name":"p2p","cat":"p2p","pid":{},"tid":{},"ts":{}}})", g,
               w.device_of(send), so.stream, us(group_start[g]));
    sink.event(
        R"({{"ph":"f","bp":"e","id":{},"name":"p2p","cat":"p2p","pid":{},"tid":{},"ts":{}}})", g,
        w.device_of(recv), ro.stream, us(r.op_end[recv]));
  }
  // Memory counters: the samples inside the window and, per device, the last one before it.
  std::vector<std::size_t> last_before(w.device_count(), r.memory_timeline.size());
  for (std::size_t i = 0; i < r.memory_timeline.size(); ++i) {
    const MemorySample& m = r.memory_timeline[i];
    if (m.time < filter.start && m.device < last_before.size()) last_before[m.device] = i;
  }
  for (std::size_t i = 0; i < r.memory_timeline.size(); ++i) {
    const MemorySample& m = r.memory_timeline[i];
    if (!filter.keeps(m.device)) continue;
    const bool inside = m.time >= filter.start && m.time <= filter.end;
    if (!inside && !(m.device < last_before.size() && last_before[m.device] == i)) continue;
    sink.event(R"({{"ph":"C","name":"memory","pid":{},"ts":{},"args":{{"GiB":{:.6f}}}}})",
               m.device, us(m.time),
               static_cast<double>(m.total_bytes) / (1024.0 * 1024 * 1024));
  }
  sink.raw("\n]}\n");
}

}  // namespace

TraceSize chrome_trace_size(const Workload& w, const SimResult& r, const TraceFilter& filter) {
  CountingSink sink;
  emit_trace(sink, w, r, filter);
  return sink.size();
}

std::string chrome_trace(const Workload& w, const SimResult& r, const TraceFilter& filter) {
  std::string text;
  TextSink sink(text);
  emit_trace(sink, w, r, filter);
  return text;
}

void write_chrome_trace(std::ostream& out, const Workload& w, const SimResult& r,
                        const TraceFilter& filter) {
  const std::string text = chrome_trace(w, r, filter);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace parasim::sim
