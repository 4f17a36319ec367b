#pragma once
// parasim::cost measured-tables reader — the "measurements" and "provenance" objects of a
// version 2 profile (docs/profile.md) into MeasuredTables (measured_tables.hpp).
//
// Reading follows json_fields.hpp: every problem (wrong type, unknown key, value out of range,
// broken invariant of measured_tables.hpp) is added to the Diagnostics with its JSON path, and
// reading goes on, so that one pass reports all of them. An element with a problem is left out
// of the tables; the caller throws InputError when the Diagnostics are not ok.
//
// Times are plain JSON numbers in seconds (keys ending in "_s") and sizes plain numbers of bytes:
// these tables are written by `parasim calibrate` and must round-trip exactly, which unit text
// rounded to picoseconds would not.

#include <nlohmann/json.hpp>
#include <string>

#include "costmodel/diagnostics.hpp"
#include "costmodel/measured_tables.hpp"

namespace parasim::cost {

// `node` is the "measurements" object at JSON Pointer `path`; fills every table but provenance
// and complete.
void read_measurements(const nlohmann::json& node, const std::string& path, Diagnostics& d,
                       MeasuredTables& tables);

// `node` is the "provenance" object at JSON Pointer `path`. Every field is optional.
void read_provenance(const nlohmann::json& node, const std::string& path, Diagnostics& d,
                     Provenance& provenance);

}  // namespace parasim::cost
