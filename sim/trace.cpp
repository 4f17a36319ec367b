#include "sim/trace.hpp"

#include <fmt/format.h>

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

}  // namespace

void write_chrome_trace(std::ostream& out, const Workload& w, const SimResult& r) {
  fmt::memory_buffer buf;
  auto emit = [&](std::string_view line, bool& first) {
    if (!first) buf.append(std::string_view(",\n"));
    first = false;
    buf.append(line);
  };
  bool first = true;
  buf.append(std::string_view("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"));
  for (DeviceId d = 0; d < w.device_count(); ++d) {
    emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"{}"}}}})",
                     d, json_escape(w.device(d).name)),
         first);
    emit(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
                     d, d),
         first);
  }
  for (StreamId s = 0; s < w.stream_count(); ++s) {
    const Stream& st = w.stream(s);
    emit(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})",
                     st.device, s, json_escape(st.name)),
         first);
  }
  // A group member is drawn from the moment the group starts (its last member arrives): the time
  // a member waited at its stream head for the others is not communication.
  const std::vector<Time> group_start = group_start_times(w, r);
  for (OpId o = 0; o < w.op_count(); ++o) {
    const Op& op = w.op(o);
    const Stream& st = w.stream(op.stream);
    Time start = r.op_start[o];
    std::string args;
    if (op.kind == OpKind::kGroupMember) {
      start = group_start[op.group];
      const Group& g = w.group(op.group);
      args = fmt::format(R"(,"args":{{"members":{},"bytes_sent":{:.0f}}})", g.members_count,
                         g.bytes_per_member);
    }
    emit(fmt::format(R"({{"ph":"X","name":"{}","cat":"{}","pid":{},"tid":{},"ts":{},"dur":{}{}}})",
                     json_escape(w.op_name(o)), json_escape(w.text(op.category)), st.device,
                     op.stream, us(start), us(r.op_end[o] - start), args),
         first);
  }
  // Flow arrows for point-to-point transfers: member 0 sends, member 1 receives.
  for (GroupId g = 0; g < w.group_count(); ++g) {
    if (!w.group(g).point_to_point || w.group(g).members_count != 2) continue;
    const OpId send = w.members(g)[0];
    const OpId recv = w.members(g)[1];
    const Op& so = w.op(send);
    const Op& ro = w.op(recv);
    emit(fmt::format(R"({{"ph":"s","id":{},"name":"p2p","cat":"p2p","pid":{},"tid":{},"ts":{}}})",
                     g, w.device_of(send), so.stream, us(group_start[g])),
         first);
    emit(fmt::format(
             R"({{"ph":"f","bp":"e","id":{},"name":"p2p","cat":"p2p","pid":{},"tid":{},"ts":{}}})",
             g, w.device_of(recv), ro.stream, us(r.op_end[recv])),
         first);
  }
  for (const MemorySample& m : r.memory_timeline) {
    emit(fmt::format(R"({{"ph":"C","name":"memory","pid":{},"ts":{},"args":{{"GiB":{:.6f}}}}})",
                     m.device, us(m.time), static_cast<double>(m.total_bytes) / (1024.0 * 1024 * 1024)),
         first);
  }
  buf.append(std::string_view("\n]}\n"));
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace parasim::sim
