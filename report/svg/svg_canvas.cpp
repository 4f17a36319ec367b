#include "report/svg/svg_canvas.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace parasim::cli::svg {
namespace {

// Length of the valid UTF-8 sequence (and XML 1.0 character) at text[i], or 0 when invalid.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    const bool allowed = b0 >= 0x20 || b0 == '\t' || b0 == '\n' || b0 == '\r';
    return allowed ? 1 : 0;
  }
  std::size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  // U+FFFE and U+FFFF are not XML characters.
  if (len == 3 && b0 == 0xEF && byte(i + 1) == 0xBF && byte(i + 2) >= 0xBE) return 0;
  return len;
}

}  // namespace

std::size_t kind_index(BoxKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return i < kKindStyles.size() ? i : kKindStyles.size() - 1;
}

std::string num(double v) {
  if (!std::isfinite(v)) return "0";
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

std::string escape(std::string_view text, std::size_t max_chars) {
  std::string out;
  out.reserve(text.size());
  std::vector<std::size_t> starts;  // where each character begins in `out`, when cutting
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (chars == max_chars) {
      // Cut back so that the ellipsis fits within max_chars characters.
      out.resize(starts.size() >= 3 ? starts[starts.size() - 3] : 0);
      out += "...";
      return out;
    }
    if (max_chars != std::string::npos) starts.push_back(out.size());
    const std::size_t len = utf8_length(text, i);
    if (len == 0) {
      out += '?';
      ++i;
    } else if (len > 1) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      switch (text[i]) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&apos;";
          break;
        default:
          out += text[i];
      }
      ++i;
    }
    ++chars;
  }
  return out;
}

std::size_t char_count(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}


Ticks nice_ticks(double range, double target) {
  Ticks t;
  if (!(range > 0) || !std::isfinite(range)) return t;
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  t.step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  t.decimals = std::max(0, -static_cast<int>(std::floor(std::log10(t.step) + 1e-9)));
  return t;
}


TimeUnit time_unit(double span_s) {
  return span_s < 1 ? TimeUnit{1e3, "ms"} : TimeUnit{1, "s"};
}

std::string style_block(bool with_kinds) {
  std::string s =
      "<style type=\"text/css\">\n"
      "text{font-family:Helvetica,Arial,sans-serif;font-size:11px;fill:#222222}\n"
      ".title{font-size:15px;font-weight:bold}\n"
      ".name{text-anchor:end}\n"
      ".mid{text-anchor:middle}\n"
      ".end{text-anchor:end}\n"
      ".lane{fill:#EEEEEE}\n"
      ".grid{stroke:#FFFFFF;stroke-width:1}\n"
      ".hgrid{stroke:#DDDDDD;stroke-width:1}\n"
      ".axis{stroke:#444444;stroke-width:1}\n"
      ".series{fill:none;stroke-width:1.5}\n"
      ".capacity{stroke:#333333;stroke-width:1.2}\n";
  if (with_kinds) {
    s += ".shade{fill:#FFFFFF;fill-opacity:0.6}\n";
    s += ".mark{stroke:#333333;stroke-width:1;stroke-dasharray:4,3}\n";
    for (std::size_t k = 0; k < kKindStyles.size(); ++k) {
      s += fmt::format(".k{}{{fill:{}}}\n", k, kKindStyles[k].fill);
    }
    s += ".tw{fill:#FFFFFF;font-size:10px;text-anchor:middle}\n";
    s += ".tb{fill:#000000;font-size:10px;text-anchor:middle}\n";
  }
  s += "</style>\n";
  return s;
}

void open_svg(std::string& o, double height, bool with_kinds) {
  o += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\">\n",
      num(kWidth), num(height));
  o += style_block(with_kinds);
  o += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#FFFFFF\"/>\n",
                   num(kWidth), num(height));
}

void title_text(std::string& o, const std::string& title) {
  o += fmt::format("<text x=\"{}\" y=\"26\" class=\"title mid\">{}</text>\n", num(kWidth / 2),
                   escape(title));
}

void time_axis(std::string& o, double x0, double w, double axis_y, double grid_top,
               std::string_view grid_class, double span_s) {
  const TimeUnit unit = time_unit(span_s);
  const double span_u = span_s * unit.scale;
  const Ticks ticks = nice_ticks(span_u, 10);
  o += "<g>\n";
  o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/>\n", num(x0),
                   num(axis_y), num(x0 + w), num(axis_y));
  if (ticks.step > 0) {
    for (int i = 0; i <= 1000; ++i) {
      const double v = ticks.step * i;
      if (v > span_u * (1 + 1e-9)) break;
      const double x = x0 + w * v / span_u;
      if (grid_top < axis_y) {
        o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" class=\"{3}\"/>\n",
                         num(x), num(grid_top), num(axis_y), grid_class);
      }
      o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" class=\"axis\"/>\n",
                       num(x), num(axis_y), num(axis_y + 4));
      o += fmt::format("<text x=\"{}\" y=\"{}\" class=\"mid\">{:.{}f}</text>\n", num(x),
                       num(axis_y + 16), v, ticks.decimals);
    }
  }
  o += fmt::format("<text x=\"{}\" y=\"{}\" class=\"mid\">time ({})</text>\n", num(x0 + w / 2),
                   num(axis_y + 32), unit.name);
  o += "</g>\n";
}

double effective_span(double span_s, double latest_s) {
  if (span_s > 0 && std::isfinite(span_s)) return span_s;
  if (latest_s > 0 && std::isfinite(latest_s)) return latest_s;
  return 1e-3;
}


int legend(std::string& o, const std::vector<LegendEntry>& entries, double x0, double y0) {
  if (entries.empty()) return 0;
  o += "<g>\n";
  double x = x0;
  double y = y0;
  int rows = 1;
  for (const auto& e : entries) {
    const double w = 12 + 6 + static_cast<double>(char_count(e.label)) * kCharPx + 18;
    if (x > x0 && x + w > kWidth - kRight) {
      x = x0;
      y += 18;
      ++rows;
    }
    o += fmt::format(fmt::runtime(e.swatch), fmt::arg("x", num(x)), fmt::arg("y", num(y)),
                     fmt::arg("x2", num(x + 18)), fmt::arg("yc", num(y + 6)));
    o += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", num(x + 24), num(y + 10),
                     escape(e.label));
    x += w + 6;
  }
  o += "</g>\n";
  return rows;
}

}  // namespace parasim::cli::svg

namespace parasim::cli {

std::string svg_escape(std::string_view text) { return svg::escape(text); }

}  // namespace parasim::cli
