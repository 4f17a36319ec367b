#pragma once
// parasim::cli warnings about a profile as a whole, printed on standard error wherever one is
// used (simulate, compare, calibrate --check).
//
// A profile with measured tables whose "complete" is false was written by a calibration that
// did not finish (docs/calibration.md): it is valid and used, and one warning says what it holds
// and that what it lacks comes from the analytical model. A complete profile with some families
// absent (a run with --ops, a profile derived from published figures) is as intended: no
// warning.

#include <string>
#include <vector>

#include "costmodel/profile.hpp"

namespace parasim::cli {

std::vector<std::string> profile_warnings(const cost::Profile& profile, const std::string& path);

}  // namespace parasim::cli
