#include "cli/limit_options.hpp"

#include <fmt/format.h>

#include <string>

#include "cli/option_checks.hpp"
#include "costmodel/units.hpp"

namespace parasim::cli {

void add_limit_options(CLI::App& command, strat::WorkloadLimits& limits) {
  const strat::WorkloadLimits defaults;
  command
      .add_option_function<double>(
          "--max-ops", [&limits](double n) { limits.max_ops = n; },
          fmt::format("Refuse a simulation estimated past N ops (compute blocks and collective "
                      "members; up to about 230 bytes and a few microseconds each) before building it "
                      "(default {:.0f})",
                      defaults.max_ops))
      ->type_name("N")
      ->check(finite_range(1, 1e18));
  command
      .add_option_function<std::string>(
          "--max-memory",
          [&limits](const std::string& text) {
            std::string why;
            const auto bytes = cost::parse_bytes(text, &why);
            if (!bytes || !(bytes->value > 0)) {
              throw CLI::ValidationError("--max-memory", why.empty() ? "expected a positive size" : why);
            }
            limits.max_memory_bytes = bytes->value;
          },
          fmt::format("Refuse a simulation whose workload and run are estimated to need more "
                      "memory than SIZE, e.g. \"16 GiB\" (default {})",
                      cost::format_bytes(cost::Bytes{defaults.max_memory_bytes})))
      ->type_name("SIZE");
  command
      .add_option_function<double>(
          "--max-shampoo-blocks", [&limits](double n) { limits.max_shampoo_blocks = n; },
          fmt::format("Refuse a Shampoo or DASH optimizer that cuts the weights into more than N "
                      "blocks over all stages (a small block_size on a large model; default {:.0f})",
                      defaults.max_shampoo_blocks))
      ->type_name("N")
      ->check(finite_range(1, 1e18));
}

}  // namespace parasim::cli
