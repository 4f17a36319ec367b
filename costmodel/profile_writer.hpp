#pragma once
// parasim::cost profile writer — a Profile as version 2 profile JSON (docs/profile.md), as
// `parasim calibrate` writes it.
//
// Deterministic: the same Profile gives the same bytes (fixed key order, two-space indent, a
// final newline). Only what is set is written: optional overrides when present, GEMM parameters
// that differ from GemmEfficiencyParams{}, "source" when not empty, provenance fields that are
// not empty or zero, "complete" and "measurements" when the profile has measured tables (or
// provenance, or complete), each table when not empty. Profile::file is not written.
// Round trip: parse_profile(format_profile(p)) has the same values as p (quantities with units
// are written in base units with the shortest decimal form that reads back to the same double:
// "989400000000000 FLOP/s", "3350000000000 B/s", times as integer picoseconds "3000000 ps";
// plain numbers use nlohmann::json's round-trip formatting), so formatting again gives the same
// bytes.

#include <string>

#include "costmodel/profile.hpp"

namespace parasim::cost {

std::string format_profile(const Profile& profile);

}  // namespace parasim::cost
