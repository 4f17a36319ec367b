// Time is header-only; this unit keeps the sim library non-empty until the engine lands.
#include "sim/time.hpp"
