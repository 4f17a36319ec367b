#include "costmodel/hardware.hpp"

namespace parasim::cost {

const char* dtype_name(Dtype d) {
  switch (d) {
    case Dtype::kFp32: return "fp32";
    case Dtype::kTf32: return "tf32";
    case Dtype::kBf16: return "bf16";
    case Dtype::kFp16: return "fp16";
    case Dtype::kFp8: return "fp8";
  }
  return "?";
}

std::optional<Dtype> parse_dtype(std::string_view name) {
  for (Dtype d : {Dtype::kFp32, Dtype::kTf32, Dtype::kBf16, Dtype::kFp16, Dtype::kFp8}) {
    if (name == dtype_name(d)) return d;
  }
  return std::nullopt;
}

FlopRate DeviceSpec::peak(Dtype d) const {
  switch (d) {
    case Dtype::kFp32: return peak_fp32;
    case Dtype::kTf32: return peak_tf32;
    case Dtype::kBf16: return peak_bf16;
    case Dtype::kFp16: return peak_fp16;
    case Dtype::kFp8: return peak_fp8;
  }
  return peak_fp32;
}

}  // namespace parasim::cost
