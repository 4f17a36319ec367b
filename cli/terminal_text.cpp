#include "cli/terminal_text.hpp"

#include <fmt/format.h>

#include <utility>

#include "costmodel/invisible_controls.hpp"

namespace parasim::cli {
namespace {

bool is_c0_to_escape(unsigned char c) { return c < 0x20 && c != '\n' && c != '\t'; }

// Appends the safe form of `text` to `out`. `pending` holds the bytes at the end of the previous
// call that may begin a multi-byte sequence (an invisible control, or any UTF-8 character cut
// between two writes): they are decided with the bytes that follow.
void append_safe(std::string_view text, std::string& pending, std::string& out) {
  std::string work;
  if (!pending.empty()) {
    work = pending;
    work.append(text);
    text = work;
    pending.clear();
  }
  for (std::size_t i = 0; i < text.size();) {
    const std::string_view rest = text.substr(i);
    if (const cost::InvisibleControl control = cost::invisible_control_at(rest);
        control.length > 0) {
      out += fmt::format("\\u{:04x}", control.code_point);
      i += control.length;
      continue;
    }
    const cost::Utf8Step step = cost::utf8_step(rest);
    if (step.kind == cost::Utf8Step::kIncomplete) {
      pending.assign(rest);  // wait for the next bytes
      return;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (step.kind == cost::Utf8Step::kInvalid) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
      ++i;
    } else if (is_c0_to_escape(c)) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
      ++i;
    } else {
      out.append(rest.substr(0, step.length));
      i += step.length;
    }
  }
}

// The bytes left pending at the very end of the text: a sequence that never completed, escaped.
void finish_pending(std::string& pending, std::string& out) {
  for (const char ch : pending) {
    out += fmt::format("\\x{:02x}", static_cast<unsigned>(static_cast<unsigned char>(ch)));
  }
  pending.clear();
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::string pending;
  append_safe(text, pending, out);
  finish_pending(pending, out);
  return out;
}

bool TerminalSafeBuffer::put_raw(std::string_view bytes) {
  return target_->sputn(bytes.data(), static_cast<std::streamsize>(bytes.size())) ==
         static_cast<std::streamsize>(bytes.size());
}

std::streamsize TerminalSafeBuffer::xsputn(const char* s, std::streamsize n) {
  std::string safe;
  safe.reserve(static_cast<std::size_t>(n));
  append_safe(std::string_view(s, static_cast<std::size_t>(n)), pending_, safe);
  return put_raw(safe) ? n : 0;
}

TerminalSafeBuffer::int_type TerminalSafeBuffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
}

int TerminalSafeBuffer::sync() {
  // Pending bytes stay pending: std::cerr syncs after every insertion, and a control written in
  // two insertions must still be seen whole (finish() writes what is left at the end).
  return target_->pubsync();
}

bool TerminalSafeBuffer::finish() {
  if (pending_.empty()) return true;
  std::string safe;
  finish_pending(pending_, safe);
  return put_raw(safe) && target_->pubsync() == 0;
}

}  // namespace parasim::cli
