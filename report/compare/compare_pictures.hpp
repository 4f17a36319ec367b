#pragma once
// parasim::cli compare pictures — `parasim compare --svg DIR`: per variant that ran, a timeline
// and a memory curve per stage, both titled with the variant and what it runs, on one time axis
// shared by every variant of the comparison (`span_s`: the longest simulated run), so their
// lengths compare at a glance; and the file names they go to.
//
// The timeline shows what each comparison is about: per stage (its first simulated GPU) a lane
// of every pipeline item as a box and the optimizer step's own kernels (factor updates, inverse
// roots, the AdamW step: what an --optimizers comparison differs in), and a lane of every
// collective and transfer that GPU takes part in, coloured by kind (tp, pp, dp, cp: what a
// --placements or --layouts comparison differs in). For asynchronous schedules the warm-up the
// figures exclude is shaded and the steady-state window marked.

#include <string>
#include <vector>

#include "report/compare/compare_row.hpp"

namespace parasim::cli {

// "1f1b, dp 2 tp 4 cp 1 pp 2, btp, seq 4096": what a row runs, for titles (the placement when
// not Megatron's or when placements are compared, the optimizer when not AdamW and not already
// in the label).
std::string variant_summary(const CompareVariant& variant);

std::string compare_timeline_svg(const CompareRow& row, double span_s);
std::string compare_memory_svg(const CompareRow& row, double span_s);

// The shared time axis of a comparison's pictures: the longest simulated run among the rows.
double shared_span_s(const std::vector<CompareRow>& rows);

// One file-name stem per label, in order: every character outside [A-Za-z0-9._-] replaced by
// '_' ("shampoo/coupled-newton/fp32/1024" -> "shampoo_coupled-newton_fp32_1024", "tsp@16K" ->
// "tsp_16K"), a stem made only of dots gets a leading '_', and a stem already taken gets "-2",
// "-3", ... so that no two variants share a file.
std::vector<std::string> picture_stems(const std::vector<std::string>& labels);

}  // namespace parasim::cli
