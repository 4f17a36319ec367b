#include "costmodel/precision/architecture.hpp"

namespace parasim::cost {

const char* architecture_name(Architecture a) {
  switch (a) {
    case Architecture::kUnknown:
      return "unknown";
    case Architecture::kAmpere:
      return "ampere";
    case Architecture::kHopper:
      return "hopper";
    case Architecture::kBlackwell:
      return "blackwell";
    case Architecture::kCdna3:
      return "cdna3";
    case Architecture::kCdna4:
      return "cdna4";
  }
  return "unknown";
}

std::optional<Architecture> parse_architecture(std::string_view name) {
  for (Architecture a : kAllArchitectures) {
    if (name == architecture_name(a)) return a;
  }
  return std::nullopt;
}

LowPrecisionSupport low_precision_support(Architecture a) {
  LowPrecisionSupport s;
  switch (a) {
    case Architecture::kAmpere:
      s.fp8 = false;
      break;
    case Architecture::kUnknown:
      s.fp8 = true;
      break;
    case Architecture::kHopper:
      s.fp8 = s.fp8_blockwise = true;
      break;
    case Architecture::kBlackwell:
      s.fp8 = s.fp8_blockwise = s.mxfp8 = s.nvfp4 = true;
      s.fp8_needs_transpose = false;
      break;
    case Architecture::kCdna3:
      s.fp8 = true;
      break;
    case Architecture::kCdna4:
      s.fp8 = s.mxfp8 = true;
      break;
  }
  return s;
}

}  // namespace parasim::cost
