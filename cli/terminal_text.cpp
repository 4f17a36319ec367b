#include "cli/terminal_text.hpp"

#include <fmt/format.h>

namespace parasim::cli {
namespace {

bool is_c0_to_escape(unsigned char c) { return c < 0x20 && c != '\n' && c != '\t'; }
bool is_c1_continuation(unsigned char c) { return c >= 0x80 && c <= 0x9f; }

// Appends the safe form of `text` to `out`; `pending_c2` carries a 0xC2 lead byte across calls.
void append_safe(std::string_view text, bool& pending_c2, std::string& out) {
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (pending_c2) {
      pending_c2 = false;
      if (is_c1_continuation(c)) {
        out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        continue;
      }
      out += '\xc2';
    }
    if (c == 0xc2) {
      pending_c2 = true;
    } else if (is_c0_to_escape(c)) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
    } else {
      out += ch;
    }
  }
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_c2 = false;
  append_safe(text, pending_c2, out);
  if (pending_c2) out += '\xc2';
  return out;
}

bool TerminalSafeBuffer::put_raw(std::string_view bytes) {
  return target_->sputn(bytes.data(), static_cast<std::streamsize>(bytes.size())) ==
         static_cast<std::streamsize>(bytes.size());
}

std::streamsize TerminalSafeBuffer::xsputn(const char* s, std::streamsize n) {
  std::string safe;
  safe.reserve(static_cast<std::size_t>(n));
  append_safe(std::string_view(s, static_cast<std::size_t>(n)), pending_c2_, safe);
  return put_raw(safe) ? n : 0;
}

TerminalSafeBuffer::int_type TerminalSafeBuffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
}

int TerminalSafeBuffer::sync() {
  if (pending_c2_) {
    pending_c2_ = false;
    if (!put_raw("\xc2")) return -1;
  }
  return target_->pubsync();
}

}  // namespace parasim::cli
