#pragma once
// parasim::strat schedule entries — one function per schedule, each in its own file
// (strategies/schedules/schedule_NAME.cpp); registry.cpp lists them. Internal to the registry.

#include "strategies/registry/entry.hpp"

namespace parasim::strat {

Entry gpipe_schedule();
Entry one_f_one_b_schedule();
Entry interleaved_schedule();
Entry zb_h1_schedule();
Entry zb_h2_schedule();
Entry zb_1p_schedule();
Entry zb_2p_schedule();
Entry pipedream_schedule();
Entry pipedream_2bw_schedule();
Entry paci_schedule();
Entry interleaved_zb_schedule();
Entry zb_v_schedule();
Entry dualpipev_schedule();

}  // namespace parasim::strat
