#include "calibrate/trace/nsys_reader.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "calibrate/trace/kernel_classes.hpp"
#include "calibrate/trace/op_nesting.hpp"
#include "calibrate/trace/trace_file.hpp"
#include "costmodel/measured_tables.hpp"

namespace parasim::calib::trace {
namespace {

class Database {
 public:
  explicit Database(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      error_ = db_ ? sqlite3_errmsg(db_) : "cannot open";
    }
  }
  ~Database() { sqlite3_close(db_); }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  const std::string& error() const { return error_; }

  bool has_table(const std::string& table) const {
    bool found = false;
    each("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = '" + table + "'",
         [&](sqlite3_stmt*) { found = true; });
    return found;
  }
  bool has_column(const std::string& table, const std::string& column) const {
    bool found = false;
    each("PRAGMA table_info(" + table + ")", [&](sqlite3_stmt* s) {
      const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
      if (name && column == name) found = true;
    });
    return found;
  }
  // Runs `sql`, calling row(statement) per row; returns the error text, "" when it ran.
  template <typename Row>
  std::string each(const std::string& sql, Row&& row) const {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
      return sqlite3_errmsg(db_);
    }
    const std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> statement(raw, sqlite3_finalize);
    int status = SQLITE_ROW;
    while ((status = sqlite3_step(raw)) == SQLITE_ROW) row(raw);
    return status == SQLITE_DONE ? "" : sqlite3_errmsg(db_);
  }

 private:
  sqlite3* db_ = nullptr;
  std::string error_;
};

std::string text_column(sqlite3_stmt* s, int column) {
  const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s, column));
  return t ? t : "";
}

// A nanosecond column in microseconds (exact below 2^53 ns, 104 days of session time).
double us_of(sqlite3_stmt* s, int column) {
  return static_cast<double>(sqlite3_column_int64(s, column)) / 1e3;
}

// nsys's globalTid / globalPid: the process id in bits 24..47, the thread id in the low 24.
std::int64_t process_of(std::int64_t global_id) {
  return (global_id >> 24) & 0xFFFFFF;
}

}  // namespace

bool looks_like_sqlite(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  return in.gcount() == 16 && std::memcmp(header, "SQLite format 3", 16) == 0;
}

TraceOp parse_nvtx_op(const std::string& text) {
  TraceOp op;
  const std::size_t comma = text.find(", ");
  op.name = text.substr(0, comma);
  const std::size_t sizes = text.find("sizes = [");
  if (sizes == std::string::npos) return op;
  // [[8, 4], [4, 2], []]: one list per input, integers only.
  std::size_t i = sizes + std::strlen("sizes = [");
  std::vector<std::int64_t> current;
  bool in_list = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[') {
      in_list = true;
      current.clear();
    } else if (c == ']') {
      if (!in_list) break;  // the outer list's end
      op.input_dims.push_back(current);
      in_list = false;
    } else if (in_list && (std::isdigit(static_cast<unsigned char>(c)) != 0)) {
      std::int64_t value = 0;
      const auto [end, error] = std::from_chars(text.data() + i, text.data() + text.size(), value);
      if (error != std::errc()) {  // a size beyond int64: the text is not emit_nvtx's; no shapes
        op.input_dims.clear();
        return op;
      }
      current.push_back(value);
      i = static_cast<std::size_t>(end - text.data()) - 1;
    }
  }
  return op;
}

std::vector<RankTrace> read_nsys_export(const std::string& path, cost::Diagnostics& diagnostics) {
  Database db(path);
  if (!db.error().empty()) {
    diagnostics.add("", "cannot open the SQLite file: " + db.error());
    return {};
  }
  const std::string kKernels = "CUPTI_ACTIVITY_KIND_KERNEL";
  if (!db.has_table(kKernels)) {
    diagnostics.add(kKernels,
                    "missing: an Nsight Systems export with CUDA kernels has this "
                    "table (profile with nsys profile --trace=cuda,nvtx and export "
                    "with nsys export --type sqlite)");
    return {};
  }
  for (const char* column :
       {"start", "end", "streamId", "correlationId", "globalPid", "demangledName"}) {
    if (!db.has_column(kKernels, column)) {
      diagnostics.add(kKernels + "/" + column,
                      "missing column: not an Nsight Systems export "
                      "parasim knows");
    }
  }
  if (!diagnostics.ok()) return {};

  std::unordered_map<std::int64_t, std::string> strings;
  db.each("SELECT id, value FROM StringIds",
          [&](sqlite3_stmt* s) { strings[sqlite3_column_int64(s, 0)] = text_column(s, 1); });
  std::string device;
  for (const char* table : {"TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE"}) {
    if (device.empty() && db.has_table(table) && db.has_column(table, "name")) {
      db.each(std::string("SELECT name FROM ") + table + " LIMIT 1",
              [&](sqlite3_stmt* s) { device = text_column(s, 0); });
    }
  }

  std::map<std::int64_t, RankTrace> by_process;
  struct Launch {
    std::int64_t thread;
    double start_us;
  };
  // CUPTI numbers correlation ids per process: (process, correlationId) -> launch.
  std::map<std::pair<std::int64_t, std::int64_t>, Launch> launches;
  std::vector<std::string> notes;  // optional tables that could not be read
  if (db.has_table("CUPTI_ACTIVITY_KIND_RUNTIME")) {
    const std::string error = db.each(
        "SELECT r.start, r.end, r.globalTid, r.correlationId, s.value FROM "
        "CUPTI_ACTIVITY_KIND_RUNTIME r LEFT JOIN StringIds s ON s.id = r.nameId",
        [&](sqlite3_stmt* s) {
          const double start = us_of(s, 0);
          const double end = us_of(s, 1);
          const std::int64_t tid = sqlite3_column_int64(s, 2);
          launches[{process_of(tid), sqlite3_column_int64(s, 3)}] = {tid, start};
          const std::string name = text_column(s, 4);
          if (name.find("LaunchKernel") != std::string::npos && end >= start) {
            by_process[process_of(tid)].launch_call_us.push_back(end - start);
          }
        });
    if (!error.empty()) {
      notes.push_back("CUPTI_ACTIVITY_KIND_RUNTIME not read (" + error +
                      "): kernels have no "
                      "launching op, so no shapes and no phases");
    }
  }
  if (db.has_table("NVTX_EVENTS")) {
    // Ranges only (59: push/pop, 60: start/end), with their text inline or by id.
    const std::string error = db.each(
        "SELECT e.start, e.end, e.globalTid, COALESCE(e.text, s.value) FROM NVTX_EVENTS e "
        "LEFT JOIN StringIds s ON s.id = e.textId WHERE e.eventType IN (59, 60) AND "
        "e.end IS NOT NULL",
        [&](sqlite3_stmt* s) {
          TraceOp op = parse_nvtx_op(text_column(s, 3));
          op.start_us = us_of(s, 0);
          op.end_us = us_of(s, 1);
          if (op.end_us < op.start_us) return;
          op.thread = sqlite3_column_int64(s, 2);
          by_process[process_of(op.thread)].ops.push_back(std::move(op));
        });
    if (!error.empty()) {
      notes.push_back("NVTX_EVENTS not read (" + error + "): no ops, so no shapes and no phases");
    }
  }
  std::size_t kernels = 0;
  std::size_t overlong = 0;
  // Per process, per kernel (in rank.kernels' order): its launch, when the export has it.
  std::map<std::int64_t, std::vector<const Launch*>> kernel_launch;
  auto add_gpu_rows = [&](const std::string& sql, bool copies) {
    return db.each(sql, [&](sqlite3_stmt* s) {
      TraceKernel k;
      k.start_us = us_of(s, 0);
      k.duration_us = us_of(s, 1) - us_of(s, 0);
      k.stream = sqlite3_column_int64(s, 2);
      const std::int64_t correlation = sqlite3_column_int64(s, 3);
      const std::int64_t process = process_of(sqlite3_column_int64(s, 4));
      k.name = copies ? text_column(s, 5) : strings[sqlite3_column_int64(s, 5)];
      k.kind = copies ? KernelClass::kCopy : classify_kernel(k.name);
      if (k.duration_us < 0) k.duration_us = 0;
      if (k.duration_us > cost::kMaxMeasuredSeconds * 1e6) {  // what a profile could not hold
        ++overlong;
        return;
      }
      RankTrace& rank = by_process[process];
      const auto it = launches.find({process, correlation});
      // Resolved to an op once the ops are indexed, below.
      kernel_launch[process].push_back(it != launches.end() ? &it->second : nullptr);
      rank.kernels.push_back(std::move(k));
      ++kernels;
    });
  };
  std::string error = add_gpu_rows(
      "SELECT start, end, streamId, correlationId, globalPid, "
      "demangledName FROM " +
          kKernels,
      false);
  if (error.empty() && db.has_table("CUPTI_ACTIVITY_KIND_MEMCPY")) {
    error = add_gpu_rows(
        "SELECT start, end, streamId, correlationId, globalPid, 'memcpy' FROM "
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        true);
  }
  if (error.empty() && db.has_table("CUPTI_ACTIVITY_KIND_MEMSET")) {
    error = add_gpu_rows(
        "SELECT start, end, streamId, correlationId, globalPid, 'memset' FROM "
        "CUPTI_ACTIVITY_KIND_MEMSET",
        true);
  }
  if (!error.empty()) {
    diagnostics.add(kKernels, "cannot read: " + error);
    return {};
  }
  if (overlong > 0) {
    diagnostics.add(kKernels, fmt::format("{} GPU activities run longer than {:g} s (end - "
                                          "start): not a profiled step",
                                          overlong, cost::kMaxMeasuredSeconds));
    return {};
  }
  if (kernels > kMaxTraceKernels) {
    diagnostics.add(kKernels, fmt::format("{} GPU activities: over the limit of {} (profile fewer "
                                          "steps)",
                                          kernels, kMaxTraceKernels));
    return {};
  }
  std::vector<RankTrace> out;
  for (auto& [process, rank] : by_process) {
    if (rank.kernels.empty()) continue;
    rank.file = path;
    rank.format = "nsys";
    rank.device = device;
    rank.rank = static_cast<int>(out.size());
    const OpLocator locator(rank.ops);
    const std::vector<const Launch*>& launched = kernel_launch[process];
    for (std::size_t i = 0; i < rank.kernels.size(); ++i) {
      if (const Launch* launch = launched[i]) {
        rank.kernels[i].launch_op = locator.innermost(launch->thread, launch->start_us);
      }
    }
    rank.notes = notes;
    finish_rank_trace(rank);
    out.push_back(std::move(rank));
  }
  const int ranks = static_cast<int>(out.size());
  for (RankTrace& r : out) r.world_size = ranks;
  if (ranks > 1) {
    out.front().notes.push_back(
        fmt::format("{}: {} processes ran kernels; read as ranks 0..{} in process-id order",
                    cost::printable(path), ranks, ranks - 1));
  }
  return out;
}

}  // namespace parasim::calib::trace
