// Comma-separated option lists and the whole numbers inside them: exact ranges, no wrap-around.
#include <doctest/doctest.h>

#include "cli/option_list.hpp"
#include "report/number_text.hpp"

using namespace parasim::cli;

TEST_CASE("split_list keeps items in order and skips empty ones") {
  CHECK(split_list("") == std::vector<std::string>{});
  CHECK(split_list(",,") == std::vector<std::string>{});
  CHECK(split_list("a,b,,c,") == std::vector<std::string>{"a", "b", "c"});
  CHECK(split_list("shampoo/evd/fp32") == std::vector<std::string>{"shampoo/evd/fp32"});
}

TEST_CASE("parse_whole_number: digits only, inside [min, max]") {
  CHECK(parse_whole_number("1", 1, 10) == 1);
  CHECK(parse_whole_number("10", 1, 10) == 10);
  CHECK(parse_whole_number("0", 0, 10) == 0);
  CHECK(parse_whole_number("16777216", 1, 1 << 24) == 1 << 24);
  for (const char* bad : {"", "0", "11", "-1", "+1", " 1", "1 ", "01", "1e3", "1.0", "abc", "8k",
                          "99999999999999", "9223372036854775808", "18446744073709551617"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_whole_number(bad, 1, 10).has_value());
  }
  CHECK_FALSE(parse_whole_number("16777217", 1, 1 << 24).has_value());
  CHECK(parse_whole_number("9223372036854775807", 0, 9223372036854775807LL) ==
        9223372036854775807LL);
}

TEST_CASE("whole_number_message names the option, the item and the range") {
  CHECK(whole_number_message("--seq-lens", "abc", 1, 16777216, "tokens") ==
        "--seq-lens: \"abc\" is not a whole number from 1 to 16,777,216 (tokens)");
}

TEST_CASE("number text: thousands separators, four significant digits below 100, singulars") {
  CHECK(grouped_integer(0) == "0");
  CHECK(grouped_integer(999) == "999");
  CHECK(grouped_integer(1000) == "1,000");
  CHECK(grouped_integer(633545.6) == "633,546");
  CHECK(grouped_integer(-1234567) == "-1,234,567");
  CHECK(grouped_integer(-0.2) == "0");
  CHECK(grouped_integer(1e21) == "1,000,000,000,000,000,000,000");
  CHECK(readable_count(69463.35) == "69,463");
  CHECK(readable_count(100) == "100");
  CHECK(readable_count(99.996) == "100");
  CHECK(readable_count(12.3456) == "12.35");
  CHECK(readable_count(9.99996) == "10.00");
  CHECK(readable_count(0.0043214) == "0.004321");
  CHECK(readable_count(0) == "0");
  CHECK(readable_count(1e-20) == "0.000000000000");
  CHECK(count_of(1, "node") == "1 node");
  CHECK(count_of(2, "node") == "2 nodes");
  CHECK(count_of(0, "GPU") == "0 GPUs");
  CHECK(count_of(1, "micro-batch", "micro-batches") == "1 micro-batch");
  CHECK(count_of(16, "micro-batch", "micro-batches") == "16 micro-batches");
}
