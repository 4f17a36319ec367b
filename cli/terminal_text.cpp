#include "cli/terminal_text.hpp"

#include <fmt/format.h>

#include <utility>

#include "costmodel/invisible_controls.hpp"

namespace parasim::cli {
namespace {

bool is_c0_to_escape(unsigned char c) { return c < 0x20 && c != '\n' && c != '\t'; }

// Appends the safe form of `text` to `out`. `pending` holds the bytes at the end of the previous
// call that may begin an invisible control (cost::starts_invisible_control): they are decided
// with the bytes that follow.
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
    if (rest.size() < 3 && cost::starts_invisible_control(rest)) {
      pending.assign(rest);  // wait for the next bytes
      return;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (is_c0_to_escape(c)) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
    } else {
      out += text[i];
    }
    ++i;
  }
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::string pending;
  append_safe(text, pending, out);
  out += pending;  // an incomplete sequence at the very end: not a control
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
  if (!pending_.empty()) {
    const std::string bytes = std::exchange(pending_, std::string());
    if (!put_raw(bytes)) return -1;
  }
  return target_->pubsync();
}

}  // namespace parasim::cli
