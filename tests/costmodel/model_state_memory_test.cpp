#include "costmodel/model_state_memory.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

using namespace parasim::cost;

TEST_CASE("mixed-precision AdamW without ZeRO: 16 bytes per parameter") {
  const double p = 1.0e9;
  const ModelStateBytes m = model_state_bytes(p, 8, 0, true);
  CHECK(m.weights.value == 2 * p);
  CHECK(m.gradients.value == 2 * p);
  CHECK(m.optimizer.value == 12 * p);
  CHECK(m.total().value == 16 * p);
  // dp does not matter at stage 0.
  CHECK(model_state_bytes(p, 1, 0, true).total() == m.total());
}

TEST_CASE("ZeRO stages 1, 2, 3 with dp = 8, mixed precision") {
  const double p = 3.0e9;
  const ModelStateBytes z1 = model_state_bytes(p, 8, 1, true);
  CHECK(z1.weights.value == 2 * p);
  CHECK(z1.gradients.value == 2 * p);
  CHECK(z1.optimizer.value == 12 * p / 8);
  CHECK(z1.total().value == 5.5 * p);
  const ModelStateBytes z2 = model_state_bytes(p, 8, 2, true);
  CHECK(z2.weights.value == 2 * p);
  CHECK(z2.gradients.value == 2 * p / 8);
  CHECK(z2.optimizer.value == 12 * p / 8);
  CHECK(z2.total().value == 3.75 * p);
  const ModelStateBytes z3 = model_state_bytes(p, 8, 3, true);
  CHECK(z3.weights.value == 2 * p / 8);
  CHECK(z3.gradients.value == 2 * p / 8);
  CHECK(z3.optimizer.value == 12 * p / 8);
  CHECK(z3.total().value == 2 * p);
}

TEST_CASE("fp32 AdamW: 4 + 4 + 8 bytes per parameter") {
  const double p = 1.0e9;
  const ModelStateBytes m = model_state_bytes(p, 4, 0, false);
  CHECK(m.weights.value == 4 * p);
  CHECK(m.gradients.value == 4 * p);
  CHECK(m.optimizer.value == 8 * p);
  CHECK(model_state_bytes(p, 4, 1, false).total().value == 10 * p);
  CHECK(model_state_bytes(p, 4, 2, false).total().value == 7 * p);
  CHECK(model_state_bytes(p, 4, 3, false).total().value == 4 * p);
}

TEST_CASE("ZeRO paper Figure 1: 7.5B parameters, Nd = 64") {
  // The paper prints 120 GB, 31.4 GB, 16.6 GB, 1.9 GB (GB = 1e9 B), rounded to 0.1 GB:
  // exact values are 120, 31.406, 16.641, 1.875. Check to half the last printed digit.
  const double psi = 7.5e9;
  const double half_digit = 0.05e9;
  CHECK(std::abs(model_state_bytes(psi, 64, 0, true).total().value - 120e9) <= half_digit);
  CHECK(std::abs(model_state_bytes(psi, 64, 1, true).total().value - 31.4e9) <= half_digit);
  CHECK(std::abs(model_state_bytes(psi, 64, 2, true).total().value - 16.6e9) <= half_digit);
  CHECK(std::abs(model_state_bytes(psi, 64, 3, true).total().value - 1.9e9) <= half_digit);
}

TEST_CASE("invalid inputs are rejected") {
  CHECK_THROWS_AS(model_state_bytes(1e9, 0, 0, true), std::invalid_argument);
  CHECK_THROWS_AS(model_state_bytes(1e9, 8, 4, true), std::invalid_argument);
  CHECK_THROWS_AS(model_state_bytes(1e9, 8, -1, true), std::invalid_argument);
  CHECK_THROWS_AS(model_state_bytes(-1, 8, 0, true), std::invalid_argument);
  CHECK(model_state_bytes(0, 8, 3, true).total().value == 0);
}

TEST_CASE("fp32 gradients under bf16: 2 + 4 + 12 = 18 bytes per parameter (Megatron main_grad)") {
  const double p = 1e9;
  const ModelStateBytes m = model_state_bytes(p, 8, 0, true, true);
  CHECK(m.gradients.value == 4 * p);
  CHECK(m.total().value == 18 * p);
  CHECK(model_state_bytes(p, 8, 2, true, true).gradients.value == 4 * p / 8);
  // Pure fp32 training has fp32 gradients already.
  CHECK(model_state_bytes(p, 8, 0, false, true).total().value == 16 * p);
}
